package io.lastunit.shard.store.local;

import static io.lastunit.shard.store.local.LocalServers.DB;
import static io.lastunit.shard.store.local.LocalServers.awaitRows;
import static io.lastunit.shard.store.local.LocalServers.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With a synchronous standby required, a commit on the primary does not return while the standby
 * is down, and returns once it is back, with the row on the standby. Shown by what PostgreSQL
 * says the committing backend is doing (waiting on {@code SyncRep}), not by how long it took.
 */
class SynchronousCommitFaultIT {
    @TempDir
    static Path state;
    private static StandbyPair pair;
    private static ExecutorService committer;

    @BeforeAll
    static void startPair() throws Exception {
        pair = StandbyPair.start(PostgresBinaries.find(), LocalServers.settings(state, false), BaseBackupMethod.AUTO);
        committer = Executors.newSingleThreadExecutor();
        execute(pair.primary(), "CREATE TABLE t (id bigint PRIMARY KEY)");
    }

    @AfterAll
    static void closePair() throws Exception {
        if (committer != null) {
            committer.shutdownNow();
        }
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void start_makesTheStandbySynchronous() throws Exception {
        assertThat(pair.primary().replicationState()).anySatisfy(r -> {
            assertThat(r.applicationName()).isEqualTo(StandbyPair.STANDBY_NAME);
            assertThat(r.streaming()).isTrue();
            assertThat(r.syncState()).isEqualTo("sync");
        });
    }

    @Test
    void commit_waitsWhileTheSynchronousStandbyIsDown_andReturnsOnceItIsBack() throws Exception {
        PostgresServer primary = pair.primary();
        PostgresServer standby = pair.standby();
        execute(primary, "INSERT INTO t VALUES (1)"); // returns: the standby is up
        standby.stop(ShutdownMode.FAST);

        try (Connection c = primary.connect(DB)) {
            long backend = backendPid(c);
            CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
                try (Statement s = c.createStatement()) {
                    s.execute("INSERT INTO t VALUES (2)");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, committer);

            LocalServers.await("backend " + backend + " to wait on SyncRep", () -> "SyncRep".equals(waitEvent(primary, backend)));
            assertThat(commit).as("a commit while the synchronous standby is down").isNotDone();

            standby.start();

            commit.get(TestTimeouts.scaled(LocalServers.WAIT).toMillis(), TimeUnit.MILLISECONDS);
        }
        awaitRows(standby, "t", List.of(1L, 2L));
        primary.awaitSynchronous(StandbyPair.STANDBY_NAME);
    }

    private static long backendPid(Connection c) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String waitEvent(PostgresServer server, long backend) throws Exception {
        try (Connection c = server.connect(DB);
             PreparedStatement ps = c.prepareStatement("SELECT wait_event FROM pg_stat_activity WHERE pid = ?")) {
            ps.setLong(1, backend);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
