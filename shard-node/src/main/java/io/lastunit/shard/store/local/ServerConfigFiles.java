package io.lastunit.shard.store.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The configuration files a {@link PostgresServer} reads at every start, written once: after
 * initdb, {@code pg_hba.conf} and a block of our settings at the end of {@code postgresql.conf};
 * after a base backup, a standby's own lines at the end of {@code postgresql.auto.conf} and
 * {@code standby.signal}. Written to files rather than passed on the command line, so a plain
 * {@code pg_ctl start} after any stop or crash keeps them.
 *
 * <p>Stateless, thread-safe. Hazards: PostgreSQL takes the last line for a setting, and reads
 * {@code postgresql.auto.conf} after {@code postgresql.conf}, so order is what makes these win;
 * and a standby is a copy of the primary's files, so each of the standby's own settings (port,
 * socket directory, name) must be written again in its auto file, or it takes the primary's.
 * {@code ALTER SYSTEM} rewrites the auto file later, keeping these lines.
 */
final class ServerConfigFiles {
    private static final String PG_HBA = """
            # Written by lastunit's PostgresServer: a local server, trust on the socket and 127.0.0.1 only.
            local all         all              trust
            local replication all              trust
            host  all         all 127.0.0.1/32 trust
            host  replication all 127.0.0.1/32 trust
            """;

    private ServerConfigFiles() {
    }

    /** After initdb: authentication and every setting of a primary, which a standby's copy inherits. */
    static void writePrimary(Path data, String name, int port, ServerSettings settings) throws IOException {
        Files.writeString(data.resolve("pg_hba.conf"), PG_HBA, StandardCharsets.UTF_8);
        append(data.resolve("postgresql.conf"), "lastunit's PostgresServer: these win over initdb's above",
                "listen_addresses", quoted(PostgresServer.HOST),
                "port", Integer.toString(port),
                "unix_socket_directories", quoted(data.toString()),
                "cluster_name", quoted(name),
                "max_connections", Integer.toString(settings.maxConnections()),
                "fsync", settings.fsync() ? "on" : "off",
                "full_page_writes", "on",
                "synchronous_commit", "on",
                "wal_level", "replica",
                "max_wal_senders", Integer.toString(settings.maxWalSenders()),
                "max_replication_slots", Integer.toString(settings.maxReplicationSlots()),
                "hot_standby", "on",
                "logging_collector", "off",
                "log_line_prefix", quoted("%m [%p] %q%a "));
    }

    /**
     * After a base backup: the standby's own port, socket directory and name, where it streams from
     * ({@code application_name} is what {@code synchronous_standby_names} matches), its slot, and no
     * synchronous standbys of its own (once promoted, it must not wait for one that does not exist).
     */
    static void writeStandby(Path data, String name, int port, int primaryPort) throws IOException {
        append(data.resolve("postgresql.auto.conf"), "lastunit's PostgresServer: this standby's own",
                "port", Integer.toString(port),
                "unix_socket_directories", quoted(data.toString()),
                "cluster_name", quoted(name),
                "primary_conninfo", quoted("host=" + PostgresServer.HOST + " port=" + primaryPort
                        + " user=" + PostgresServer.SUPERUSER + " application_name=" + name),
                "primary_slot_name", quoted(name),
                "synchronous_standby_names", quoted(""));
        Files.write(data.resolve("standby.signal"), new byte[0]);
    }

    /** A string literal for SQL and for PostgreSQL's configuration files. */
    static String quoted(String value) {
        return "'" + value.replace("'", "''") + "'";
    }

    private static void append(Path file, String comment, String... namesAndValues) throws IOException {
        StringBuilder text = new StringBuilder("\n# --- ").append(comment).append('\n');
        for (int i = 0; i < namesAndValues.length; i += 2) {
            text.append(namesAndValues[i]).append(" = ").append(namesAndValues[i + 1]).append('\n');
        }
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
