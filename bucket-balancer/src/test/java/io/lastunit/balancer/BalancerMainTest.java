package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code lastunit balancer --help}: usage and every setting, exit 0, without reaching for ZooKeeper. */
class BalancerMainTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) throws Exception {
        return BalancerMain.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @ValueSource(strings = {"--help", "-h"})
    void help_printsUsageAndTheSettings_exit0(String flag) throws Exception {
        assertThat(run(flag)).isZero();

        assertThat(err.size()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("Usage: lastunit balancer")
                .contains("Runs a bucket-balancer")
                .containsPattern("zookeeper +LASTUNIT_BALANCER_ZOOKEEPER")
                .containsPattern("interval-ms +LASTUNIT_BALANCER_INTERVAL_MS")
                .containsPattern("pull-queue-max +LASTUNIT_BALANCER_PULL_QUEUE_MAX")
                .containsPattern("tls-key +LASTUNIT_BALANCER_TLS_KEY")
                .contains("docs/operations.md#balancer-settings");
    }

    @Test
    void anArgument_isRefused_exit2() throws Exception {
        assertThat(run("serve")).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
                .startsWith("error: 'lastunit balancer' takes no argument");
    }
}
