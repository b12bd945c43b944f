package io.lastunit.bench.jmh;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The raw ceiling: holds per second that PostgreSQL itself commits here when they come in batches
 * of {@value #BATCH} per transaction and nothing is decided — so we know how close the lane
 * engine gets to what the database can do.
 *
 * <p>Each invocation writes {@value #BATCH} one-unit holds of one item with the lane engine's own
 * statements (one multi-row {@code INSERT … SELECT FROM unnest(…)} into {@code holds} with its
 * {@value #BATCH} HELD outbox rows in the same statement, then one conditional bucket update,
 * last) and commits: {@link PlainJdbc#rawBatch}. No cache, no key set, no fingerprint hashing, no
 * futures, no per-request objects: only the SQL and the commit. {@code @OperationsPerInvocation}
 * makes the score holds per second.
 *
 * <p>Same database setup as {@link BaselineBench} (fresh database, shard schema, items by the
 * shard's {@code ItemStore}, {@link BenchItems#TOTAL} units each), same pool settings. With
 * {@code items=1} every batch updates the one hot bucket row, so batches serialise on its lock as
 * the engine's batches for one item do (one lane); with {@code items=1000} each batch goes to a
 * random item and batches run side by side. Callers are the JMH threads ({@code -t 64} …). The
 * engine batches up to {@code batch-max} (512) operations, and only as many as have queued, so
 * at low concurrency it can sit below this line and at high concurrency above it.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'RawCeilingBench' -p items=1 -wi 1 -w 3s -i 1 -r 5s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RawCeilingBench {
    static final int BATCH = 100;

    /** Distinct items: 1 = every batch on one bucket row; 1000 = each batch on a random item. */
    @Param({"1", "1000"})
    public int items;

    /** Connections in the pool. */
    @Param({"32"})
    public int poolSize;

    private BenchDatabase db;
    private HikariDataSource pool;
    private String[] itemIds;

    @Setup(Level.Trial)
    public void setUp() throws SQLException {
        db = BenchDatabase.create("ceiling_" + items);
        try {
            db.migrate();
            pool = db.pool("ceiling", poolSize);
            itemIds = BenchItems.itemIds(items);
            PlainJdbc.createItems(pool, items);
        } catch (SQLException | RuntimeException | Error e) {
            tearDown();
            throw e;
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void batch(Caller caller) throws SQLException {
        caller.next();
        PlainJdbc.rawBatch(pool, BenchItems.TENANT, itemIds[Caller.pickItem(items)], BenchItems.REGION, BATCH,
                caller.key() + "-");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws SQLException {
        try {
            if (pool != null) {
                System.out.printf("%n[RawCeilingBench items=%d poolSize=%d] %s%n", items, poolSize,
                        PlainJdbc.ledger(pool));
            }
        } finally {
            pool = null;
            if (db != null) {
                db.close();
                db = null;
            }
        }
    }
}
