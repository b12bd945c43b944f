package io.lastunit.shard.store.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** What the ITs of real local servers share: settings with scaled waits, a few SQL shortcuts, bounded waits. */
final class LocalServers {
    /** Every wait in these tests, before scaling. */
    static final Duration WAIT = Duration.ofSeconds(60);
    static final String DB = "postgres";

    private LocalServers() {
    }

    /** Test settings in {@code state}: the servers' own bound is the scaled test wait, in whole seconds. */
    static ServerSettings settings(Path state, boolean fsync) {
        long seconds = (TestTimeouts.scaled(WAIT).toMillis() + 999) / 1000;
        return ServerSettings.defaults().withStateDirectory(state).withFsync(fsync)
                .withOperationWait(Duration.ofSeconds(seconds));
    }

    static void execute(PostgresServer server, String sql) throws SQLException {
        try (Connection c = server.connect(DB); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static List<Long> ids(PostgresServer server, String table) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (Connection c = server.connect(DB); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id FROM " + table + " ORDER BY id")) {
            while (rs.next()) {
                ids.add(rs.getLong(1));
            }
        }
        return ids;
    }

    /** A check that may fail with a checked exception. */
    @FunctionalInterface
    interface Check {
        boolean holds() throws Exception;
    }

    /** Polls {@code check} until it holds; fails the test after the scaled {@link #WAIT}. */
    static void await(String what, Check check) throws Exception {
        long deadline = System.nanoTime() + TestTimeouts.scaled(WAIT).toNanos();
        while (!check.holds()) {
            assertThat(System.nanoTime() - deadline).as("waited %s for %s", TestTimeouts.scaled(WAIT), what).isNegative();
            Thread.sleep(20);
        }
    }

    /** Waits until the rows with {@code ids} are all in {@code table} on {@code server} (a standby replays after it flushes). */
    static void awaitRows(PostgresServer server, String table, Collection<Long> ids) throws Exception {
        await(ids.size() + " rows of " + table + " on " + server.describe(), () -> ids(server, table).containsAll(ids));
    }

    /** The postmaster and every process under it now. */
    static List<ProcessHandle> processes(PostgresServer server) {
        ProcessHandle postmaster = ProcessHandle.of(server.postmasterPid().orElseThrow()).orElseThrow();
        List<ProcessHandle> all = new ArrayList<>(postmaster.descendants().toList());
        all.add(postmaster);
        return all;
    }

    static boolean anyAlive(List<ProcessHandle> processes) {
        return processes.stream().anyMatch(OwnedTempDirectory::isAlive);
    }
}
