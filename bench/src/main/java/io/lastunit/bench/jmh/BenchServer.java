package io.lastunit.bench.jmh;

import io.lastunit.shard.store.local.BaseBackupMethod;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.lastunit.shard.store.local.PostgresServer;
import io.lastunit.shard.store.local.ServerSettings;
import io.lastunit.shard.store.local.StandbyPair;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;

/**
 * The PostgreSQL a benchmark trial creates its databases on, chosen by the benches'
 * {@code database} parameter:
 *
 * <ul>
 *   <li>{@value #SERVER}: the server named by {@code LASTUNIT_BENCH_JDBC_URL} ({@link BenchDatabase.Server}),
 *       as the standard suite has always run.</li>
 *   <li>{@value #PAIR_SYNC}: an embedded primary with a streaming synchronous standby
 *       ({@link StandbyPair}, {@code FIRST 1 (standby_a)}), started for the trial on 127.0.0.1 with
 *       fsync on: a commit returns once the standby has flushed it.</li>
 *   <li>{@value #PAIR_LOCAL}: the same kind of pair, started the same way, but the trial's databases
 *       have {@code synchronous_commit = local} ({@code ALTER DATABASE … SET}): a commit returns once
 *       the primary flushed it, without waiting for the standby.</li>
 * </ul>
 *
 * <p>Why {@code synchronous_commit = local} for "without the standby", rather than a server
 * without one or the pair switched to asynchronous: the binaries, the settings, the disk and the
 * work on the machine stay the same — the standby still receives, writes and flushes every WAL
 * record on the same disk and cores — and only the commit's wait for the standby's flush is
 * taken out of the path. It is a setting of the trial's own databases, so nothing server-wide
 * changes between trials (each trial starts its own pair anyway).
 *
 * <p>Lifecycle: {@link #start} once per trial, {@link #close} in the trial's tear-down (stops both
 * servers, immediate, and deletes their files; a JVM killed outright leaves them to the next
 * start's clean-up in the same state directory). Every wait of the pair is bounded by
 * {@link ServerSettings#OPERATION_WAIT}. Set up and torn down by one thread; {@link #close} is
 * idempotent and also runs from a JVM shutdown hook.
 * Hazard: while a pair's standby is down, commits wait for it without bound; nothing here stops it.
 */
final class BenchServer implements AutoCloseable {
    static final String SERVER = "server";
    static final String PAIR_SYNC = "pair-sync";
    static final String PAIR_LOCAL = "pair-local";
    static final List<String> KINDS = List.of(SERVER, PAIR_SYNC, PAIR_LOCAL);
    /** The database of the pair's primary that databases are created from (pgjdbc needs one to connect to). */
    private static final String ADMIN_DATABASE = "postgres";
    /** How often the standby's lag is sampled while a trial runs. */
    static final long SAMPLE_MS = 250;

    private final String kind;
    private final StandbyPair pair;
    private final BenchDatabase.Server server;
    /** Stops the pair if the fork exits without the trial's tear-down (an exception in JMH's own code, Ctrl-C). */
    private final Thread shutdownHook;
    /** Samples pg_stat_replication under load; null without a pair. */
    private final LagSampler sampler;
    private boolean closed;

    private BenchServer(String kind, StandbyPair pair, BenchDatabase.Server server) {
        this.kind = kind;
        this.pair = pair;
        this.server = server;
        this.sampler = pair == null ? null : new LagSampler(() -> pair.primary().connect(ADMIN_DATABASE), SAMPLE_MS);
        this.shutdownHook = pair == null ? null : new Thread(this::closeQuietly, "bench-standby-pair-cleanup");
        if (shutdownHook != null) {
            Runtime.getRuntime().addShutdownHook(shutdownHook);
        }
    }

    /** Starts what {@code kind} names (one of {@link #KINDS}); an unknown kind is refused. */
    static BenchServer start(String kind) throws IOException, SQLException {
        if (!KINDS.contains(kind)) {
            throw new IllegalArgumentException("database=" + kind + " must be one of " + KINDS);
        }
        if (kind.equals(SERVER)) {
            return new BenchServer(kind, null, BenchDatabase.Server.fromEnvironment());
        }
        long t0 = System.nanoTime();
        StandbyPair pair = StandbyPair.start(PostgresBinaries.find(), ServerSettings.defaults().withFsync(true),
                BaseBackupMethod.SQL_API);
        System.out.printf("%n[standby] database=%s: primary on 127.0.0.1:%d, synchronous standby on 127.0.0.1:%d,"
                        + " fsync on, started in %d ms%n", kind, pair.primary().port(), pair.standby().port(),
                (System.nanoTime() - t0) / 1_000_000);
        return new BenchServer(kind, pair,
                new BenchDatabase.Server(pair.multiHostJdbcUrl(ADMIN_DATABASE), PostgresServer.SUPERUSER, ""));
    }

    String kind() {
        return kind;
    }

    /**
     * A fresh database for the trial ({@link BenchDatabase#create}); on {@value #PAIR_LOCAL} with
     * {@code synchronous_commit = local}. Prints the setting a new session of it sees.
     */
    BenchDatabase create(String label) throws SQLException {
        BenchDatabase db = BenchDatabase.create(server, label);
        try {
            if (kind.equals(PAIR_LOCAL)) {
                try (Connection c = server.connect(); Statement st = c.createStatement()) {
                    st.execute("ALTER DATABASE " + BenchDatabase.quote(db.name()) + " SET synchronous_commit = local");
                }
            }
            if (pair != null) {
                System.out.printf("[standby] database=%s %s: synchronous_commit=%s synchronous_standby_names='%s'%n",
                        kind, db.name(), show(db, "synchronous_commit"), show(db, "synchronous_standby_names"));
            }
            return db;
        } catch (SQLException | RuntimeException e) {
            db.close();
            throw e;
        }
    }

    private String show(BenchDatabase db, String setting) throws SQLException {
        try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
             Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW " + setting)) {
            return rs.next() ? rs.getString(1) : "?";
        }
    }

    /**
     * One line of the primary's {@code pg_stat_replication} now (state, sync state, write / flush /
     * replay lag in ms), or "" without a pair. PostgreSQL clears the lags (null) once the standby
     * has caught up and no new WAL came, so after a load stops they soon read null: the sampler's
     * figures ({@link #printReplication}) are the ones taken under load.
     */
    String replication() {
        if (pair == null) {
            return "";
        }
        try (Connection c = pair.primary().connect(ADMIN_DATABASE); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(REPLICATION_QUERY)) {
            StringBuilder sb = new StringBuilder();
            while (rs.next()) {
                sb.append(String.format("standby=%s state=%s sync_state=%s write_lag_ms=%s flush_lag_ms=%s replay_lag_ms=%s ",
                        rs.getString(1), rs.getString(2), rs.getString(3), ms(rs, 4), ms(rs, 5), ms(rs, 6)));
            }
            return sb.length() == 0 ? "no standby in pg_stat_replication" : sb.toString().trim();
        } catch (SQLException e) {
            return "pg_stat_replication unreadable: " + e.getMessage();
        }
    }

    private static final String REPLICATION_QUERY = "SELECT application_name, state, sync_state,"
            + " extract(epoch FROM write_lag) * 1000, extract(epoch FROM flush_lag) * 1000,"
            + " extract(epoch FROM replay_lag) * 1000 FROM pg_stat_replication ORDER BY application_name";

    private static String ms(ResultSet rs, int column) throws SQLException {
        double v = rs.getDouble(column);
        return rs.wasNull() ? "null" : String.format("%.3f", v);
    }

    /**
     * With a pair: prints {@link #replication()} and what the sampler saw since the last call
     * (samples of the standby's write and flush lag every {@value #SAMPLE_MS} ms while the load ran:
     * how many were non-null, their mean and max), then starts a new window. Called from an
     * iteration's tear-down; the sampler's one query every {@value #SAMPLE_MS} ms on its own
     * connection is the same load on both sides of a comparison.
     */
    void printReplication(String tag) {
        if (pair == null) {
            return;
        }
        LagSampler.Window w = sampler.take();
        System.out.println("[standby] database=" + kind + " " + tag + " " + replication() + String.format(Locale.ROOT,
                " sampled=%d with_lag=%d write_lag_mean_ms=%.3f flush_lag_mean_ms=%.3f flush_lag_max_ms=%.3f",
                w.samples(), w.withLag(), w.writeMeanMs(), w.flushMeanMs(), w.flushMaxMs()));
    }

    /** Stops and deletes the pair, if any. Idempotent. */
    @Override
    public void close() throws IOException {
        synchronized (this) {
            if (closed || pair == null) {
                closed = true;
                return;
            }
            closed = true;
        }
        sampler.close();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // called from the hook itself, or while the JVM exits: the hook is this call
        }
        pair.close();
    }

    /**
     * Closes a trial's database, then the server it is on, the server even when the database's
     * close failed; either may be null.
     */
    static void close(BenchDatabase db, BenchServer server) throws IOException {
        try {
            if (db != null) {
                db.close();
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException | RuntimeException e) {
            System.err.println("[standby] could not stop the standby pair: " + e.getMessage());
        }
    }
}
