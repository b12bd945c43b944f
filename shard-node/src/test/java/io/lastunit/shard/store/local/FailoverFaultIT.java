package io.lastunit.shard.store.local;

import static io.lastunit.shard.store.local.LocalServers.DB;
import static io.lastunit.shard.store.local.LocalServers.execute;
import static io.lastunit.shard.store.local.LocalServers.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A synchronous pair loses no committed row when its primary is killed mid-write and the standby
 * promoted: a writer commits rows one by one; each commit that returned is recorded (ok), the one
 * in flight at the kill is unknown and counts neither way. Every ok row is on the promoted
 * server, and a new connection through the multi-host URL reaches it and writes.
 */
class FailoverFaultIT {
    /** The writer stops by itself after this many commits, whatever happens. */
    private static final int WRITES_MAX = 100_000;
    /** Commits that must have returned before the primary is killed. */
    private static final int OK_BEFORE_KILL = 50;

    @TempDir
    Path state;

    @Test
    void failover_afterKill9_keepsEveryCommittedRow_andTheMultiHostUrlReachesThePromotedServer() throws Exception {
        // The SQL API's standby here, pg_basebackup's in SynchronousCommitFaultIT: both promote.
        try (StandbyPair pair = StandbyPair.start(PostgresBinaries.find(), LocalServers.settings(state, false),
                BaseBackupMethod.SQL_API)) {
            String url = pair.multiHostJdbcUrl(DB);
            assertThat(url).isEqualTo("jdbc:postgresql://127.0.0.1:" + pair.primary().port() + ",127.0.0.1:"
                    + pair.standby().port() + "/postgres?targetServerType=primary&connectTimeout=2&loginTimeout=10");
            assertThat(serverPort(url)).as("before the failover").isEqualTo(pair.primary().port());
            execute(pair.primary(), "CREATE TABLE t (id bigint PRIMARY KEY)");

            ConcurrentLinkedQueue<Long> ok = new ConcurrentLinkedQueue<>();
            AtomicLong inFlight = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> write(pair.primary(), ok, inFlight, stop));
            LocalServers.await(OK_BEFORE_KILL + " commits", () -> ok.size() >= OK_BEFORE_KILL || writer.isDone());
            assertThat(writer).as("the writer stopped before the kill").isNotDone();

            PostgresServer promoted = pair.failover();
            stop.set(true);
            writer.get(TestTimeouts.scaled(LocalServers.WAIT).toMillis(), TimeUnit.MILLISECONDS);

            assertThat(promoted).isSameAs(pair.writable()).isSameAs(pair.standby());
            assertThat(promoted.inRecovery()).isFalse();
            List<Long> found = ids(promoted, "t");
            assertThat(found).as("every commit that returned on the old primary").containsAll(ok);
            assertThat(found).as("nothing that was never written")
                    .allSatisfy(id -> assertThat(ok.contains(id) || id == inFlight.get()).isTrue());

            assertThat(serverPort(url)).as("a new connection after the failover").isEqualTo(promoted.port());
            try (Connection c = connect(url); Statement s = c.createStatement()) {
                s.execute("INSERT INTO t VALUES (-1)"); // the promoted server commits alone
            }
            assertThat(ids(promoted, "t")).contains(-1L);
        }
    }

    /** Commits ids 1, 2, ... each in its own transaction until the primary fails or {@code stop}. */
    private static void write(PostgresServer primary, ConcurrentLinkedQueue<Long> ok, AtomicLong inFlight, AtomicBoolean stop) {
        try (Connection c = primary.connect(DB); Statement s = c.createStatement()) {
            for (long id = 1; id <= WRITES_MAX && !stop.get(); id++) {
                inFlight.set(id);
                s.execute("INSERT INTO t VALUES (" + id + ")");
                ok.add(id);
            }
        } catch (SQLException killed) {
            // the primary went away: the row in flight is unknown
        }
    }

    private static int serverPort(String url) throws SQLException {
        try (Connection c = connect(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT inet_server_port(), pg_is_in_recovery()")) {
            rs.next();
            assertThat(rs.getBoolean(2)).as("targetServerType=primary reached a standby").isFalse();
            return rs.getInt(1);
        }
    }

    private static Connection connect(String url) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", PostgresServer.SUPERUSER);
        return DriverManager.getConnection(url, p);
    }
}
