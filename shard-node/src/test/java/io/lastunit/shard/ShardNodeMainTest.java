package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code lastunit serve --help}: usage and every setting, exit 0, and nothing started. */
class ShardNodeMainTest {

    @ParameterizedTest
    @ValueSource(strings = {"--help", "-h"})
    void help_printsUsageAndTheSettings_exit0(String flag) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        int code = ShardNodeMain.run(List.of("serve", flag), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(code).isZero();
        assertThat(err.size()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("Usage: lastunit serve")
                .contains("Runs a shard node")
                .containsPattern("jdbc-url +LASTUNIT_SHARD_JDBC_URL")
                .containsPattern("embedded +LASTUNIT_SHARD_EMBEDDED")
                .containsPattern("zookeeper +LASTUNIT_SHARD_ZOOKEEPER")
                .containsPattern("batch-interval-micros +LASTUNIT_SHARD_BATCH_INTERVAL_MICROS")
                .contains("docs/operations.md#configuration");
    }

    @ParameterizedTest
    @ValueSource(strings = {"--port", "demo"})
    void anotherArgument_isRefused_exit2(String arg) throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        int code = ShardNodeMain.run(List.of("serve", arg), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("error: 'lastunit serve' takes no argument");
    }
}
