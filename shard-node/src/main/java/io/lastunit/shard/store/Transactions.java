package io.lastunit.shard.store;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Units of work on the shard's pool, each in a transaction of its own. Thread-safe.
 *
 * <p>Hazard: the pool's connections are not in autocommit; a connection given back with its
 * transaction open would carry it to the next borrower, so every failure rolls back here.
 */
public final class Transactions {
    /** Work on one connection; it may end its transaction itself (a rollback when it refuses). */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private final DataSource dataSource;

    public Transactions(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Runs {@code work} on a pooled connection and commits. If the work already rolled back or
     * committed, the commit has nothing left to do and sends nothing. On any failure the
     * transaction is rolled back (quietly) and the failure rethrown.
     */
    public <T> T inTransaction(Work<T> work) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            try {
                T result = work.run(c);
                c.commit();
                CommitWarnings.requireReplicated(c);
                return result;
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c);
                throw e;
            }
        }
    }

    /** A pooled connection for a caller that runs its own transaction on it, and closes it. */
    public Connection connection() throws SQLException {
        return dataSource.getConnection();
    }

    /** Rolls back, ignoring a failure: the connection is broken, and the pool evicts it. */
    public static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is broken; the pool evicts it
        }
    }
}
