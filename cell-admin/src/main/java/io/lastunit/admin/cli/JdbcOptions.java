package io.lastunit.admin.cli;

import picocli.CommandLine.Option;

/** {@code --jdbc-url/--jdbc-user/--jdbc-password} of {@code up} and {@code demo}: where the shards' databases go. */
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

    boolean embedded() {
        return url == null || url.isBlank();
    }

    /** Checks the URL's form (no I/O). */
    void validate(picocli.CommandLine cmd) {
        if (!embedded()) {
            try {
                JdbcUrls.withDatabase(url, "x");
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(cmd, "--jdbc-url: " + e.getMessage());
            }
        }
    }

    /** Starts the embedded PostgreSQL or connects to the given one; databases are named {@code prefix<shard>}. */
    PlatformDatabases open(String prefix) {
        return embedded() ? PlatformDatabases.embedded(prefix) : PlatformDatabases.external(url, user, password, prefix);
    }
}
