package io.lastunit.bench.jmh;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.HoldId;
import io.lastunit.shard.ShardNode;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.wiring.ShardProperties;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
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
 * Reservations per second of the shard node's lane engine, in process: no gRPC, no router, no
 * network besides PostgreSQL. Measures the lanes and group commit themselves.
 *
 * <p>Setup (per trial): a fresh database ({@link BenchDatabase}), a standalone {@link ShardNode}
 * on it with the shard defaults (4 lanes, batch-max 512, pool = lanes + read threads + 2; its gRPC
 * server listens on a free port but is not used), and {@code items} items of
 * {@link BenchItems#TOTAL} units created through the engine. Each call is a one-unit Reserve
 * with a key and buyer never used before ({@link Caller}) on item 0 ({@code items=1}: the flash
 * sale's one hot item, one bucket, so one lane) or on a uniformly random one of 1,000 (spread over
 * all lanes); the lane answers after its transaction committed, and the call fails the run unless
 * the answer is RESERVED. Concurrent callers are the JMH threads, each blocked on its call: pass
 * {@code -t 64} or {@code -t 256}; or threads that keep several calls in flight each
 * ({@link Pipeline}): {@code -t 4 -p pipeline=64} is 256 in flight.
 *
 * <p>Why it is fair against {@link BaselineBench} and {@link RawCeilingBench}: same PostgreSQL
 * server, same empty schema per trial, same rows per Reserve (hold, HELD outbox row, bucket
 * counters), durable commit before the caller is answered, same callers. The engine's advantage
 * is only what its design earns: one transaction and one bucket-row write per batch.
 *
 * <p>{@code database}: the server of {@code LASTUNIT_BENCH_JDBC_URL} ("server", the default), or a
 * primary with a synchronous standby started for the trial, its commits waiting for the standby
 * ("pair-sync") or not ("pair-local"): {@link BenchServer}.
 *
 * <p>Buckets: every item is created with {@code buckets} escrow buckets (1, 4, 16); a hot item on
 * several buckets is written by several lanes at once, each with its own transaction.
 *
 * <p>{@code reserveConfirm} is a Reserve and then its Confirm, one caller waiting for both: the
 * path that writes a hold twice. {@code dropIndexes} names indexes ('+' between them) dropped after
 * the migrations, for an A/B of what an index costs in the same run (e.g.
 * {@code -p dropIndexes=none,holds_live+holds_ended}); "none" keeps the schema as migrated.
 *
 * <p>After each iteration it prints that iteration's lane counters ({@link LaneWindow}: commits,
 * operations per commit, decision-to-commit time); at the end of a trial the engine's totals:
 * mean batch (operations per batch) is the group-commit factor, and redos should be 0.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'LaneEngineBench' -p items=1 -wi 1 -w 3s -i 1 -r 5s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class LaneEngineBench {

    /** Distinct items called: 1 = one hot item; 1000 = calls spread uniformly. */
    @Param({"1", "1000"})
    public int items;

    /** Escrow buckets per item. */
    @Param({"1", "4", "16"})
    public int buckets;

    /** Indexes dropped after the migrations ('+' between them), or "none". */
    @Param({"none"})
    public String dropIndexes;

    /**
     * The node's metrics ({@code metrics-enabled}): "on" (the default of a shard node: the lanes'
     * observer, the registry, the management port) or "off", to measure what they cost. The
     * scheduled invariant check is off in both (its cost is the check's, not the metrics').
     */
    @Param({"on"})
    public String metrics;

    /** Where the trial's database is: "server", "pair-sync" or "pair-local" ({@link BenchServer}). */
    @Param({BenchServer.SERVER})
    public String database;

    private BenchServer server;
    private BenchDatabase db;
    private ShardNode node;
    private LaneEngine engine;
    private String[] itemIds;
    private final LaneWindow window = new LaneWindow();

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        try {
            server = BenchServer.start(database);
            db = server.create("engine_" + items + "_" + buckets);
            ShardProperties p = new ShardProperties();
            p.setId("bench-shard");
            p.setPort(0);
            p.setRegions(List.of(BenchItems.REGION));
            p.setJdbcUrl(db.url());
            p.setJdbcUser(db.user());
            p.setJdbcPassword(db.password());
            p.setMetricsEnabled(switch (metrics) {
                case "on" -> true;
                case "off" -> false;
                default -> throw new IllegalArgumentException("metrics=" + metrics + " must be on or off");
            });
            p.setInvariantCheckIntervalMs(0);
            node = new ShardNode(p.toConfig(), InstantSource.system(), null).start();
            engine = node.engine();
            dropIndexes();
            itemIds = BenchItems.itemIds(items);
            List<CompletableFuture<?>> created = new ArrayList<>();
            for (String item : itemIds) {
                created.add(engine.createItem(CreateItemRequest.newBuilder().setTenantId(BenchItems.TENANT)
                        .setItemId(item).setTotal(BenchItems.TOTAL).setHomeRegion(BenchItems.REGION).setBucketCount(buckets)
                        .build(), BenchItems.REGION));
            }
            CompletableFuture.allOf(created.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        } catch (Exception | Error e) {
            tearDown();
            throw e;
        }
    }

    @Setup(Level.Iteration)
    public void beginIteration() {
        window.begin(List.of(engine), null);
    }

    /** Prints the lanes' counters of this iteration alone ({@link LaneWindow}). */
    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        window.end(List.of(engine), null, iteration);
        server.printReplication(iteration.getType().name().toLowerCase(Locale.ROOT));
    }

    @Benchmark
    public ReserveResponse reserve(Caller caller, Pipeline pipeline) {
        return pipeline.call(() -> engine.reserve(ReserveRequest.newBuilder()
                .setTenantId(BenchItems.TENANT)
                .setItemId(itemIds[Caller.pickItem(items)])
                .setQuantity(1)
                .setIdempotencyKey(caller.next().key())
                .setBuyerId(caller.buyer())
                .setRegion(BenchItems.REGION)
                .build())); // returned, so JMH's blackhole consumes it
    }

    /** A Reserve, then the Confirm of its hold: both answered before the next. */
    @Benchmark
    public Hold reserveConfirm(Caller caller) throws Exception {
        ReserveResponse r = engine.reserve(ReserveRequest.newBuilder()
                .setTenantId(BenchItems.TENANT)
                .setItemId(itemIds[Caller.pickItem(items)])
                .setQuantity(1)
                .setIdempotencyKey(caller.next().key())
                .setBuyerId(caller.buyer())
                .setRegion(BenchItems.REGION)
                .build()).get(60, TimeUnit.SECONDS);
        if (r.getOutcome() != ReserveOutcome.RESERVED) {
            throw new IllegalStateException("expected RESERVED, got " + r.getOutcome());
        }
        return engine.confirm(HoldId.decode(r.getHold().getHoldId(), "hold_id"), "order-" + r.getHold().getHoldId())
                .get(60, TimeUnit.SECONDS);
    }

    private void dropIndexes() throws SQLException {
        if (dropIndexes.equals("none")) {
            return;
        }
        try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
             Statement st = c.createStatement()) {
            for (String index : dropIndexes.split("\\+")) {
                if (!index.matches("[a-z_]+")) {
                    throw new IllegalArgumentException("not an index name: " + index);
                }
                st.execute("DROP INDEX " + index);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        try {
            if (engine != null) {
                LaneEngine.Stats s = engine.stats();
                System.out.printf("%n[LaneEngineBench items=%d buckets=" + buckets + "] batches=%d ops=%d meanBatch=%.1f redos=%d"
                                + " transactions=%d one-statement=%d refused=%d paced=%d queued=%d%n", items, s.batches(),
                        s.opsApplied(), s.meanBatch(), s.redos(), s.transactions(), s.oneStatementBatches(),
                        s.oneStatementRefusals(), s.paced(), s.queued());
                System.out.println("[LaneEngineBench items=" + items + "] " + PlainJdbc.ledger(node.dataSource()));
            }
        } finally {
            try {
                if (node != null) {
                    node.close();
                }
            } finally {
                node = null;
                engine = null;
                BenchDatabase d = db;
                BenchServer s = server;
                db = null;
                server = null;
                BenchServer.close(d, s);
            }
        }
    }
}
