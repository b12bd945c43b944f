package io.lastunit.shard.lane;

import io.lastunit.shard.store.CommitWarnings;
import io.lastunit.shard.store.Transactions;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A lane batch's connection, borrowed from the pool only when the batch first needs the
 * database. A batch that is answered entirely from the lane's cache (SOLD_OUT for a dry
 * bucket, a duplicate in the same batch) never touches the pool or the network. Lane-confined.
 */
final class LazyConnection implements AutoCloseable {
    private final Transactions transactions;
    private Connection connection;

    LazyConnection(Transactions transactions) {
        this.transactions = transactions;
    }

    Connection get() throws SQLException {
        if (connection == null) {
            connection = transactions.connection();
        }
        return connection;
    }

    boolean opened() {
        return connection != null;
    }

    void commit() throws SQLException {
        if (connection != null) {
            connection.commit();
            CommitWarnings.requireReplicated(connection);
        }
    }

    void rollbackQuietly() {
        if (connection != null) {
            Transactions.rollbackQuietly(connection);
        }
    }

    @Override
    public void close() throws SQLException {
        if (connection != null) {
            connection.close();
        }
    }
}
