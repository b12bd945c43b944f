package io.lastunit.admin.cli;

import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.shard.ShardConfig;
import io.lastunit.shard.store.EmbeddedDatabase;
import io.lastunit.shard.store.local.BaseBackupMethod;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.lastunit.shard.store.local.PostgresServer;
import io.lastunit.shard.store.local.ServerSettings;
import io.lastunit.shard.store.local.StandbyPair;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Consumer;

/**
 * The PostgreSQL databases of a local platform's shards: one database per shard, created when
 * absent, either in an embedded PostgreSQL started here (its data directory is temporary and
 * deleted on close) or on a server given by a JDBC URL (kept). Not thread-safe; LocalPlatform asks
 * from one thread.
 *
 * <p>The embedded server is shard-node's {@link EmbeddedDatabase}, which no JVM shutdown hook of
 * its own closes: on Ctrl-C the command's hook must stop the shard nodes before their database,
 * and JVM hooks run concurrently. Used by {@code up}, {@code demo} and the bench's load generator.
 */
public final class PlatformDatabases implements AutoCloseable {
    private final EmbeddedDatabase embedded;
    /** With {@code --standby}: an embedded primary and its synchronous standby (then {@code embedded} is null). */
    private final StandbyPair pair;
    private final String adminUrl;
    private final String user;
    private final String password;
    private final String prefix;

    private PlatformDatabases(EmbeddedDatabase embedded, String adminUrl, String user, String password, String prefix) {
        this(embedded, null, adminUrl, user, password, prefix);
    }

    private PlatformDatabases(EmbeddedDatabase embedded, StandbyPair pair, String adminUrl, String user,
                              String password, String prefix) {
        this.embedded = embedded;
        this.pair = pair;
        this.adminUrl = adminUrl;
        this.user = user;
        this.password = password;
        this.prefix = prefix;
    }

    /**
     * Starts an embedded PostgreSQL, after stopping and deleting what a killed platform left (one
     * line each to {@code leftovers}).
     */
    public static PlatformDatabases embedded(String prefix, EmbeddedDatabase.Durability durability,
                                             Consumer<String> leftovers) {
        try {
            return new PlatformDatabases(EmbeddedDatabase.start(durability, leftovers), null, null, null, prefix);
        } catch (IOException | RuntimeException e) {
            throw CliError.failed("could not start the embedded PostgreSQL: " + e.getMessage()
                    + " (or give a server with --jdbc-url)");
        }
    }

    /**
     * Starts an embedded PostgreSQL primary and a streaming standby made from it, the standby
     * synchronous ({@code FIRST 1}): no commit is acknowledged before the standby flushed it. The
     * shards reach the pair through a multi-host URL that finds the primary. Both are deleted on close.
     */
    public static PlatformDatabases embeddedWithStandby(String prefix, EmbeddedDatabase.Durability durability) {
        try {
            StandbyPair pair = StandbyPair.start(PostgresBinaries.find(), ServerSettings.defaults()
                    .withFsync(durability == EmbeddedDatabase.Durability.FSYNC), BaseBackupMethod.AUTO);
            return new PlatformDatabases(null, pair, null, null, null, prefix);
        } catch (IOException | SQLException | RuntimeException e) {
            throw CliError.failed("could not start the embedded PostgreSQL with its standby: " + e.getMessage());
        }
    }

    /**
     * A server reached through {@code adminUrl} as {@code user}, who may CREATE DATABASE. Connects
     * once now so that a wrong URL or password fails before anything starts (exit 3).
     */
    public static PlatformDatabases external(String adminUrl, String user, String password, String prefix) {
        try {
            JdbcUrls.withDatabase(adminUrl, "x");
        } catch (IllegalArgumentException e) {
            throw CliError.usage("--jdbc-url: " + e.getMessage());
        }
        try (Connection c = connect(adminUrl, user, password)) {
            c.isValid(5);
        } catch (SQLException e) {
            throw CliError.unreachable("cannot connect to PostgreSQL at " + adminUrl + " as " + user + ": "
                    + e.getMessage());
        }
        return new PlatformDatabases(null, adminUrl, user, password, prefix);
    }

    private static Connection connect(String url, String user, String password) throws SQLException {
        DriverManager.setLoginTimeout(10);
        return DriverManager.getConnection(url, user, password);
    }

    public LocalPlatform.ShardDatabases forShards() {
        return shardId -> {
            String name = JdbcUrls.databaseFor(prefix, shardId);
            if (pair != null) {
                try {
                    pair.createDatabase(name);
                } catch (IOException e) {
                    throw new SQLException("could not create database " + name + " on the primary: " + e.getMessage(), e);
                }
                return new ShardConfig.Jdbc(pair.multiHostJdbcUrl(name), PostgresServer.SUPERUSER, "", 0);
            }
            if (embedded != null) {
                EmbeddedDatabase.Target t = embedded.createDatabase(name);
                return new ShardConfig.Jdbc(t.url(), t.user(), t.password(), 0);
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
            if (!"42P04".equals(e.getSQLState())) { // duplicate_database: created meanwhile, fine
                throw e;
            }
        }
    }

    /** For the banner: where the databases are. */
    public String describe() {
        if (pair != null) {
            return "embedded PostgreSQL primary on 127.0.0.1:" + pair.primary().port() + " with a synchronous standby"
                    + " on 127.0.0.1:" + pair.standby().port() + " (user postgres; no commit acknowledged before the"
                    + " standby flushed it; data deleted on exit)";
        }
        if (embedded == null) {
            return adminUrl + " as " + user + " (databases " + prefix + "<shard>, kept)";
        }
        return "embedded PostgreSQL on 127.0.0.1:" + embedded.port() + " (user postgres; "
                + (embedded.durability() == EmbeddedDatabase.Durability.FSYNC ? "fsync on" : "fsync OFF")
                + "; data in " + embedded.directory() + ", deleted on exit)";
    }

    /** Whether commits are not flushed to disk (an embedded server started with --unsafe-no-fsync). */
    public boolean unsafeNoFsync() {
        return (embedded != null && embedded.durability() == EmbeddedDatabase.Durability.UNSAFE_NO_FSYNC)
                || (pair != null && !pair.primary().settings().fsync());
    }

    /** Stops the embedded server and deletes its data directory; a given server is left as it is. */
    @Override
    public void close() throws IOException {
        if (embedded != null) {
            embedded.close();
        }
        if (pair != null) {
            pair.close();
        }
    }
}
