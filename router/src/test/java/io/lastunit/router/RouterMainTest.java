package io.lastunit.router;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code lastunit router --help} and the router's refusals: one line, the right exit code, nothing started. */
class RouterMainTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) throws Exception {
        return RouterMain.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @ValueSource(strings = {"--help", "-h"})
    void help_printsUsageAndTheSettings_exit0(String flag) throws Exception {
        assertThat(run(flag)).isZero();

        assertThat(err.size()).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("Usage: lastunit router")
                .contains("Runs a router", "token")
                .containsPattern("zookeeper +LASTUNIT_ROUTER_ZOOKEEPER")
                .containsPattern("tokens +LASTUNIT_ROUTER_TOKENS")
                .containsPattern("regions +LASTUNIT_ROUTER_REGIONS")
                .containsPattern("shard-trust-certificate +LASTUNIT_ROUTER_SHARD_TRUST_CERTIFICATE")
                .contains("docs/operations.md#router-settings");
    }

    @Test
    void anArgument_isRefused_exit2() throws Exception {
        assertThat(run("--port", "7401")).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
                .startsWith("error: 'lastunit router' takes no argument");
    }

    @Test
    void start_withoutATokenGrant_isOneErrorLine_exit2() throws Exception {
        assertThat(run()).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8).lines().toList()).singleElement().asString()
                .isEqualTo("error: invalid router config: tokenGrants is empty (and no tokens-file): no caller could authenticate");
        assertThat(out.size()).isZero();
    }
}
