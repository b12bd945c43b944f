package io.lastunit.shard.store;

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
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
 * <p><b>Fencing.</b> The lock lives as long as its session, so a database restart, a failover or a
 * cut connection ends it. Two things keep a node that lost it from writing:
 * <ul>
 *   <li>{@link #fenceSql()} is every pooled connection's first statement: it fails unless the lock
 *       is held by this owner's own session (named by {@code applicationName}, unique per node
 *       start), so no connection opened after the loss can write;</li>
 *   <li>the watch ({@link #watch}) asks every {@code interval} whether the session still holds the
 *       lock; when it does not, it opens a new session and takes the lock again if it is free
 *       ({@link State#OWNED} again: the node writes on), or, when another session holds it,
 *       becomes {@link State#LOST} for good and says so to its listener.</li>
 * </ul>
 * Connections opened before the loss die with the database restart that ended the session; after a
 * cut that ended only the owner's session, they live until they break or the watch notices.
 *
 * <p>Thread-safe: the watch runs on a daemon thread of its own; every use of the session is
 * synchronized.
 */
public final class DatabaseOwner implements AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(DatabaseOwner.class);
    /** The advisory lock's class: "LUOW" (lastunit owner). */
    static final int LOCK_CLASS = 0x4C554F57;
    /** How often a waiting node asks again. */
    private static final long POLL_MS = 200;

    /** Where the ownership stands. */
    public enum State {
        /** This node's session holds the lock. */
        OWNED,
        /** The session was lost; the watch is taking the lock again (nothing may be written meanwhile). */
        REGAINING,
        /** Another session took the lock: this node must not write again. Final. */
        LOST,
        /** Given up by {@link #close()}. Final. */
        CLOSED
    }

    private final String url;
    private final Properties properties;
    private final String applicationName;
    private Connection session;
    private State state = State.OWNED;
    private Thread watch;

    private DatabaseOwner(String url, Properties properties, Connection session) {
        this.url = url;
        this.properties = properties;
        this.applicationName = properties.getProperty("ApplicationName");
        this.session = session;
    }

    /**
     * Whether a holder may be ended so that a new node takes the database: given the holder's
     * session name, the session names to end (the holder's own and its pools'), or none.
     */
    @FunctionalInterface
    public interface TakeOver {
        TakeOver NEVER = holder -> List.of();

        List<String> sessionsToEnd(String holderApplicationName);
    }

    /** {@link #acquire(String, String, String, String, Duration, TakeOver)} that never takes over. */
    public static DatabaseOwner acquire(String url, String user, String password, String applicationName,
                                        Duration waitMax) throws IOException, InterruptedException {
        return acquire(url, user, password, applicationName, waitMax, TakeOver.NEVER);
    }

    /**
     * Takes the database's ownership, asking again every 200 ms for at most {@code waitMax}. When
     * another session holds it and {@code takeOver} names sessions to end (its node is known to be
     * gone: a paused or partitioned process whose ZooKeeper session expired), they are ended and
     * the lock taken at once; their node, should it come back, fails the fence.
     *
     * @param applicationName what this node's session is called in {@code pg_stat_activity}
     * @throws IOException when another session holds it after {@code waitMax}, or the database cannot be reached
     */
    public static DatabaseOwner acquire(String url, String user, String password, String applicationName,
                                        Duration waitMax, TakeOver takeOver) throws IOException, InterruptedException {
        Objects.requireNonNull(waitMax, "waitMax");
        Properties p = new Properties();
        p.setProperty("user", user);
        p.setProperty("password", password);
        p.setProperty("ApplicationName", applicationName);
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "10");
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
                    return new DatabaseOwner(url, p, c);
                }
                String holderName = holderApplicationName(c);
                List<String> toEnd = holderName == null ? List.of() : takeOver.sessionsToEnd(holderName);
                if (!toEnd.isEmpty()) {
                    int ended = endSessions(c, toEnd);
                    log.warn("took the shard database over from '{}', whose node is gone: ended {} session(s) named {}",
                            holderName, ended, toEnd);
                    if (tryLock(c)) {
                        return new DatabaseOwner(url, p, c);
                    }
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

    /** The application name of the session that holds the lock, or null (none, or not visible). */
    private static String holderApplicationName(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT a.application_name
                  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                 WHERE l.locktype = 'advisory' AND l.classid = ?::oid AND l.objid = 0 AND l.granted
                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())""")) {
            ps.setLong(1, Integer.toUnsignedLong(LOCK_CLASS));
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** Ends the sessions with these application names (not this one), waiting up to 5 s for each; how many. */
    private static int endSessions(Connection c, List<String> applicationNames) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))"
                + " FROM pg_stat_activity WHERE application_name = ANY(?) AND pid <> pg_backend_pid()")) {
            ps.setArray(1, c.createArrayOf("text", applicationNames.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
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
    public synchronized boolean held() {
        return heldBy(session);
    }

    private static boolean heldBy(Connection session) {
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

    public synchronized State state() {
        return state;
    }

    /** What this owner's session is called in {@code pg_stat_activity}. */
    public String applicationName() {
        return applicationName;
    }

    /**
     * The statement each pooled connection runs first: it fails (SQL state {@link #NOT_OWNER})
     * unless the ownership lock is held by this owner's session, so a node that lost the database
     * to another opens no connection that could write.
     */
    public String fenceSql() {
        String name = applicationName.replace("'", "''");
        return "DO $fence$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
                + " WHERE l.locktype = 'advisory' AND l.classid = " + Integer.toUnsignedLong(LOCK_CLASS)
                + "::oid AND l.objid = 0 AND l.granted AND a.application_name = '" + name + "')"
                + " THEN RAISE EXCEPTION USING ERRCODE = '" + NOT_OWNER + "', MESSAGE = 'this shard node does not"
                + " own the shard database now (its ownership session " + name + " does not hold the lock)'; END IF;"
                + " END $fence$";
    }

    /** The SQL state of {@link #fenceSql()}'s refusal. */
    public static final String NOT_OWNER = "LU002";

    /**
     * Starts the watch: every {@code interval} it checks the lock and takes it again after a lost
     * session; {@code onChange} hears every change of state (on the watch's thread). Once.
     */
    public synchronized void watch(Duration interval, java.util.function.Consumer<State> onChange) {
        if (watch != null || state == State.CLOSED) {
            throw new IllegalStateException("watch already started or owner closed (state=" + state + ")");
        }
        watch = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(interval.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
                State before;
                State after;
                synchronized (this) {
                    before = state;
                    if (state == State.CLOSED || state == State.LOST) {
                        return;
                    }
                    after = check();
                    state = after;
                }
                if (after != before) {
                    onChange.accept(after);
                }
            }
        }, "owner-watch-" + applicationName);
        watch.setDaemon(true);
        watch.start();
    }

    /** One look: still held, or taken again, or lost to another. Under the lock. */
    private State check() {
        if (heldBy(session)) {
            return State.OWNED;
        }
        closeQuietly(session);
        try {
            Connection c = DriverManager.getConnection(url, properties);
            c.setAutoCommit(true);
            session = c;
            if (tryLock(c)) {
                return State.OWNED;
            }
            // Our own earlier session may still be alive on the server (a blackholed or cut
            // connection the server has not noticed yet): it is ours, so end it and ask again.
            if (endOwnOlderSessions(c) > 0 && tryLock(c)) {
                return State.OWNED;
            }
            String holder = holder(c);
            log.error("shard database ownership lost: another session holds it ({}); this node writes no more",
                    holder);
            return State.LOST;
        } catch (SQLException e) {
            log.warn("shard database ownership: the session is gone and the database cannot be reached yet: {}",
                    e.getMessage());
            return State.REGAINING;
        }
    }

    /**
     * Ends this owner's earlier sessions (same application name, not this one), waiting up to 5 s each,
     * and says how many there were.
     */
    private int endOwnOlderSessions(Connection c) throws SQLException {
        int ended = endSessions(c, List.of(applicationName));
        if (ended > 0) {
            log.warn("shard database ownership: ended {} earlier session(s) of this node that still held the lock",
                    ended);
        }
        return ended;
    }

    /** Gives the ownership up (closing the session ends the lock). Idempotent. */
    @Override
    public void close() {
        Thread w;
        synchronized (this) {
            state = State.CLOSED;
            w = watch;
            closeQuietly(session);
        }
        if (w != null) {
            w.interrupt();
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // the session is gone either way, and with it the lock
        }
    }
}
