package io.lastunit.admin.cli;

/** PostgreSQL JDBC URLs: the same server, another database. Pure code. */
public final class JdbcUrls {
    private static final String PREFIX = "jdbc:postgresql:";

    private JdbcUrls() {
    }

    /**
     * {@code url} with its database replaced by {@code database}, keeping host(s), port and
     * parameters: {@code jdbc:postgresql://h:5432/postgres?ssl=true} → {@code jdbc:postgresql://h:5432/DB?ssl=true}.
     *
     * @throws IllegalArgumentException when {@code url} is not a {@code jdbc:postgresql:} URL
     */
    public static String withDatabase(String url, String database) {
        if (url == null || !url.startsWith(PREFIX)) {
            throw new IllegalArgumentException("'" + url + "' is not a PostgreSQL JDBC URL (jdbc:postgresql://HOST:PORT/DATABASE)");
        }
        String rest = url.substring(PREFIX.length());
        int q = rest.indexOf('?');
        String params = q < 0 ? "" : rest.substring(q);
        String location = q < 0 ? rest : rest.substring(0, q);
        if (!location.startsWith("//")) {
            // jdbc:postgresql:database — localhost, default port
            return PREFIX + database + params;
        }
        int slash = location.indexOf('/', 2);
        String hosts = slash < 0 ? location.substring(2) : location.substring(2, slash);
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("'" + url + "' names no host (jdbc:postgresql://HOST:PORT/DATABASE)");
        }
        return PREFIX + "//" + hosts + "/" + database + params;
    }

    /** The database name lastunit uses for a shard: {@code <prefix><shard id>}, non-alphanumerics as '_'. */
    public static String databaseFor(String prefix, String shardId) {
        return prefix + shardId.replaceAll("[^A-Za-z0-9]", "_");
    }
}
