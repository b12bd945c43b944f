package io.lastunit.bench.load;

import io.lastunit.admin.cli.CliError;
import io.lastunit.admin.cli.JdbcUrls;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.shard.ShardConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The shards' PostgreSQL databases for a local platform of the load generator: one database per
 * shard ({@code <prefix><shard id>}), created when absent, in an embedded PostgreSQL started here
 * (gone on close) or on a server given by a JDBC URL (kept). Started like the demo's (cell-admin's
 * {@code PlatformDatabases}, which is package-private): 127.0.0.1 only, 200 connections, no
 * library shutdown hook (the run's own hook stops the shard nodes first). Not thread-safe.
 */
final class BenchDatabases implements AutoCloseable {
    private final EmbeddedPostgres embedded;
    private final String adminUrl;
    private final String user;
    private final String password;
    private final String prefix;

    private BenchDatabases(EmbeddedPostgres embedded, String adminUrl, String user, String password, String prefix) {
        this.embedded = embedded;
        this.adminUrl = adminUrl;
        this.user = user;
        this.password = password;
        this.prefix = prefix;
    }

    static BenchDatabases embedded(String prefix) {
        try {
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setServerConfig("listen_addresses", "127.0.0.1")
                    .setServerConfig("max_connections", "200")
                    .setRegisterShutdownHook(false)
                    .start();
            return new BenchDatabases(pg, null, null, null, prefix);
        } catch (IOException | RuntimeException e) {
            throw CliError.failed("could not start the embedded PostgreSQL: " + e.getMessage()
                    + " (or give a server with --jdbc-url)");
        }
    }

    /** Connects once now, so that a wrong URL or password fails before anything starts (exit 3). */
    static BenchDatabases external(String adminUrl, String user, String password, String prefix) {
        try (Connection c = connect(adminUrl, user, password)) {
            c.isValid(5);
        } catch (SQLException e) {
            throw CliError.unreachable("cannot connect to PostgreSQL at " + adminUrl + " as " + user + ": "
                    + e.getMessage());
        }
        return new BenchDatabases(null, adminUrl, user, password, prefix);
    }

    private static Connection connect(String url, String user, String password) throws SQLException {
        DriverManager.setLoginTimeout(10);
        return DriverManager.getConnection(url, user, password);
    }

    LocalPlatform.ShardDatabases forShards() {
        return shardId -> {
            String name = JdbcUrls.databaseFor(prefix, shardId);
            if (embedded != null) {
                try (Connection c = embedded.getPostgresDatabase().getConnection()) {
                    createIfAbsent(c, name);
                }
                return new ShardConfig.Jdbc("jdbc:postgresql://127.0.0.1:" + embedded.getPort() + "/" + name,
                        "postgres", "", 0);
            }
            try (Connection c = connect(adminUrl, user, password)) {
                createIfAbsent(c, name);
            }
            return new ShardConfig.Jdbc(JdbcUrls.withDatabase(adminUrl, name), user, password, 0);
        };
    }

    private static void createIfAbsent(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return;
                }
            }
        }
        try (Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE \"" + name.replace("\"", "\"\"") + "\"");
        } catch (SQLException e) {
            if (!"42P04".equals(e.getSQLState())) { // duplicate_database: created meanwhile
                throw e;
            }
        }
    }

    String describe() {
        return embedded != null ? "embedded PostgreSQL on 127.0.0.1:" + embedded.getPort()
                : adminUrl + " as " + user + " (databases " + prefix + "<shard>, kept)";
    }

    @Override
    public void close() {
        if (embedded != null) {
            try {
                embedded.close();
            } catch (IOException | RuntimeException e) {
                // its temporary directory goes with the process
            }
        }
    }
}
