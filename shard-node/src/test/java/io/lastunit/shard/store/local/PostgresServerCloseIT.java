package io.lastunit.shard.store.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** close() stops every process of the server and deletes its files, once, and later closes do nothing. */
class PostgresServerCloseIT {
    @TempDir
    Path state;

    @Test
    void close_stopsThePostmasterAndItsChildren_andDeletesTheDirectory() throws Exception {
        PostgresServer server = PostgresServer.initPrimary("closing", PostgresBinaries.find(), LocalServers.settings(state, false));
        server.start();
        LocalServers.execute(server, "SELECT 1");
        List<ProcessHandle> processes = LocalServers.processes(server);
        Path dir = server.directory();
        assertThat(processes).hasSizeGreaterThan(1);

        server.close();

        assertThat(LocalServers.anyAlive(processes)).as("a process of the server still runs").isFalse();
        assertThat(dir).doesNotExist();
        server.close(); // idempotent
        assertThatThrownBy(server::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
}
