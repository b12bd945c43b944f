package io.lastunit.shard.lane;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * A lane batch's connection, borrowed from the pool only when the batch first needs the
 * database. A batch that is answered entirely from the lane's cache (SOLD_OUT for a dry
 * bucket, a duplicate in the same batch) never touches the pool or the network. Lane-confined.
 */
final class LazyConnection implements AutoCloseable {
    private final DataSource dataSource;
    private Connection connection;

    LazyConnection(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    Connection get() throws SQLException {
        if (connection == null) {
            connection = dataSource.getConnection();
        }
        return connection;
    }

    boolean opened() {
        return connection != null;
    }

    void commit() throws SQLException {
        if (connection != null) {
            connection.commit();
        }
    }

    void rollbackQuietly() {
        if (connection != null) {
            try {
                connection.rollback();
            } catch (SQLException ignored) {
                // the connection is broken; the pool evicts it
            }
        }
    }

    @Override
    public void close() throws SQLException {
        if (connection != null) {
            connection.close();
        }
    }
}
