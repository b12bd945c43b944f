package io.lastunit.shard.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.micrometer.core.instrument.MeterRegistry;
import com.zaxxer.hikari.HikariDataSource;
import io.lastunit.shard.ShardConfig;
import java.time.Duration;

/**
 * The shard's two connection pools and the bounds set on their connections
 * (docs/durability.md, "Bounded waits"). Thread-safe; closing is idempotent.
 *
 * <ul>
 *   <li><b>Writes</b> (lanes, borrows, collapses, the sweeper, moves, migrations): pgjdbc's
 *       {@code socketTimeout}, and on the server {@code lock_timeout} and
 *       {@code idle_in_transaction_session_timeout}; <em>no</em> {@code statement_timeout}.</li>
 *   <li><b>Reads</b> (GetStock, GetHold, the invariant check): the same, plus
 *       {@code statement_timeout} and read-only transactions; its socket waits for the statement
 *       timeout and then the socket timeout, so a slow read ends on the server first.</li>
 * </ul>
 *
 * <p>Hazard: a statement timeout (or any cancel) that fires while a commit waits for a
 * synchronous standby ends the wait, and PostgreSQL then reports the transaction committed with
 * only a WARNING, though the standby may not have it. So nothing that commits a write runs on a
 * connection with a statement timeout, and no code cancels a write statement; a write that waits
 * too long ends at the socket (outcome unknown), never by a cancel ({@link CommitWarnings}).
 */
public final class ShardPools implements AutoCloseable {
    private final HikariDataSource writes;
    private final HikariDataSource reads;

    private ShardPools(HikariDataSource writes, HikariDataSource reads) {
        this.writes = writes;
        this.reads = reads;
    }

    /**
     * Opens both pools (each opens its connections now: a wrong URL fails here). Every connection
     * runs {@code fenceSql} first ({@link DatabaseOwner#fenceSql()}): one that fails it is never used.
     */
    public static ShardPools open(ShardConfig config, String fenceSql) {
        return open(config, fenceSql, null);
    }

    /** The same, with HikariCP's Micrometer tracker on {@code registry} ({@code hikaricp_*}) unless it is null. */
    public static ShardPools open(ShardConfig config, String fenceSql, MeterRegistry registry) {
        ShardConfig.DbTimeouts t = config.jdbc().timeouts();
        HikariDataSource writes = pool(config, "shard-" + config.shardId(), config.poolSize(), t.socket(),
                serverOptions(t, null), fenceSql, false, registry);
        try {
            // One reader connection per read thread, one spare (a read pool thread never holds two),
            // one for the standby watch and one for the scheduled checks, so neither makes a read wait.
            HikariDataSource reads = pool(config, "shard-" + config.shardId() + "-reads", config.readThreads() + 3,
                    t.readStatement().plus(t.socket()), serverOptions(t, t.readStatement()), fenceSql, true,
                    registry);
            return new ShardPools(writes, reads);
        } catch (RuntimeException e) {
            writes.close();
            throw e;
        }
    }

    /** The {@code -c} settings each new session starts with. */
    static String serverOptions(ShardConfig.DbTimeouts t, Duration statement) {
        String options = "-c lock_timeout=" + t.lock().toMillis()
                + " -c idle_in_transaction_session_timeout=" + t.idleInTransaction().toMillis();
        return statement == null ? options + " -c statement_timeout=0"
                : options + " -c statement_timeout=" + statement.toMillis();
    }

    private static HikariDataSource pool(ShardConfig config, String name, int size, Duration socket, String options,
                                         String fenceSql, boolean readOnly, MeterRegistry registry) {
        ShardConfig.DbTimeouts t = config.jdbc().timeouts();
        HikariConfig h = new HikariConfig();
        h.setPoolName(name);
        h.setJdbcUrl(config.jdbc().url());
        h.setUsername(config.jdbc().user());
        h.setPassword(config.jdbc().password());
        h.setMaximumPoolSize(size);
        h.setMinimumIdle(size);
        h.setAutoCommit(false);
        h.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        h.setConnectionTimeout(t.connect().toMillis());
        h.setValidationTimeout(Math.min(2_000, t.connect().toMillis()));
        h.addDataSourceProperty("tcpKeepAlive", "true");
        h.addDataSourceProperty("ApplicationName", "lastunit-shard-" + config.shardId());
        h.addDataSourceProperty("socketTimeout", String.valueOf(Math.max(1, socket.toSeconds())));
        h.addDataSourceProperty("connectTimeout", String.valueOf(Math.max(1, t.connect().toSeconds())));
        h.addDataSourceProperty("loginTimeout", String.valueOf(Math.max(1, t.connect().toSeconds())));
        h.addDataSourceProperty("options", options);
        h.setConnectionInitSql(fenceSql);
        h.setIsolateInternalQueries(true); // the fence ends its own transaction: a connection starts outside one
        h.setReadOnly(readOnly);
        if (registry != null) {
            h.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
        }
        return new HikariDataSource(h);
    }

    /** Lanes, borrows, collapses, the sweeper, moves and migrations. */
    public HikariDataSource writes() {
        return writes;
    }

    /** Committed reads: never a write, never a commit that matters. */
    public HikariDataSource reads() {
        return reads;
    }

    @Override
    public void close() {
        try {
            reads.close();
        } finally {
            writes.close();
        }
    }
}
