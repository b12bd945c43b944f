package io.lastunit.bench.jmh;

import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.sql.SQLException;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;

/**
 * The designs lastunit replaces, as reservations per second, measured with the same callers, the
 * same PostgreSQL and the same scenarios as {@link LaneEngineBench}: a transaction per Reserve in
 * plain JDBC through HikariCP ({@code poolSize} connections, autocommit off, READ COMMITTED — the
 * shard node's own pool settings).
 *
 * <ul>
 *   <li>{@link #naive}: {@code SELECT available … FOR UPDATE}, check in Java, {@code UPDATE buckets
 *       SET available = available - 1, held = held + 1}, insert the hold, commit
 *       ({@link PlainJdbc#naive}).</li>
 *   <li>{@link #singleStatement}: insert the hold, then one conditional {@code UPDATE buckets … WHERE
 *       available >= 1} last, commit; no row → roll back, SOLD_OUT ({@link PlainJdbc#singleStatement}).
 *       The textbook fix.</li>
 * </ul>
 *
 * <p>Why it is fair: a fresh database per trial with the shard's own schema (Flyway migration of
 * the shard-node jar: the same {@code holds} indexes and unique key, the same {@code buckets}
 * CHECK), items created by the shard's own {@code ItemStore}, and per Reserve the same rows the
 * engine writes — a hold with the same columns (version-7 id, SHA-256 request fingerprint, expiry
 * now + 10 min), its HELD outbox row in the same statement (the engine writes one per hold too),
 * and the bucket counters — committed durably (synchronous_commit as the server has it) before the
 * call returns. Each call uses a key and buyer never used before ({@link Caller}) and fails the
 * run unless it reserved. Items hold {@link BenchItems#TOTAL} units, so nothing sells out. What
 * the baselines skip — buyer-usage statements (items are unlimited), the key set, retries by key
 * — favours them, not the engine.
 *
 * <p>{@code items=1}: every call on one bucket row (the flash sale); {@code items=1000}: calls spread
 * uniformly, so row locks rarely collide and the pool and the WAL flush are the limits. Callers
 * are the JMH threads ({@code -t 64} / {@code -t 256}); with more callers than connections the
 * rest wait for the pool, as they would in an application.
 *
 * <p>{@code database}: the server of {@code LASTUNIT_BENCH_JDBC_URL} ("server", the default), or a
 * primary with a synchronous standby started for the trial, commits waiting for it ("pair-sync")
 * or not ("pair-local"): {@link BenchServer}.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'BaselineBench' -p items=1 -wi 1 -w 3s -i 1 -r 5s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BaselineBench {

    /** Distinct items called: 1 = one hot bucket row; 1000 = calls spread uniformly. */
    @Param({"1", "1000"})
    public int items;

    /** Connections in the application's pool. */
    @Param({"32"})
    public int poolSize;

    /** Where the trial's database is: "server", "pair-sync" or "pair-local" ({@link BenchServer}). */
    @Param({BenchServer.SERVER})
    public String database;

    private BenchServer server;
    private BenchDatabase db;
    private HikariDataSource pool;
    private String[] itemIds;

    @Setup(Level.Trial)
    public void setUp() throws IOException, SQLException {
        try {
            server = BenchServer.start(database);
            db = server.create("baseline_" + items);
            db.migrate();
            pool = db.pool("baseline", poolSize);
            itemIds = BenchItems.itemIds(items);
            PlainJdbc.createItems(pool, items);
        } catch (IOException | SQLException | RuntimeException | Error e) {
            tearDown();
            throw e;
        }
    }

    private PlainJdbc.Reserve next(Caller caller) {
        caller.next();
        return new PlainJdbc.Reserve(BenchItems.TENANT, itemIds[Caller.pickItem(items)], BenchItems.REGION, 1,
                caller.buyer(), caller.key());
    }

    @Benchmark
    public PlainJdbc.Outcome naive(Caller caller) throws SQLException {
        return reserved(PlainJdbc.naive(pool, next(caller)));
    }

    @Benchmark
    public PlainJdbc.Outcome singleStatement(Caller caller) throws SQLException {
        return reserved(PlainJdbc.singleStatement(pool, next(caller)));
    }

    private static PlainJdbc.Outcome reserved(PlainJdbc.Outcome o) {
        if (o != PlainJdbc.Outcome.RESERVED) {
            throw new IllegalStateException("expected RESERVED, got " + o);
        }
        return o;
    }

    /** With a standby pair, what pg_stat_replication says after each iteration. */
    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        server.printReplication(iteration.getType().name().toLowerCase(Locale.ROOT));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException, SQLException {
        try {
            if (pool != null) {
                System.out.printf("%n[BaselineBench items=%d poolSize=%d] %s%n", items, poolSize,
                        PlainJdbc.ledger(pool));
            }
        } finally {
            pool = null;
            BenchDatabase d = db;
            BenchServer s = server;
            db = null;
            server = null;
            BenchServer.close(d, s);
        }
    }
}
