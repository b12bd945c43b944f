package io.lastunit.shard.store;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A real PostgreSQL server unpacked from Maven and started in a temporary directory, for
 * running lastunit with nothing installed (`./lastunit demo`, a node with no JDBC URL). Its
 * data is gone when it closes. Listens on 127.0.0.1 only. Thread-safe.
 */
public final class EmbeddedDatabase implements AutoCloseable {
    private final EmbeddedPostgres postgres;

    private EmbeddedDatabase(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    public static EmbeddedDatabase start() throws IOException {
        return start(true);
    }

    /**
     * @param shutdownHook whether the library stops the server from its own JVM shutdown hook;
     *                     a caller whose hook must stop services before their database passes
     *                     false and closes this itself (JVM hooks run concurrently)
     */
    public static EmbeddedDatabase start(boolean shutdownHook) throws IOException {
        return new EmbeddedDatabase(EmbeddedPostgres.builder()
                .setServerConfig("listen_addresses", "127.0.0.1")
                .setServerConfig("max_connections", "500")
                // The library's default is synchronous_commit=off; lastunit answers RESERVED only
                // for a hold that survives a crash, here as in production.
                .setServerConfig("synchronous_commit", "on")
                .setRegisterShutdownHook(shutdownHook)
                .start());
    }

    /** Creates a database (if absent) and returns how to reach it. */
    public Target createDatabase(String name) throws SQLException {
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            var rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + name.replace("'", "''") + "'");
            if (!rs.next()) {
                s.execute("CREATE DATABASE \"" + name.replace("\"", "\"\"") + "\"");
            }
        }
        return new Target("jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/" + name, "postgres", "");
    }

    /** A JDBC URL with its user and password. */
    public record Target(String url, String user, String password) {
    }

    public int port() {
        return postgres.getPort();
    }

    @Override
    public void close() throws IOException {
        postgres.close();
    }
}
