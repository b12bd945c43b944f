package io.lastunit.shard.store.local;

import io.lastunit.common.local.OwnedTempDirectory;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real PostgreSQL server process that this JVM controls, for the local platform and its
 * fault tests: made by {@link #initPrimary} or as a streaming standby by {@link #standbyOf};
 * started, stopped (smart, fast, immediate), killed with SIGKILL, restarted, promoted.
 * zonky's EmbeddedPostgres hides its process; this one runs the bundle's own {@code pg_ctl} with
 * bounded waits ({@code -w -t}) and finds the postmaster through {@code postmaster.pid}.
 *
 * <p>Owns an {@link OwnedTempDirectory} holding the data directory ({@code data}), the server log
 * ({@value #SERVER_LOG}) and the output of every program it ran ({@value #COMMAND_LOG}). A JVM
 * killed with the server running closes nothing; the next {@code initPrimary} or {@code standbyOf}
 * in the same state directory stops that server and deletes its files. Listens on 127.0.0.1 only,
 * on a port chosen once, when the server is made, and kept in its configuration files
 * ({@link ServerConfigFiles}), so a JDBC URL stays valid across restarts. The Unix socket is in
 * the data directory. Authentication is trust, on 127.0.0.1 and the socket: a local server only.
 *
 * <p>Thread-safe: lifecycle operations are synchronized; SQL operations open a connection of their
 * own each and take no lock, so a test can stop the server while another thread waits in a commit.
 * Every wait is bounded by {@link ServerSettings#operationWait()}, and every failure is a
 * {@link PostgresServerException} naming the server, its port and data directory, ending with the
 * last lines of its log.
 *
 * <p>Hazard: {@link #kill9} must wait for the postmaster's children and for the postmaster to be
 * reaped, not only for the signal: a new postmaster refuses to start while an old backend still
 * holds the shared memory, or while the old pid answers as a zombie ({@link Postmaster}).
 */
public final class PostgresServer implements AutoCloseable {
    /** The superuser initdb creates; trust authentication, no password. */
    public static final String SUPERUSER = "postgres";
    /** The only address servers listen on. */
    public static final String HOST = "127.0.0.1";
    /** The server's log, in its directory beside {@code data}. */
    public static final String SERVER_LOG = "postgres.log";
    /** What initdb, pg_ctl and pg_basebackup printed, in the server's directory. */
    public static final String COMMAND_LOG = "commands.log";
    /** How many lines of the server's log an error message ends with. */
    static final int LOG_TAIL_LINES = 40;
    /** Beyond pg_ctl's own {@code -t}: pg_ctl gives up by itself at {@code -t}; this catches one that hangs. */
    static final Duration PG_CTL_GRACE = Duration.ofSeconds(15);
    /** How long a killed postmaster may stay a zombie before {@link #kill9} deletes the lock files naming it. */
    static final Duration REAP_WAIT = Duration.ofSeconds(2);
    /** JDBC {@code connectTimeout} and {@code loginTimeout} of {@link #connect}, in seconds. */
    static final int CONNECT_TIMEOUT_SECONDS = 10;
    private static final String DATA = "data";
    private static final String KIND = "postgres";
    private static final String ADMIN_DATABASE = "postgres";
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]{0,62}");
    private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);

    private final String name;
    private final PostgresBinaries binaries;
    private final ServerSettings settings;
    private final OwnedTempDirectory directory;
    private final Postmaster postmaster;
    private final int port;
    private boolean closed; // guarded by this

    private PostgresServer(String name, PostgresBinaries binaries, ServerSettings settings, OwnedTempDirectory directory,
                           int port) {
        this.name = name;
        this.binaries = binaries;
        this.settings = settings;
        this.directory = directory;
        this.postmaster = new Postmaster(directory.path().resolve(DATA));
        this.port = port;
    }

    // ---- making one

    /**
     * Runs initdb for a new primary, not started: trust authentication for 127.0.0.1 and the
     * socket, then {@link ServerConfigFiles#writePrimary}: {@code listen_addresses}, {@code port},
     * {@code unix_socket_directories} (the data directory), {@code max_connections}, {@code fsync}
     * as asked with {@code full_page_writes} and {@code synchronous_commit} on,
     * {@code wal_level = replica}, {@code max_wal_senders}, {@code max_replication_slots},
     * {@code hot_standby = on}, all in {@code postgresql.conf}.
     *
     * @param name what the server is called in errors, logs and process titles ({@code cluster_name})
     */
    public static PostgresServer initPrimary(String name, PostgresBinaries binaries, ServerSettings settings)
            throws IOException {
        requireName("name", name);
        int port = choosePort();
        OwnedTempDirectory dir = create(settings);
        try {
            PostgresServer server = new PostgresServer(name, binaries, settings, dir, port);
            List<String> args = new ArrayList<>(List.of("-D", server.dataDirectory().toString(), "-U", SUPERUSER,
                    "-A", "trust", "-E", "UTF8", "--no-locale"));
            if (!settings.fsync()) {
                args.add("--no-sync");
            }
            BoundedProcess.Result r = BoundedProcess.run(binaries.command("initdb", args), server.commandLog(),
                    settings.operationWait());
            if (!r.succeeded()) {
                throw server.failure("initdb failed: " + r.describe(), null);
            }
            ServerConfigFiles.writePrimary(server.dataDirectory(), name, server.port, settings);
            return server;
        } catch (IOException | RuntimeException e) {
            closeQuietly(dir, e);
            throw e;
        }
    }

    /**
     * A streaming standby of the running {@code primary}, started: a base backup of the primary (by
     * {@code method}) into a new data directory, with a physical replication slot named
     * {@code applicationName} on the primary; then {@link ServerConfigFiles#writeStandby}:
     * {@code standby.signal}, its own port, socket directory and name, {@code primary_conninfo}
     * with {@code application_name=<applicationName>} (the name {@code synchronous_standby_names}
     * matches), {@code primary_slot_name}, and {@code synchronous_standby_names} empty, so once
     * promoted it commits alone. Returns once the primary's {@code pg_stat_replication} shows it
     * streaming. The standby has the primary's settings.
     *
     * <p>Closing a standby leaves its slot on a primary that still runs, holding WAL:
     * {@link #dropReplicationSlot} removes it.
     *
     * @param applicationName the standby's name, its {@code application_name} and its slot's name
     */
    public static PostgresServer standbyOf(PostgresServer primary, String applicationName, BaseBackupMethod method)
            throws IOException, SQLException {
        requireName("applicationName", applicationName);
        if (!primary.isRunning() || primary.inRecovery()) {
            throw primary.failure("a standby is made from a running primary; this server "
                    + (primary.isRunning() ? "is in recovery" : "does not run"), null);
        }
        if (primary.replicationSlotActive(applicationName).isPresent()) {
            throw primary.failure("replication slot " + applicationName + " exists already (another standby's?)", null);
        }
        BaseBackup backup = method.resolve(primary.binaries);
        int port = choosePort();
        PostgresServer standby = new PostgresServer(applicationName, primary.binaries, primary.settings,
                create(primary.settings), port);
        try {
            backup.copy(primary, standby.dataDirectory(), applicationName, standby.commandLog());
            standby.postmaster.deleteSocketFiles(); // the primary's socket lock, copied with its files
            ServerConfigFiles.writeStandby(standby.dataDirectory(), applicationName, standby.port, primary.port);
            standby.start();
            primary.awaitStreaming(applicationName);
            log.info("{} streams from {} (base backup by {})", standby.describe(), primary.describe(), backup);
            return standby;
        } catch (IOException | SQLException | RuntimeException e) {
            closeQuietly(standby, e);
            try {
                primary.dropReplicationSlot(applicationName);
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static OwnedTempDirectory create(ServerSettings settings) throws IOException {
        OwnedTempDirectory.reapOrphans(settings.stateDirectory(), OwnedTempDirectory.SERVER_STOP_WAIT)
                .forEach(line -> log.warn("{}", line));
        return OwnedTempDirectory.create(settings.stateDirectory(), KIND, DATA + "/postmaster.pid");
    }

    /** A port free on 127.0.0.1 now. Hazard: another process may take it before the server binds it. */
    private static int choosePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), 0));
            return socket.getLocalPort();
        }
    }

    // ---- lifecycle

    /** Starts the server ({@code pg_ctl start -w}); returns when it accepts connections (read-only ones, for a standby). */
    public synchronized void start() throws IOException {
        checkOpen();
        OptionalLong running = postmasterPid();
        if (running.isPresent()) {
            throw new IllegalStateException(describe() + " runs already (postmaster pid " + running.getAsLong() + ")");
        }
        BoundedProcess.Result r = pgCtl("start", "-l", serverLog().toString(), "-w", "-t", waitSeconds());
        if (!r.succeeded()) {
            throw failure("pg_ctl start failed: " + r.describe(), null);
        }
    }

    /** Stops the running server ({@code pg_ctl stop -m <mode> -w}); returns once its postmaster has exited. */
    public synchronized void stop(ShutdownMode mode) throws IOException {
        checkOpen();
        ProcessHandle pm = postmaster.running()
                .orElseThrow(() -> new IllegalStateException(describe() + " does not run: nothing to stop"));
        BoundedProcess.Result r = pgCtl("stop", "-m", mode.pgCtlName(), "-w", "-t", waitSeconds());
        if (!r.succeeded()) {
            throw failure("pg_ctl stop -m " + mode.pgCtlName() + " failed: " + r.describe(), null);
        }
        await(() -> Postmaster.allGone(List.of(pm)), () -> "postmaster " + pm.pid() + " to exit after pg_ctl stop");
    }

    /** {@link #stop} then {@link #start}. */
    public synchronized void restart(ShutdownMode mode) throws IOException {
        stop(mode);
        start();
    }

    /**
     * SIGKILL to the postmaster, as a crash of it would: no shutdown at all. Returns once the
     * postmaster and every process it had started are gone, the port is free and the postmaster
     * has been reaped (or, past {@link #REAP_WAIT}, its lock files deleted), so {@link #start} can
     * follow at once (it runs crash recovery).
     */
    public synchronized void kill9() throws IOException {
        checkOpen();
        ProcessHandle pm = postmaster.running()
                .orElseThrow(() -> new IllegalStateException(describe() + " does not run: nothing to kill"));
        List<ProcessHandle> all = Postmaster.withChildren(pm);
        if (!pm.destroyForcibly() && OwnedTempDirectory.isAlive(pm)) {
            throw failure("SIGKILL to postmaster " + pm.pid() + " was refused", null);
        }
        await(() -> Postmaster.allGone(all), () -> "postmaster " + pm.pid() + " and its " + (all.size() - 1)
                + " children to be gone after SIGKILL");
        await(this::portFree, () -> "port " + port + " to be free after SIGKILL");
        if (!BoundedWait.until(REAP_WAIT, () -> !pm.isAlive()).held()) {
            postmaster.deleteLockFiles(); // it is dead (its start time matched); only its zombie is left
            log.warn("{}: killed postmaster {} was not reaped within {}; deleted its lock files", describe(), pm.pid(),
                    REAP_WAIT);
        }
    }

    /** Whether the postmaster named by {@code postmaster.pid} runs. */
    public boolean isRunning() {
        return postmaster.running().isPresent();
    }

    /** The running postmaster's pid. */
    public OptionalLong postmasterPid() {
        return postmaster.running().map(p -> OptionalLong.of(p.pid())).orElse(OptionalLong.empty());
    }

    /**
     * Stops the server if it runs (immediate: nothing here needs a checkpoint) and deletes its
     * directory. Idempotent once it has succeeded; after a failure the directory is left for
     * another try, or for the next start's reaping.
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        Optional<ProcessHandle> pm = postmaster.running();
        if (pm.isPresent()) {
            List<ProcessHandle> all = Postmaster.withChildren(pm.get());
            BoundedProcess.Result r = pgCtl("stop", "-m", ShutdownMode.IMMEDIATE.pgCtlName(), "-w", "-t", waitSeconds());
            if (!r.succeeded() && isRunning()) {
                throw failure("pg_ctl stop -m immediate failed; the directory is left: " + r.describe(), null);
            }
            await(() -> Postmaster.allGone(all), () -> "postmaster " + pm.get().pid() + " and its children to exit on close");
        }
        directory.close();
        closed = true;
    }

    // ---- replication

    /**
     * Promotes this standby ({@code pg_promote(true, <operationWait>)}) and returns once it is out of
     * recovery and takes writes.
     */
    public synchronized void promote() throws IOException {
        checkOpen();
        boolean promoted = query("pg_promote failed", "SELECT pg_promote(true, " + settings.operationWaitSeconds() + ")",
                rs -> rs.next() && rs.getBoolean(1));
        if (!promoted) {
            throw failure("pg_promote did not finish within " + settings.operationWait(), null);
        }
        await(() -> !inRecovery(), () -> "the end of recovery after pg_promote");
    }

    /** Whether the server is in recovery: a standby that has not been promoted. */
    public boolean inRecovery() throws IOException {
        return query("cannot ask whether it is in recovery", "SELECT pg_is_in_recovery()", rs -> rs.next() && rs.getBoolean(1));
    }

    /**
     * Makes commits wait for standbys: {@code ALTER SYSTEM SET synchronous_standby_names} to
     * {@code standbyNames} (such as {@code FIRST 1 (standby_a)} or {@code ANY 1 (standby_a, standby_b)})
     * and {@code synchronous_commit = on}, then reloads. Returns once every commit from now on
     * waits: a new session shows the setting, and a {@code CHECKPOINT} has run, because the
     * checkpointer is the process that publishes "synchronous standbys are defined" to committing
     * backends, and it applies a pending reload before it starts a requested checkpoint.
     */
    public void requireSynchronousStandby(String standbyNames) throws IOException {
        if (standbyNames == null || standbyNames.isBlank()) {
            throw new IllegalArgumentException("standbyNames is empty: asynchronous() clears them");
        }
        applySynchronousStandbyNames(standbyNames);
    }

    /** Commits stop waiting for standbys: {@code synchronous_standby_names} cleared, as {@link #requireSynchronousStandby}. */
    public void asynchronous() throws IOException {
        applySynchronousStandbyNames("");
    }

    private void applySynchronousStandbyNames(String names) throws IOException {
        execute("cannot set synchronous_standby_names to '" + names + "'",
                "ALTER SYSTEM SET synchronous_standby_names = " + ServerConfigFiles.quoted(names),
                "ALTER SYSTEM SET synchronous_commit = 'on'",
                "SELECT pg_reload_conf()");
        await(() -> names.equals(query("cannot SHOW synchronous_standby_names", "SHOW synchronous_standby_names",
                rs -> rs.next() ? rs.getString(1) : null)), () -> "synchronous_standby_names = '" + names + "' after reload");
        execute("CHECKPOINT after setting synchronous_standby_names failed", "CHECKPOINT");
    }

    /** The rows of {@code pg_stat_replication}, by application name. */
    public List<ReplicationState> replicationState() throws IOException {
        return query("cannot read pg_stat_replication", "SELECT application_name, state, sync_state, flush_lsn::text"
                + " FROM pg_stat_replication ORDER BY application_name, pid", rs -> {
                    List<ReplicationState> rows = new ArrayList<>();
                    while (rs.next()) {
                        rows.add(new ReplicationState(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)));
                    }
                    return rows;
                });
    }

    /** Returns once the standby {@code applicationName} streams from this server. */
    public void awaitStreaming(String applicationName) throws IOException {
        awaitReplication(applicationName, ReplicationState::streaming, "to stream");
    }

    /** Returns once the standby {@code applicationName} streams and commits here wait for it. */
    public void awaitSynchronous(String applicationName) throws IOException {
        awaitReplication(applicationName, r -> r.streaming() && r.synchronous(), "to stream as a synchronous standby");
    }

    private void awaitReplication(String applicationName, Predicate<ReplicationState> ok, String what) throws IOException {
        List<List<ReplicationState>> seen = new ArrayList<>(List.of(List.of()));
        await(() -> {
            seen.set(0, replicationState());
            return seen.get(0).stream().anyMatch(r -> r.applicationName().equals(applicationName) && ok.test(r));
        }, () -> "standby " + applicationName + " " + what + " (pg_stat_replication: " + seen.get(0) + ")");
    }

    /**
     * Drops the replication slot {@code slot} if it exists, once no walsender uses it: a standby
     * just stopped holds it until the primary notices; one still running holds it up to the bound.
     */
    public void dropReplicationSlot(String slot) throws IOException {
        await(() -> !replicationSlotActive(slot).orElse(false), () -> "replication slot " + slot + " to be unused");
        execute("cannot drop replication slot " + slot, "SELECT pg_drop_replication_slot(slot_name)"
                + " FROM pg_replication_slots WHERE slot_name = " + ServerConfigFiles.quoted(slot));
    }

    /** Whether slot {@code slot} is in use; empty when there is no such slot. */
    private Optional<Boolean> replicationSlotActive(String slot) throws IOException {
        return query("cannot read pg_replication_slots", "SELECT active FROM pg_replication_slots WHERE slot_name = "
                + ServerConfigFiles.quoted(slot), rs -> rs.next() ? Optional.of(rs.getBoolean(1)) : Optional.empty());
    }

    // ---- SQL

    /** Creates database {@code name} unless it exists (on a primary; a standby is read-only and gets it by WAL). */
    public void createDatabase(String name) throws IOException {
        requireName("database name", name);
        boolean exists = query("cannot look for database " + name,
                "SELECT 1 FROM pg_database WHERE datname = " + ServerConfigFiles.quoted(name), ResultSet::next);
        if (!exists) {
            execute("cannot create database " + name, "CREATE DATABASE \"" + name + "\"");
        }
    }

    /** A new connection to {@code database} as {@value #SUPERUSER}, with bounded connect and login. */
    public Connection connect(String database) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", SUPERUSER);
        p.setProperty("connectTimeout", Integer.toString(CONNECT_TIMEOUT_SECONDS));
        p.setProperty("loginTimeout", Integer.toString(CONNECT_TIMEOUT_SECONDS));
        return DriverManager.getConnection(jdbcUrl(database), p);
    }

    /** {@code jdbc:postgresql://127.0.0.1:<port>/<database>}; the user is {@value #SUPERUSER}, no password. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + HOST + ":" + port + "/" + database;
    }

    /** Reads one statement's result. */
    @FunctionalInterface
    private interface Rows<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private <T> T query(String failure, String sql, Rows<T> rows) throws IOException {
        try (Connection c = connect(ADMIN_DATABASE); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return rows.read(rs);
        } catch (SQLException e) {
            throw failure(failure, e);
        }
    }

    private void execute(String failure, String... statements) throws IOException {
        try (Connection c = connect(ADMIN_DATABASE); Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        } catch (SQLException e) {
            throw failure(failure, e);
        }
    }

    // ---- what it is

    public String name() {
        return name;
    }

    public int port() {
        return port;
    }

    public Path dataDirectory() {
        return directory.path().resolve(DATA);
    }

    /** The directory holding the data directory and the logs, deleted by {@link #close}. */
    public Path directory() {
        return directory.path();
    }

    public Path serverLog() {
        return directory.path().resolve(SERVER_LOG);
    }

    Path commandLog() {
        return directory.path().resolve(COMMAND_LOG);
    }

    public ServerSettings settings() {
        return settings;
    }

    /** {@code <name> (port <port>, data <dir>)}. */
    public String describe() {
        return name + " (port " + port + ", data " + dataDirectory() + ")";
    }

    @Override
    public String toString() {
        return "PostgresServer " + describe();
    }

    /** An error naming this server, ending with the last lines of its log. */
    PostgresServerException failure(String what, Throwable cause) {
        return new PostgresServerException("PostgreSQL server " + describe() + ": " + what
                + (cause == null ? "" : " (" + cause.getMessage() + ")")
                + "\n--- last lines of " + serverLog() + ":\n" + FileTail.lastLines(serverLog(), LOG_TAIL_LINES), cause);
    }

    // ---- small things

    private BoundedProcess.Result pgCtl(String action, String... options) throws IOException {
        List<String> args = new ArrayList<>(List.of(action, "-D", dataDirectory().toString()));
        args.addAll(List.of(options));
        return BoundedProcess.run(binaries.command("pg_ctl", args), commandLog(), settings.operationWait().plus(PG_CTL_GRACE));
    }

    private String waitSeconds() {
        return Integer.toString(settings.operationWaitSeconds());
    }

    private boolean portFree() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(HOST), port));
            return true;
        } catch (BindException inUse) {
            return false;
        }
    }

    /** {@link BoundedWait#until} for {@link ServerSettings#operationWait()}, failing with this server's state. */
    private void await(BoundedWait.Condition condition, Supplier<String> what) throws IOException {
        BoundedWait.Outcome outcome = BoundedWait.until(settings.operationWait(), condition);
        if (!outcome.held()) {
            throw failure("waited " + settings.operationWait() + " for " + what.get(), outcome.lastError());
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(describe() + " is closed");
        }
    }

    private static void requireName(String what, String value) {
        if (value == null || !NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " '" + value + "' must match " + NAME.pattern());
        }
    }

    private static void closeQuietly(AutoCloseable closeable, Exception cause) {
        try {
            closeable.close();
        } catch (Exception e) {
            cause.addSuppressed(e);
        }
    }
}
