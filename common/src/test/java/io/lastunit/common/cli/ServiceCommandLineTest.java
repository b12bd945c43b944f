package io.lastunit.common.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ServiceCommandLineTest {

    /** Stands in for a {@code @ConfigurationProperties} class. */
    static final class SampleProperties {
        private static final int NOT_A_SETTING = 1;
        private String zookeeper = "";
        private int topologyStaleMaxMs = 1;
        private String computed = "";

        public void setZookeeper(String v) { this.zookeeper = v; }
        public void setTopologyStaleMaxMs(int v) { this.topologyStaleMaxMs = v; }
    }

    private static final ServiceCommandLine CLI = new ServiceCommandLine("lastunit sample",
            List.of("Runs a sample."), "lastunit.sample", SampleProperties.class, "docs/operations.md#sample");

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int parse(String... args) {
        return CLI.parse(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void noArguments_start() {
        assertThat(parse()).isEqualTo(ServiceCommandLine.START);
        assertThat(out.size() + err.size()).isZero();
    }

    @Test
    void help_listsEverySettingWithItsEnvironmentVariable_andWhereItIsDocumented() {
        assertThat(parse("--help")).isZero();
        String help = out.toString(StandardCharsets.UTF_8);
        assertThat(help).startsWith("Usage: lastunit sample [-h]").contains("Runs a sample.")
                .containsPattern("zookeeper +LASTUNIT_SAMPLE_ZOOKEEPER")
                .containsPattern("topology-stale-max-ms +LASTUNIT_SAMPLE_TOPOLOGY_STALE_MAX_MS")
                .contains("-Dlastunit.sample.port=", "MICRONAUT_CONFIG_FILES", "docs/operations.md#sample", "143")
                .doesNotContain("computed", "NOT_A_SETTING", "not-a-setting");
        assertThat(err.size()).isZero();
    }

    @Test
    void shortHelp_isTheSame() {
        assertThat(parse("-h")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(CLI.usage());
    }

    @Test
    void anyOtherArgument_isOneErrorLine_exit2() {
        assertThat(parse("--port", "7401")).isEqualTo(ServiceCommandLine.USAGE);
        String e = err.toString(StandardCharsets.UTF_8);
        assertThat(e.lines().toList()).singleElement().asString().startsWith("error: 'lastunit sample' takes no argument")
                .contains("[--port, 7401]", "lastunit.sample", "LASTUNIT_SAMPLE_*", "lastunit sample --help");
    }

    @Test
    void startFailed_aBadSetting_isItsMessage_exit2() {
        Exception wrapped = new IllegalStateException("Error instantiating bean\n\nMessage: ...",
                new IllegalArgumentException("invalid sample config: port=-1 is outside [0, 65535]"));

        assertThat(CLI.startFailed(wrapped, new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8))
                .isEqualTo("error: invalid sample config: port=-1 is outside [0, 65535]" + System.lineSeparator());
    }

    @Test
    void deepestMessage_isTheLastMessageLineOfMicronauts() {
        String micronaut = "Failed to inject value for parameter [port]\n\nMessage: Failed to inject value for parameter"
                + " [port]\n\nMessage: Error resolving property value [lastunit.sample.port]. Unable to convert value [abc]"
                + " to target type [int]\nPath Taken: \n@j.i.Singleton ...";

        assertThat(ServiceCommandLine.deepestMessage(micronaut)).isEqualTo("Error resolving property value"
                + " [lastunit.sample.port]. Unable to convert value [abc] to target type [int]");
        assertThat(ServiceCommandLine.deepestMessage("one line")).isEqualTo("one line");
    }

    @Test
    void startFailed_anythingElse_namesTheRootCause_exit1() {
        Exception e = new IllegalStateException("start failed", new java.io.IOException("Address in use\nmore"));

        assertThat(CLI.startFailed(e, new PrintStream(err, true, StandardCharsets.UTF_8))).isEqualTo(1);

        assertThat(err.toString(StandardCharsets.UTF_8).lines().toList()).singleElement()
                .isEqualTo("error: 'lastunit sample' did not start: IOException: Address in use");
    }

    @Test
    void help_wrapsItsParagraphs() {
        assertThat(CLI.usage().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(ServiceCommandLine.WIDTH));
        assertThat(ServiceCommandLine.wrap("a b")).isEqualTo("a b");
        assertThat(ServiceCommandLine.wrap("x".repeat(100) + " y")).isEqualTo("x".repeat(100) + "\ny");
    }

    @Test
    void kebab_splitsCamelCase() {
        assertThat(ServiceCommandLine.kebab("jdbcUrl")).isEqualTo("jdbc-url");
        assertThat(ServiceCommandLine.kebab("holdTtlMinMs")).isEqualTo("hold-ttl-min-ms");
        assertThat(ServiceCommandLine.kebab("id")).isEqualTo("id");
    }
}
