package io.lastunit.shard.store.local;

import java.io.IOException;
import java.sql.SQLException;

/**
 * A primary and one synchronous standby, started together for one local platform's databases: a
 * commit on the primary returns only once the standby has flushed it ({@code FIRST 1 (standby_a)},
 * {@code synchronous_commit = on}), so {@link #failover()} loses no committed transaction.
 * Clients reach whichever of the two takes writes through {@link #multiHostJdbcUrl}.
 *
 * <p>Thread-safe (the servers are; {@link #failover()} is synchronized). Hazards: while the
 * standby is down, every commit on the primary waits, without bound, for it to return (that is
 * the point; {@link PostgresServer#asynchronous()} gives up the guarantee instead). After
 * {@link #failover()} the promoted standby runs alone and commits without waiting for anyone: the
 * old primary is not made a standby again; an operator rebuilds one with
 * {@link PostgresServer#standbyOf} and {@link PostgresServer#requireSynchronousStandby}.
 */
public final class StandbyPair implements AutoCloseable {
    /** The primary's name, in logs and process titles. */
    public static final String PRIMARY_NAME = "primary";
    /** The standby's name: its application_name and replication slot. */
    public static final String STANDBY_NAME = "standby_a";
    /** pgjdbc's {@code connectTimeout} (seconds) in {@link #multiHostJdbcUrl}: per host, so a dead one costs little. */
    public static final int CONNECT_TIMEOUT_SECONDS = 2;
    /** pgjdbc's {@code loginTimeout} (seconds) in {@link #multiHostJdbcUrl}: the whole connection, all hosts. */
    public static final int LOGIN_TIMEOUT_SECONDS = 10;

    private final PostgresServer primary;
    private final PostgresServer standby;
    private boolean failedOver; // guarded by this

    private StandbyPair(PostgresServer primary, PostgresServer standby) {
        this.primary = primary;
        this.standby = standby;
    }

    /**
     * Makes and starts a primary, a standby of it (base backup by {@code method}), and makes the
     * standby synchronous; returns once the primary's {@code pg_stat_replication} shows it {@code sync}.
     */
    public static StandbyPair start(PostgresBinaries binaries, ServerSettings settings, BaseBackupMethod method)
            throws IOException, SQLException {
        PostgresServer primary = PostgresServer.initPrimary(PRIMARY_NAME, binaries, settings);
        PostgresServer standby = null;
        try {
            primary.start();
            standby = PostgresServer.standbyOf(primary, STANDBY_NAME, method);
            primary.requireSynchronousStandby("FIRST 1 (" + STANDBY_NAME + ")");
            primary.awaitSynchronous(STANDBY_NAME);
            return new StandbyPair(primary, standby);
        } catch (IOException | SQLException | RuntimeException e) {
            closeQuietly(standby, e);
            closeQuietly(primary, e);
            throw e;
        }
    }

    /** The server made primary; after {@link #failover()} it is dead. */
    public PostgresServer primary() {
        return primary;
    }

    /** The server made standby; after {@link #failover()} it is the primary. */
    public PostgresServer standby() {
        return standby;
    }

    /** The server that takes writes now. */
    public synchronized PostgresServer writable() {
        return failedOver ? standby : primary;
    }

    /** Creates database {@code name} on the server that takes writes; a standby gets it through WAL. */
    public void createDatabase(String name) throws IOException {
        writable().createDatabase(name);
    }

    /**
     * SIGKILL to the primary's postmaster, then the standby promoted; returns the promoted server.
     * Every transaction whose commit had returned on the primary is on it: the standby had flushed
     * each before the primary answered. Once only.
     */
    public synchronized PostgresServer failover() throws IOException {
        if (failedOver) {
            throw new IllegalStateException("failed over already: " + standby.describe() + " is the primary and has no standby");
        }
        primary.kill9();
        standby.promote();
        failedOver = true;
        return standby;
    }

    /**
     * {@code jdbc:postgresql://127.0.0.1:<primary>,127.0.0.1:<standby>/<database>?targetServerType=primary&...}:
     * pgjdbc tries the hosts in order and keeps the first that takes writes (it asks the server
     * whether it is read-only), so a new connection reaches the promoted standby after a failover.
     * pgjdbc remembers each host's kind for {@code hostRecheckSeconds} (10 s by default); a host it
     * remembers as a standby is still tried when no other one answers.
     */
    public String multiHostJdbcUrl(String database) {
        return "jdbc:postgresql://" + PostgresServer.HOST + ":" + primary.port() + "," + PostgresServer.HOST + ":"
                + standby.port() + "/" + database + "?targetServerType=primary&connectTimeout=" + CONNECT_TIMEOUT_SECONDS
                + "&loginTimeout=" + LOGIN_TIMEOUT_SECONDS;
    }

    /** Closes the standby and the primary: each stopped (immediate) and deleted. */
    @Override
    public void close() throws IOException {
        IOException failure = null;
        for (PostgresServer server : new PostgresServer[] {standby, primary}) {
            try {
                server.close();
            } catch (IOException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static void closeQuietly(PostgresServer server, Exception cause) {
        if (server == null) {
            return;
        }
        try {
            server.close();
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
