package io.lastunit.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BenchServerTest {

    @Test
    void anUnknownDatabaseKind_isRefused_namingTheKinds() {
        assertThatThrownBy(() -> BenchServer.start("pair-async"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("database=pair-async must be one of [server, pair-sync, pair-local]");
    }

    @Test
    void theConfiguredServer_startsNothing_andHasNoReplicationToReport() throws Exception {
        try (BenchServer server = BenchServer.start(BenchServer.SERVER)) {
            assertThat(server.kind()).isEqualTo("server");
            assertThat(server.replication()).isEmpty();
        }
    }
}
