package io.lastunit.shard.store;

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Properties;

/**
 * The one shard node that owns a shard's database: a session-level advisory lock (class "LUOW",
 * key 0) held on a connection of its own, outside the pool, from before the migrations until the
 * node has stopped. A second node started on the same database waits a bounded time for it (a
 * node killed a moment ago leaves its session for PostgreSQL to end), then refuses to start,
 * naming the session that holds it. Two nodes on one database could not oversell (every write is
 * conditional and the database is the arbiter), but they would redo each other's batches without
 * end and each trust caches the other invalidates.
 *
 * <p>Not thread-safe; the node opens and closes it. Hazard: the lock lives as long as its session.
 * If the database restarts or the connection is cut, the lock is gone and this node does not know
 * until it is closed; taking it again, and stopping a node that lost it to another, is the failover
 * work of docs/durability.md's next step.
 */
public final class DatabaseOwner implements AutoCloseable {
    /** The advisory lock's class: "LUOW" (lastunit owner). */
    static final int LOCK_CLASS = 0x4C554F57;
    /** How often a waiting node asks again. */
    private static final long POLL_MS = 200;

    private final Connection session;

    private DatabaseOwner(Connection session) {
        this.session = session;
    }

    /**
     * Takes the database's ownership, asking again every 200 ms for at most {@code waitMax}.
     *
     * @param applicationName what this node's session is called in {@code pg_stat_activity}
     * @throws IOException when another session holds it after {@code waitMax}, or the database cannot be reached
     */
    public static DatabaseOwner acquire(String url, String user, String password, String applicationName,
                                        Duration waitMax) throws IOException, InterruptedException {
        Objects.requireNonNull(waitMax, "waitMax");
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("password", password);
        p.setProperty("ApplicationName", applicationName);
        p.setProperty("tcpKeepAlive", "true");
        Connection c;
        try {
            c = DriverManager.getConnection(url, p);
        } catch (SQLException e) {
            throw new IOException("cannot connect to the shard's database to take its ownership: " + e.getMessage(), e);
        }
        long deadline = System.nanoTime() + waitMax.toNanos();
        try {
            c.setAutoCommit(true);
            while (true) {
                if (tryLock(c)) {
                    return new DatabaseOwner(c);
                }
                if (System.nanoTime() - deadline >= 0) {
                    String holder = holder(c);
                    throw new IOException("another shard node owns this database (" + holder + "): a shard's"
                            + " database has one node at a time; stop that one first (waited "
                            + waitMax.toMillis() + " ms)");
                }
                Thread.sleep(POLL_MS);
            }
        } catch (SQLException e) {
            closeQuietly(c);
            throw new IOException("cannot take the shard database's ownership: " + e.getMessage(), e);
        } catch (IOException | InterruptedException | RuntimeException e) {
            closeQuietly(c);
            throw e;
        }
    }

    private static boolean tryLock(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?, 0)")) {
            ps.setInt(1, LOCK_CLASS);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    /** Who holds the lock, as pg_stat_activity names the session (pid, application, client). */
    private static String holder(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT a.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), 'local')
                  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                 WHERE l.locktype = 'advisory' AND l.classid = ?::oid AND l.objid = 0 AND l.granted
                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())""")) {
            ps.setLong(1, Integer.toUnsignedLong(LOCK_CLASS));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? "session pid " + rs.getInt(1) + ", application '" + rs.getString(2) + "' from "
                        + rs.getString(3) : "a session this role cannot see";
            }
        }
    }

    /** Whether this node's session still holds the lock (false once the session is gone). */
    public boolean held() {
        try (PreparedStatement ps = session.prepareStatement("""
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = ?::oid AND objid = 0
                   AND granted AND pid = pg_backend_pid()""")) {
            ps.setLong(1, Integer.toUnsignedLong(LOCK_CLASS));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) == 1;
            }
        } catch (SQLException e) {
            return false;
        }
    }

    /** Gives the ownership up (closing the session ends the lock). Idempotent. */
    @Override
    public void close() {
        closeQuietly(session);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // the session is gone either way, and with it the lock
        }
    }
}
