package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
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
                .containsPattern("retention-holds-after-ms +LASTUNIT_SHARD_RETENTION_HOLDS_AFTER_MS")
                .contains("docs/operations.md#configuration");
    }

    @Test
    void start_withoutADatabase_isOneErrorLineNamingBothSettings_exit2() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        int code = ShardNodeMain.run(List.of("serve"), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
                .startsWith("error: invalid shard config: no database")
                .contains("lastunit.shard.jdbc-url", "LASTUNIT_SHARD_JDBC_URL", "lastunit.shard.embedded=true",
                        "LASTUNIT_SHARD_EMBEDDED=true");
    }

    @Test
    void start_aValueThatDoesNotConvert_isOneErrorLineNamingIt_exit2() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setProperty("lastunit.shard.port", "abc");
        System.setProperty("lastunit.shard.jdbc-url", "jdbc:postgresql://127.0.0.1:1/never-reached");
        int code;
        try {
            code = ShardNodeMain.run(List.of(), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
        } finally {
            System.clearProperty("lastunit.shard.port");
            System.clearProperty("lastunit.shard.jdbc-url");
        }

        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
                .startsWith("error: Error resolving property value [lastunit.shard.port]. Unable to convert value [abc]");
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
