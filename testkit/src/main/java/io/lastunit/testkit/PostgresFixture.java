package io.lastunit.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Gives each test class its own fresh PostgreSQL database, and more on request (one per shard).
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PostgresFixture PG = new PostgresFixture();
 * }</pre>
 *
 * <p><b>What it owns.</b> Each instance owns the databases it created: {@code beforeAll} creates
 * {@code lastunit_t_<class>_<8 hex>}, {@link #newDatabase(String)} creates more, and
 * {@code afterAll} drops them all with {@code DROP DATABASE ... WITH (FORCE)}, which also ends
 * connections a test left open (pools included). The PostgreSQL server is chosen once per JVM
 * and shared by all instances, in this order:
 * <ol>
 *   <li>{@code LASTUNIT_TEST_JDBC_URL} (system property {@code lastunit.test.jdbcUrl} wins over the
 *       environment variable): a database on a server where the user may {@code CREATE DATABASE};
 *       user and password from {@code LASTUNIT_TEST_DB_USER} / {@code LASTUNIT_TEST_DB_PASSWORD}
 *       ({@code lastunit.test.dbUser} / {@code lastunit.test.dbPassword}), default
 *       {@code lastunit}/{@code lastunit};</li>
 *   <li>else, when Docker is available, one Testcontainers {@code postgres:16-alpine} for the whole
 *       JVM (Ryuk removes it when the JVM exits);</li>
 *   <li>else the local server {@code jdbc:postgresql://127.0.0.1:5432/postgres}, user and password
 *       as in 1.</li>
 * </ol>
 * If the chosen server cannot be reached, {@code beforeAll} throws: tests fail, they are never
 * skipped. {@code bash .ci/run} sets up such a local server.
 *
 * <p><b>Thread-safety.</b> The server choice is made once under a lock; instance methods are
 * synchronized, so tests of one class may call {@link #newDatabase(String)} from several threads,
 * and test classes running in parallel each get their own databases.
 *
 * <p><b>Hazards.</b> The field must be {@code static}, or JUnit never calls {@code beforeAll}
 * and the accessors throw. A {@code @Nested} class reuses its enclosing class's database (a nesting
 * counter keeps it alive until the outermost class ends). A fixture in a base class is one
 * instance shared by all subclasses: when they run in parallel they share its database. A JVM that
 * is killed leaves its {@code lastunit_t_*} databases behind; they are safe to drop by hand.
 * Databases are made from {@code template0} with UTF8 encoding and C collation, so text sorts by
 * code point on every machine, whatever locale the server was initialised with. Needs
 * PostgreSQL 13 or later ({@code WITH (FORCE)}).
 */
public final class PostgresFixture implements BeforeAllCallback, AfterAllCallback {

    private static final String NAME_PREFIX = "lastunit_t_";
    /** PostgreSQL truncates identifiers to 63 bytes; stay below. */
    private static final int MAX_NAME_LENGTH = 62;
    private static final String HOW_TO_FIX = "Fix: start a local server with `LASTUNIT_CI_SKIP_TESTS=1 bash .ci/run`"
            + " (as root; `bash .ci/run` does the same and then runs the tests), or set LASTUNIT_TEST_JDBC_URL"
            + " (and LASTUNIT_TEST_DB_USER / LASTUNIT_TEST_DB_PASSWORD) to a database on a server where that"
            + " user may CREATE DATABASE.";

    private static Server server;
    private static IllegalStateException serverFailure;

    private final List<String> created = new ArrayList<>();
    private String databaseName;
    private int depth;

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (depth++ > 0) {
            return; // a @Nested class: keep the enclosing class's database
        }
        String className = context.getTestClass().map(Class::getSimpleName).orElse("");
        databaseName = create(className);
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        close();
    }

    /** Drops every database this fixture created once the outermost open is closed. */
    private void close() {
        if (depth == 0 || --depth > 0) {
            return;
        }
        databaseName = null;
        IllegalStateException failure = null;
        for (int i = created.size() - 1; i >= 0; i--) {
            String name = created.get(i);
            try {
                dropWithRetries(name);
            } catch (SQLException e) {
                if (failure == null) {
                    failure = new IllegalStateException("PostgresFixture: could not drop test database(s)");
                }
                failure.addSuppressed(new SQLException("DROP DATABASE " + name + ": " + e.getMessage(), e));
            }
        }
        created.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Drops a database, retrying a few times: an autovacuum worker on it cannot be ended by a
     * non-superuser, but it finishes within moments. Bounded: 10 tries, 500 ms apart.
     */
    private void dropWithRetries(String name) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                execute(server(), "DROP DATABASE IF EXISTS " + quote(name) + " WITH (FORCE)");
                return;
            } catch (SQLException e) {
                if (attempt >= 10) {
                    throw e;
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** JDBC URL of this test class's database. */
    public synchronized String jdbcUrl() {
        return server().urlFor(requireDatabase());
    }

    /** Name of this test class's database. */
    public synchronized String databaseName() {
        return requireDatabase();
    }

    /** User to connect as; the same for every database of this fixture. */
    public String user() {
        return server().user;
    }

    /** Password of {@link #user()}. */
    public String password() {
        return server().password;
    }

    /**
     * Creates another fresh database on the same server, named {@code lastunit_t_<prefix>_<8 hex>},
     * and returns its JDBC URL (connect with {@link #user()} / {@link #password()}). It is dropped in
     * {@code afterAll} with the others, so call this from a test or a {@code @BeforeAll} /
     * {@code @BeforeEach} method, not after the class has finished.
     */
    public synchronized String newDatabase(String prefix) {
        return server().urlFor(create(prefix));
    }

    /**
     * For test engines that do not run JUnit 5 extensions (jqwik's {@code @BeforeContainer}, a
     * {@code main} method): does what {@code beforeAll} does, creating this fixture's database
     * {@code lastunit_t_<label>_<8 hex>}, and returns its JDBC URL. Pair every call with
     * {@link #closeStandalone()}, in a {@code finally} or an {@code @AfterContainer}; nested calls
     * share the first call's database, as {@code @Nested} classes do.
     */
    public synchronized String openStandalone(String label) {
        if (depth++ == 0) {
            databaseName = create(label);
        }
        return server().urlFor(databaseName);
    }

    /**
     * The counterpart of {@link #openStandalone(String)}: does what {@code afterAll} does, dropping
     * (with {@code FORCE}) every database this fixture created once the outermost open is closed.
     * Does nothing when the fixture is not open.
     *
     * @throws IllegalStateException if a database could not be dropped (each one is still tried)
     */
    public synchronized void closeStandalone() {
        close();
    }

    private String requireDatabase() {
        if (databaseName == null) {
            throw new IllegalStateException("PostgresFixture has no database: register it as"
                    + " `@RegisterExtension static final PostgresFixture PG = new PostgresFixture();`"
                    + " (static) and use it only while the test class runs");
        }
        return databaseName;
    }

    private String create(String label) {
        String name = newName(label);
        try {
            execute(server(), "CREATE DATABASE " + quote(name)
                    + " TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'");
        } catch (SQLException e) {
            throw new IllegalStateException("PostgresFixture: could not create database " + name + " on "
                    + server().describe() + ": " + e.getMessage(), e);
        }
        created.add(name);
        return name;
    }

    static String newName(String label) {
        String clean = label == null ? "" : label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]+", "_");
        if (clean.isEmpty()) {
            clean = "x";
        }
        String suffix = String.format("_%08x", ThreadLocalRandom.current().nextInt());
        int room = MAX_NAME_LENGTH - NAME_PREFIX.length() - suffix.length();
        if (clean.length() > room) {
            clean = clean.substring(0, room);
        }
        return NAME_PREFIX + clean + suffix;
    }

    private static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    private static void execute(Server s, String sql) throws SQLException {
        try (Connection c = s.connect(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    // ---------------------------------------------------------------- server choice, once per JVM

    private static synchronized Server server() {
        if (server != null) {
            return server;
        }
        if (serverFailure != null) {
            // Fail every later class too, with the original reason, without trying again.
            throw new IllegalStateException(serverFailure.getMessage(), serverFailure);
        }
        try {
            server = chooseServer();
            System.err.println("[lastunit-testkit] PostgresFixture uses PostgreSQL " + server.describe());
            return server;
        } catch (RuntimeException e) {
            serverFailure = e instanceof IllegalStateException ise
                    ? ise : new IllegalStateException("PostgresFixture: " + e.getMessage(), e);
            throw serverFailure;
        }
    }

    private static Server chooseServer() {
        String user = setting("lastunit.test.dbUser", "LASTUNIT_TEST_DB_USER", "lastunit");
        String password = setting("lastunit.test.dbPassword", "LASTUNIT_TEST_DB_PASSWORD", "lastunit");
        String url = setting("lastunit.test.jdbcUrl", "LASTUNIT_TEST_JDBC_URL", null);
        if (url != null) {
            return probe(new Server(url, user, password, "LASTUNIT_TEST_JDBC_URL"));
        }
        if (DockerClientFactory.instance().isDockerAvailable()) {
            PostgreSQLContainer container = new PostgreSQLContainer("postgres:16-alpine");
            try {
                container.start(); // never stopped here: Ryuk removes it when the JVM exits
            } catch (RuntimeException e) {
                throw new IllegalStateException("PostgresFixture: Docker is available but the postgres:16-alpine"
                        + " container did not start: " + sentence(e.getMessage()) + " " + HOW_TO_FIX, e);
            }
            return probe(new Server(container.getJdbcUrl(), container.getUsername(), container.getPassword(),
                    "Testcontainers postgres:16-alpine"));
        }
        return probe(new Server("jdbc:postgresql://127.0.0.1:5432/postgres", user, password,
                "local server; LASTUNIT_TEST_JDBC_URL unset and no Docker"));
    }

    /** Returns {@code s} once it answers and lets its user create databases; throws otherwise. */
    private static Server probe(Server s) {
        try (Connection c = s.connect();
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT current_setting('server_version_num')::int,"
                     + " (SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user)")) {
            rs.next();
            int version = rs.getInt(1);
            boolean mayCreate = rs.getBoolean(2);
            if (version < 130000) {
                throw new IllegalStateException("PostgresFixture: " + s.describe() + " runs PostgreSQL "
                        + version + "; 13 or later is needed (DROP DATABASE ... WITH (FORCE)). " + HOW_TO_FIX);
            }
            if (!mayCreate) {
                throw new IllegalStateException("PostgresFixture: user '" + s.user + "' may not create databases on "
                        + s.describe() + " (run `ALTER ROLE " + s.user + " CREATEDB` as a superuser). " + HOW_TO_FIX);
            }
            return s;
        } catch (SQLException e) {
            throw new IllegalStateException("PostgresFixture: cannot connect to PostgreSQL " + s.describe() + ": "
                    + sentence(e.getMessage()) + " " + HOW_TO_FIX, e);
        }
    }

    private static String setting(String property, String env, String fallback) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            value = System.getenv(env);
        }
        return value == null || value.isBlank() ? fallback : value.trim();
    }

    /** Where test databases live; immutable. */
    private static final class Server {
        final String adminUrl;
        final String user;
        final String password;
        final String reason;

        Server(String adminUrl, String user, String password, String reason) {
            this.adminUrl = adminUrl;
            this.user = user;
            this.password = password;
            this.reason = reason;
        }

        Connection connect() throws SQLException {
            Properties props = new Properties();
            props.setProperty("user", user);
            props.setProperty("password", password);
            // Defaults only: parameters in the URL win.
            props.setProperty("connectTimeout", "10");
            props.setProperty("loginTimeout", "20");
            return DriverManager.getConnection(adminUrl, props);
        }

        String urlFor(String database) {
            return replaceDatabase(adminUrl, database);
        }

        String describe() {
            return "at " + redact(adminUrl) + " as user '" + user + "' (" + reason + ")";
        }
    }

    /**
     * Replaces the database in a {@code jdbc:postgresql:} URL, keeping hosts, ports and parameters:
     * {@code jdbc:postgresql://h:5432/a?x=1} becomes {@code jdbc:postgresql://h:5432/b?x=1}.
     */
    static String replaceDatabase(String url, String database) {
        String prefix = "jdbc:postgresql:";
        if (!url.startsWith(prefix)) {
            throw new IllegalArgumentException("not a jdbc:postgresql: URL: " + redact(url));
        }
        String rest = url.substring(prefix.length());
        int q = rest.indexOf('?');
        String query = q < 0 ? "" : rest.substring(q);
        String path = q < 0 ? rest : rest.substring(0, q);
        if (!path.startsWith("//")) {
            return prefix + database + query; // jdbc:postgresql:database
        }
        int slash = path.indexOf('/', 2);
        String hosts = slash < 0 ? path.substring(2) : path.substring(2, slash);
        return prefix + "//" + hosts + "/" + database + query;
    }

    /** {@code message} ending with exactly one full stop. */
    private static String sentence(String message) {
        String m = message == null ? "" : message.strip();
        return m.endsWith(".") ? m : m + ".";
    }

    private static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&]*", "$1***");
    }
}
