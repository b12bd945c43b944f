package io.lastunit.bench.jmh;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lastunit.shard.ShardConfig;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import org.flywaydb.core.Flyway;

/**
 * A fresh PostgreSQL database for one benchmark trial, dropped when the trial ends.
 *
 * <p>The server is the one named by {@code LASTUNIT_BENCH_JDBC_URL} (default
 * {@code jdbc:postgresql://127.0.0.1:5432/lastunit}), as {@code LASTUNIT_BENCH_DB_USER} /
 * {@code LASTUNIT_BENCH_DB_PASSWORD} (default {@code lastunit} / {@code lastunit}); that role
 * needs {@code CREATEDB}. {@link #create(String)} runs {@code CREATE DATABASE
 * lastunit_bench_<label>_<8 hex>} (from {@code template0}, UTF8, C collation, as the tests'
 * databases); {@link #close()} runs {@code DROP DATABASE ... WITH (FORCE)}, retried a few times
 * (an autovacuum worker on the database cannot be ended by a non-superuser, but it finishes
 * within moments). A JVM shutdown hook drops whatever a trial did not, so an interrupted fork
 * leaves nothing behind unless it is killed outright; the leftovers are then safe to drop by hand.
 *
 * <p>Why a fresh database per trial: every design measured starts from the same empty tables,
 * so no trial pays for (or profits from) the rows, bloat or cached plans of another.
 *
 * <p>{@link #migrate()} applies the shard node's own Flyway migration ({@code db/migration} from
 * the shard-node jar on the classpath), so the baselines write exactly the tables, indexes and
 * CHECK constraints the lane engine writes. Thread-safe.
 */
public final class BenchDatabase implements AutoCloseable {
    static final String URL_VARIABLE = "LASTUNIT_BENCH_JDBC_URL";
    static final String USER_VARIABLE = "LASTUNIT_BENCH_DB_USER";
    static final String PASSWORD_VARIABLE = "LASTUNIT_BENCH_DB_PASSWORD";
    static final String DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/lastunit";
    static final String NAME_PREFIX = "lastunit_bench_";
    /** PostgreSQL truncates identifiers to 63 bytes; stay below. */
    static final int NAME_LENGTH_MAX = 62;
    private static final int DROP_ATTEMPTS = 10;
    private static final long DROP_PAUSE_MS = 500;

    /** Where databases are created: a database on the server to connect to, and the role. */
    public record Server(String url, String user, String password) {
        public static Server fromEnvironment() {
            return fromEnvironment(System::getenv);
        }

        static Server fromEnvironment(Function<String, String> env) {
            return new Server(orDefault(env.apply(URL_VARIABLE), DEFAULT_URL),
                    orDefault(env.apply(USER_VARIABLE), "lastunit"),
                    orDefault(env.apply(PASSWORD_VARIABLE), "lastunit"));
        }

        private static String orDefault(String v, String d) {
            return v == null || v.isBlank() ? d : v;
        }

        Connection connect() throws SQLException {
            return DriverManager.getConnection(url, user, password);
        }
    }

    private static final Set<BenchDatabase> OPEN = new LinkedHashSet<>();
    private static boolean hookInstalled;

    private final Server server;
    private final String name;
    private final List<HikariDataSource> pools = new ArrayList<>();
    private boolean closed;

    private BenchDatabase(Server server, String name) {
        this.server = server;
        this.name = name;
    }

    /** Creates {@code lastunit_bench_<label>_<8 hex>} on the server named by the environment. */
    public static BenchDatabase create(String label) throws SQLException {
        return create(Server.fromEnvironment(), label);
    }

    public static BenchDatabase create(Server server, String label) throws SQLException {
        String name = databaseName(label, ThreadLocalRandom.current().nextInt());
        try (Connection c = server.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE DATABASE " + quote(name)
                    + " TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'");
        } catch (SQLException e) {
            throw new SQLException("could not create benchmark database " + name + " on " + server.url() + " as "
                    + server.user() + " (the role needs CREATEDB; set " + URL_VARIABLE + ", " + USER_VARIABLE + ", "
                    + PASSWORD_VARIABLE + "): " + e.getMessage(), e.getSQLState(), e);
        }
        BenchDatabase db = new BenchDatabase(server, name);
        register(db);
        return db;
    }

    private static synchronized void register(BenchDatabase db) {
        OPEN.add(db);
        if (!hookInstalled) {
            hookInstalled = true;
            Runtime.getRuntime().addShutdownHook(new Thread(BenchDatabase::dropAllOpen, "bench-db-cleanup"));
        }
    }

    private static void dropAllOpen() {
        List<BenchDatabase> left;
        synchronized (BenchDatabase.class) {
            left = new ArrayList<>(OPEN);
        }
        for (BenchDatabase db : left) {
            try {
                db.close();
            } catch (RuntimeException e) {
                System.err.println("[bench] could not drop " + db.name + ": " + e.getMessage());
            }
        }
    }

    /** {@code lastunit_bench_<label>_<8 hex>}: label lower-cased, reduced to [a-z0-9_], cut to fit 62 bytes. */
    static String databaseName(String label, int random) {
        String clean = label == null ? "" : label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]+", "_");
        if (clean.isEmpty()) {
            clean = "x";
        }
        String suffix = String.format("_%08x", random);
        int room = NAME_LENGTH_MAX - NAME_PREFIX.length() - suffix.length();
        if (clean.length() > room) {
            clean = clean.substring(0, room);
        }
        return NAME_PREFIX + clean + suffix;
    }

    /**
     * The server's JDBC URL with its database replaced: {@code jdbc:postgresql://h:p/db?x=y} →
     * {@code jdbc:postgresql://h:p/<database>?x=y}; several hosts, no port, no database and the
     * short {@code jdbc:postgresql:db} form are kept apart the same way.
     */
    static String urlFor(String serverUrl, String database) {
        String prefix = "jdbc:postgresql:";
        if (!serverUrl.startsWith(prefix)) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + serverUrl);
        }
        String rest = serverUrl.substring(prefix.length());
        int q = rest.indexOf('?');
        String query = q < 0 ? "" : rest.substring(q);
        String path = q < 0 ? rest : rest.substring(0, q);
        if (path.startsWith("//")) {
            int slash = path.indexOf('/', 2);
            String hosts = slash < 0 ? path : path.substring(0, slash);
            return prefix + hosts + "/" + database + query;
        }
        return prefix + database + query;
    }

    static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    public String name() {
        return name;
    }

    public String url() {
        return urlFor(server.url(), name);
    }

    public String user() {
        return server.user();
    }

    public String password() {
        return server.password();
    }

    /** This database for a shard node; {@code poolSize} 0 = the node's own minimum. */
    public ShardConfig.Jdbc jdbc(int poolSize) {
        return new ShardConfig.Jdbc(url(), user(), password(), poolSize);
    }

    /** Applies the shard schema (the shard node's Flyway migration). Returns this. */
    public BenchDatabase migrate() {
        Flyway.configure().dataSource(url(), user(), password()).locations("classpath:db/migration").load().migrate();
        return this;
    }

    /**
     * A pool as an application would configure one, and as the shard node configures its own:
     * {@code size} connections opened up front, autocommit off, READ COMMITTED. Closed by
     * {@link #close()}.
     */
    public synchronized HikariDataSource pool(String poolName, int size) {
        if (closed) {
            throw new IllegalStateException("database " + name + " was dropped");
        }
        HikariConfig h = new HikariConfig();
        h.setPoolName(poolName);
        h.setJdbcUrl(url());
        h.setUsername(user());
        h.setPassword(password());
        h.setMaximumPoolSize(size);
        h.setMinimumIdle(size);
        h.setAutoCommit(false);
        h.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        // Callers beyond the pool size queue for a connection: that wait is part of the design measured.
        h.setConnectionTimeout(120_000);
        h.addDataSourceProperty("ApplicationName", "lastunit-bench-" + poolName);
        HikariDataSource ds = new HikariDataSource(h);
        pools.add(ds);
        return ds;
    }

    /** Closes this database's pools and drops it (WITH (FORCE), retried). Idempotent. */
    @Override
    public void close() {
        List<HikariDataSource> toClose;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(pools);
            pools.clear();
        }
        for (HikariDataSource ds : toClose) {
            ds.close();
        }
        try {
            drop();
        } finally {
            synchronized (BenchDatabase.class) {
                OPEN.remove(this);
            }
        }
    }

    private void drop() {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = server.connect(); Statement st = c.createStatement()) {
                st.execute("DROP DATABASE IF EXISTS " + quote(name) + " WITH (FORCE)");
                return;
            } catch (SQLException e) {
                if (attempt >= DROP_ATTEMPTS) {
                    throw new IllegalStateException("could not drop benchmark database " + name + " after "
                            + attempt + " attempts (drop it by hand): " + e.getMessage(), e);
                }
                try {
                    Thread.sleep(DROP_PAUSE_MS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while dropping " + name, ie);
                }
            }
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
