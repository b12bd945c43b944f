package io.lastunit.shard.store.local;

import static io.lastunit.shard.store.local.LocalServers.DB;
import static io.lastunit.shard.store.local.LocalServers.execute;
import static io.lastunit.shard.store.local.LocalServers.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One real server, fsync on as by default, through every way it can stop: each test commits rows,
 * stops or kills the server, starts it again, and finds every committed row, on the same port.
 */
class PostgresServerIT {
    private static final AtomicLong NEXT_ID = new AtomicLong();

    @TempDir
    static Path state;
    private static PostgresServer server;

    @BeforeAll
    static void startServer() throws Exception {
        server = PostgresServer.initPrimary("restarts", PostgresBinaries.find(), LocalServers.settings(state, true));
        server.start();
        execute(server, "CREATE TABLE t (id bigint PRIMARY KEY)");
    }

    @AfterAll
    static void closeServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void initPrimary_writesItsSettingsToTheConfigurationFile() throws Exception {
        assertThat(show("fsync")).isEqualTo("on");
        assertThat(show("full_page_writes")).isEqualTo("on");
        assertThat(show("synchronous_commit")).isEqualTo("on");
        assertThat(show("listen_addresses")).isEqualTo("127.0.0.1");
        assertThat(show("max_connections")).isEqualTo("500");
        assertThat(show("wal_level")).isEqualTo("replica");
        assertThat(show("hot_standby")).isEqualTo("on");
        assertThat(show("unix_socket_directories")).isEqualTo(server.dataDirectory().toString());
        assertThat(show("port")).isEqualTo(Integer.toString(server.port()));
        assertThat(Files.readString(server.dataDirectory().resolve("postgresql.conf")))
                .contains("port = " + server.port(), "wal_level = replica");
        assertThat(server.inRecovery()).isFalse();
    }

    @Test
    void stopFast_thenStart_keepsCommittedRows_onTheSamePort() throws Exception {
        List<Long> committed = commitRows(3);
        long before = server.postmasterPid().orElseThrow();

        server.restart(ShutdownMode.FAST);

        assertThat(server.postmasterPid().orElseThrow()).isNotEqualTo(before);
        assertThat(ids(server, "t")).containsAll(committed);
    }

    @Test
    void stopSmart_withNoClients_thenStart_keepsCommittedRows() throws Exception {
        List<Long> committed = commitRows(3);

        server.stop(ShutdownMode.SMART);
        assertThat(server.isRunning()).isFalse();
        server.start();

        assertThat(ids(server, "t")).containsAll(committed);
    }

    @Test
    void stopImmediate_thenStart_runsCrashRecovery_andKeepsCommittedRows() throws Exception {
        List<Long> committed = commitRows(3);
        long logBefore = Files.size(server.serverLog());

        server.stop(ShutdownMode.IMMEDIATE);
        server.start();

        assertThat(ids(server, "t")).containsAll(committed);
        assertThat(logSince(logBefore)).contains("automatic recovery in progress");
    }

    @Test
    void kill9_thenStart_runsCrashRecovery_andKeepsCommittedRows() throws Exception {
        List<Long> committed = commitRows(3);
        List<ProcessHandle> processes = LocalServers.processes(server);
        long logBefore = Files.size(server.serverLog());

        server.kill9();

        assertThat(LocalServers.anyAlive(processes)).as("postmaster and children gone").isFalse();
        assertThat(server.isRunning()).isFalse();
        server.start();
        assertThat(ids(server, "t")).containsAll(committed);
        assertThat(logSince(logBefore)).contains("automatic recovery in progress");
    }

    @Test
    void stop_whenNotRunning_isRefusedNamingTheServer() throws Exception {
        server.stop(ShutdownMode.FAST);
        try {
            assertThatThrownBy(() -> server.stop(ShutdownMode.FAST))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("port " + server.port()).hasMessageContaining("does not run");
        } finally {
            server.start();
        }
    }

    private static List<Long> commitRows(int n) throws Exception {
        List<Long> ids = new java.util.ArrayList<>();
        try (Connection c = server.connect(DB); Statement s = c.createStatement()) {
            for (int i = 0; i < n; i++) {
                long id = NEXT_ID.incrementAndGet();
                s.execute("INSERT INTO t VALUES (" + id + ")"); // autocommit: returned means committed
                ids.add(id);
            }
        }
        return ids;
    }

    private static String show(String setting) throws Exception {
        try (Connection c = server.connect(DB); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW " + setting)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static String logSince(long offset) {
        return FileTail.since(server.serverLog(), offset);
    }
}
