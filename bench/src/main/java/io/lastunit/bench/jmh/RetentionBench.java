package io.lastunit.bench.jmh;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.shard.ShardNode;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.retention.MovingTenants;
import io.lastunit.shard.retention.Retention;
import io.lastunit.shard.retention.RetentionConfig;
import io.lastunit.shard.wiring.ShardProperties;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
import org.openjdk.jmh.runner.IterationType;

/**
 * What retention costs a sale in progress: the lane engine's Reserves per second on one hot item
 * (as {@link LaneEngineBench}), on a shard whose {@code holds} table also has a backlog of
 * {@code backlog} SOLD holds of another tenant that ended 30 days ago, with a thread deleting that
 * backlog (retention active) or not (the same backlog left in place).
 *
 * <p>{@code retention=alternate} (the default) turns the deleting thread on in every second
 * iteration of one trial (warm-ups counted: with one warm-up, the odd measurement iterations are
 * the active ones), so that the host's drift, large on a shared machine, falls on both alike: read
 * the ratio of each active iteration to the inactive ones beside it. {@code on} and {@code off}
 * keep it on or off for the whole trial. The node's own retention is off; the thread runs
 * {@link Retention#runOnce} back to back, one batch per pass with the shard's default batch
 * settings otherwise (1,000 rows, {@code retention-batch-pause-ms} after each batch, or
 * {@code batchPauseMs}), so while active it deletes as fast as
 * those settings allow: the worst a node with a backlog does (its passes of 100 batches come once
 * a minute). After each iteration it prints whether retention was active, the holds deleted in it
 * and its batches' mean and longest time ({@code [retention] …}), besides the lanes' line
 * ({@link LaneWindow}). A trial whose backlog runs out says so.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'RetentionBench' -wi 1 -w 5s -i 12 -r 3s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RetentionBench {

    /** "alternate": retention deletes the backlog in every second iteration; "on", "off": throughout, never. */
    @Param({"alternate"})
    public String retention;

    /** Ended holds waiting for retention (30 days old), of another tenant and item. */
    @Param({"1000000"})
    public int backlog;

    /** Pause after each batch; -1: the shard's default ({@code retention-batch-pause-ms}). */
    @Param({"-1"})
    public int batchPauseMs;

    /** Escrow buckets of the hot item. */
    @Param({"4"})
    public int buckets;

    private BenchDatabase db;
    private ShardNode node;
    private LaneEngine engine;
    private Retention deleter;
    private Thread deleting;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final LaneWindow window = new LaneWindow();
    private Retention.Stats before;
    private long iterationStart;
    private int iterations;
    /** Whether the deleting thread deletes in this iteration. */
    private volatile boolean active;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        db = BenchDatabase.create("retention_" + retention);
        try {
            ShardProperties p = new ShardProperties();
            p.setId("bench-shard");
            p.setPort(0);
            p.setRegions(List.of(BenchItems.REGION));
            p.setJdbcUrl(db.url());
            p.setJdbcUser(db.user());
            p.setJdbcPassword(db.password());
            p.setRetentionEnabled(false); // driven here instead
            node = new ShardNode(p.toConfig(), InstantSource.system(), null).start();
            engine = node.engine();
            backlog();
            engine.createItem(CreateItemRequest.newBuilder().setTenantId(BenchItems.TENANT).setItemId(BenchItems.itemId(0))
                    .setTotal(BenchItems.TOTAL).setHomeRegion(BenchItems.REGION).setBucketCount(buckets).build(),
                    BenchItems.REGION).get(120, TimeUnit.SECONDS);
            RetentionConfig d = RetentionConfig.defaults();
            deleter = new Retention(node.dataSource(), new RetentionConfig(true, d.interval(), d.holdsAfter(),
                    d.transfersAfter(), d.batchMax(), 1,
                    batchPauseMs < 0 ? d.batchPause() : Duration.ofMillis(batchPauseMs)), MovingTenants.NONE);
            if (!List.of("on", "off", "alternate").contains(retention)) {
                throw new IllegalArgumentException("retention is on, off or alternate, not " + retention);
            }
            deleting = new Thread(this::deleteUntilStopped, "bench-retention");
            deleting.setDaemon(true);
            deleting.start();
        } catch (Exception | Error e) {
            tearDown();
            throw e;
        }
    }

    /** The backlog: an item of another tenant sold out to {@code backlog} buyers 30 days ago, counters to match. */
    private void backlog() throws Exception {
        try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
             Statement s = c.createStatement()) {
            s.execute("""
                    INSERT INTO items (tenant_id, item_id, home_region, total, initial_total, created_total, per_buyer_limit,
                                       hold_ttl_ms, extend_by_ms, bucket_count)
                    VALUES ('past', 'sold-out', 'local', %1$d, %1$d, %1$d, 0, 600000, 600000, 4)""".formatted(backlog));
            s.execute("""
                    INSERT INTO buckets (tenant_id, item_id, bucket_no, allotment, available, held, sold)
                    SELECT 'past', 'sold-out', b, n, 0, 0, n
                      FROM (SELECT b, (%1$d / 4) + CASE WHEN b < %1$d %% 4 THEN 1 ELSE 0 END AS n
                              FROM generate_series(0, 3) b) q""".formatted(backlog));
            s.execute("""
                    INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                       request_fingerprint, state, created_at, expires_at, order_ref, ended_at)
                    SELECT gen_random_uuid(), 'past', 'sold-out', g %% 4, 'local', 1, 'b' || g, 'k' || g, 'f', 'SOLD',
                           now() - interval '30 days', now() - interval '30 days' + interval '10 minutes', 'o' || g,
                           now() - interval '30 days' + g * interval '1 millisecond'
                      FROM generate_series(0, %d - 1) g""".formatted(backlog));
            s.execute("ANALYZE holds");
        }
    }

    /** One batch a pass while active, until the trial ends (bounded: at most 10 million rounds). */
    private void deleteUntilStopped() {
        for (long round = 0; !stop.get() && round < 10_000_000; round++) {
            try {
                if (!active) {
                    Thread.sleep(5);
                    continue;
                }
                if (deleter.runOnce().holds() == 0) {
                    System.out.println("[retention] the backlog is gone: deleted " + deleter.stats().holdsDeleted());
                    return;
                }
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                System.out.println("[retention] pass failed: " + e);
                return;
            }
        }
    }

    @Setup(Level.Iteration)
    public void beginIteration() {
        active = retention.equals("on") || (retention.equals("alternate") && iterations % 2 == 1);
        iterations++;
        window.begin(List.of(engine), null);
        before = deleter.stats();
        iterationStart = System.nanoTime();
    }

    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        window.end(List.of(engine), null, iteration);
        Retention.Stats now = deleter.stats();
        long batches = now.batches() - before.batches();
        double seconds = (System.nanoTime() - iterationStart) / 1e9;
        System.out.printf(Locale.ROOT, "[retention] phase=%s active=%s deleted=%d rows_per_s=%.0f batches=%d"
                        + " batch_ms_mean=%.2f batch_ms_max_so_far=%.2f%n",
                iteration.getType() == IterationType.WARMUP ? "warmup" : "measurement", active,
                now.holdsDeleted() - before.holdsDeleted(), (now.holdsDeleted() - before.holdsDeleted()) / seconds,
                batches, batches == 0 ? 0 : (now.batchNanosTotal() - before.batchNanosTotal()) / 1e6 / batches,
                now.batchNanosMax() / 1e6);
    }

    @Benchmark
    public ReserveResponse reserve(Caller caller) throws Exception {
        return engine.reserve(ReserveRequest.newBuilder()
                .setTenantId(BenchItems.TENANT)
                .setItemId(BenchItems.itemId(0))
                .setQuantity(1)
                .setIdempotencyKey(caller.next().key())
                .setBuyerId(caller.buyer())
                .setRegion(BenchItems.REGION)
                .build()).get(60, TimeUnit.SECONDS);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        stop.set(true);
        try {
            if (deleting != null) {
                deleting.interrupt();
                deleting.join(Duration.ofSeconds(30).toMillis());
            }
            if (deleter != null) {
                Retention.Stats s = deleter.stats();
                System.out.printf(Locale.ROOT, "%n[RetentionBench retention=%s] deleted=%d of %d batches=%d"
                                + " batch_ms_mean=%.2f batch_ms_max=%.2f%n", retention, s.holdsDeleted(), backlog,
                        s.batches(), s.meanBatchMillis(), s.batchNanosMax() / 1e6);
                deleter.close();
            }
        } finally {
            try {
                if (node != null) {
                    node.close();
                }
            } finally {
                node = null;
                engine = null;
                if (db != null) {
                    db.close();
                    db = null;
                }
            }
        }
    }
}
