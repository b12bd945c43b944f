package io.lastunit.admin.cli;

import io.lastunit.shard.store.EmbeddedDatabase;
import java.io.PrintWriter;
import picocli.CommandLine.Option;

/**
 * {@code --jdbc-url/--jdbc-user/--jdbc-password} of {@code up}, {@code demo} and
 * {@code bench move} (a picocli mixin): where the shards' databases go; and
 * {@code --unsafe-no-fsync}, for the embedded PostgreSQL only.
 */
public final class JdbcOptions {
    @Option(names = "--jdbc-url", paramLabel = "URL",
            description = "A PostgreSQL server to use instead of an embedded one, through a database the user may "
                    + "connect to (e.g. jdbc:postgresql://127.0.0.1:5432/postgres); each shard gets a database of "
                    + "its own there, created when absent. Default: LASTUNIT_JDBC_URL, else embedded.")
    String url = AdminCommand.envOr("LASTUNIT_JDBC_URL", "");

    @Option(names = "--jdbc-user", paramLabel = "USER",
            description = "Its user, who needs CREATEDB (default: LASTUNIT_JDBC_USER, else lastunit).")
    String user = AdminCommand.envOr("LASTUNIT_JDBC_USER", "lastunit");

    @Option(names = "--jdbc-password", paramLabel = "PASSWORD",
            description = "Its password (default: LASTUNIT_JDBC_PASSWORD, else lastunit).")
    String password = AdminCommand.envOr("LASTUNIT_JDBC_PASSWORD", "lastunit");

    @Option(names = "--unsafe-no-fsync",
            description = "Run the embedded PostgreSQL with fsync off, for speed: a crash of the machine can then lose"
                    + " confirmed reservations. Default: fsync on (durable). Not with --jdbc-url.")
    boolean unsafeNoFsync;

    @Option(names = "--standby",
            description = "Give the embedded PostgreSQL a streaming standby, synchronous: no commit is acknowledged"
                    + " before the standby flushed it, and writes pause while it is away (docs/durability.md)."
                    + " Not with --jdbc-url.")
    boolean standby;

    public boolean embedded() {
        return url == null || url.isBlank();
    }

    EmbeddedDatabase.Durability durability() {
        return unsafeNoFsync ? EmbeddedDatabase.Durability.UNSAFE_NO_FSYNC : EmbeddedDatabase.Durability.FSYNC;
    }

    /** Checks the URL's form (no I/O). */
    public void validate(picocli.CommandLine cmd) {
        if (unsafeNoFsync && !embedded()) {
            throw new picocli.CommandLine.ParameterException(cmd, "--unsafe-no-fsync is for the embedded PostgreSQL;"
                    + " the server at --jdbc-url keeps its own settings");
        }
        if (standby && !embedded()) {
            throw new picocli.CommandLine.ParameterException(cmd, "--standby is for the embedded PostgreSQL;"
                    + " a server at --jdbc-url has the standbys its operator gave it");
        }
        if (!embedded()) {
            try {
                JdbcUrls.withDatabase(url, "x");
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(cmd, "--jdbc-url: " + e.getMessage());
            }
        }
    }

    /**
     * Starts the embedded PostgreSQL (saying on {@code out} what it cleaned up after a killed
     * platform first) or connects to the given one; databases are named {@code prefix<shard>}.
     */
    public PlatformDatabases open(String prefix, PrintWriter out) {
        if (standby) {
            return PlatformDatabases.embeddedWithStandby(prefix, durability());
        }
        return embedded() ? PlatformDatabases.embedded(prefix, durability(), line -> {
            out.println("lastunit: " + line);
            out.flush();
        }) : PlatformDatabases.external(url, user, password, prefix);
    }

    /** The server's JDBC URL (empty: embedded), its user and password. */
    public String url() {
        return url;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    /** For the first line of {@code up} and {@code demo}: which PostgreSQL. */
    public String describe() {
        if (!embedded()) {
            return "PostgreSQL at " + url;
        }
        String what = standby ? "an embedded PostgreSQL with a synchronous standby" : "an embedded PostgreSQL";
        return unsafeNoFsync ? what + " (fsync OFF)" : what;
    }
}
