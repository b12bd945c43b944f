package io.lastunit.shard.expiry;

import io.lastunit.shard.lane.BucketKey;
import io.lastunit.shard.lane.LaneEngine;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds buckets with due holds (database clock) on a fixed interval and asks each bucket's
 * lane to expire them, so the expiry itself is one more conditional statement in the lane's
 * batch, never a second writer. Lanes also sweep on their own before answering SOLD_OUT;
 * this catches holds in buckets that see no traffic.
 *
 * <p>Items fenced by a tenant move (FROZEN, IMPORTING, MOVED) are left alone: their holds expire
 * where the item serves, by the same {@code expires_at}.
 *
 * <p>Bounded: at most {@code bucketsPerTickMax} buckets per tick, and a bucket whose previous
 * sweep has not finished is skipped. Thread-safe; one scheduler thread. Hazard: the query
 * probes the partial index per bucket, so its cost grows with the number of buckets, not holds.
 */
public final class ExpirySweeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ExpirySweeper.class);

    private final DataSource dataSource;
    private final LaneEngine engine;
    private final Duration interval;
    private final int bucketsPerTickMax;
    private final Map<BucketKey, CompletableFuture<Integer>> inFlight = new ConcurrentHashMap<>();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "expiry-sweeper");
        t.setDaemon(true);
        return t;
    });

    public ExpirySweeper(DataSource dataSource, LaneEngine engine, Duration interval, int bucketsPerTickMax) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("expiry sweep interval must be positive: " + interval);
        }
        if (bucketsPerTickMax < 1) {
            throw new IllegalArgumentException("bucketsPerTickMax must be >= 1: " + bucketsPerTickMax);
        }
        this.dataSource = dataSource;
        this.engine = engine;
        this.interval = interval;
        this.bucketsPerTickMax = bucketsPerTickMax;
    }

    public void start() {
        scheduler.scheduleWithFixedDelay(this::tickQuietly, interval.toMillis(), interval.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void tickQuietly() {
        try {
            tick();
        } catch (SQLException | RuntimeException e) {
            log.warn("expiry sweep failed, next try in {}: {}", interval, e.toString());
        }
    }

    /** One pass: enqueue a sweep for every bucket with due holds (bounded). Returns how many. */
    public int tick() throws SQLException {
        int queued = 0;
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     SELECT b.tenant_id, b.item_id, b.bucket_no FROM buckets b
                      WHERE EXISTS (SELECT 1 FROM holds h
                                     WHERE h.tenant_id = b.tenant_id AND h.item_id = b.item_id
                                       AND h.bucket_no = b.bucket_no AND h.state = 'HELD' AND h.expires_at <= now())
                        AND NOT EXISTS (SELECT 1 FROM items i
                                         WHERE i.tenant_id = b.tenant_id AND i.item_id = b.item_id
                                           AND i.state IN ('FROZEN', 'IMPORTING', 'MOVED'))
                      LIMIT ?""")) {
            ps.setInt(1, bucketsPerTickMax);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String tenant = rs.getString(1);
                    String item = rs.getString(2);
                    int bucket = rs.getInt(3);
                    BucketKey key = new BucketKey(tenant, item, bucket);
                    CompletableFuture<Integer> prev = inFlight.get(key);
                    if (prev != null && !prev.isDone()) {
                        continue;
                    }
                    CompletableFuture<Integer> f = engine.sweep(tenant, item, bucket);
                    inFlight.put(key, f);
                    f.whenComplete((n, err) -> inFlight.remove(key, f));
                    queued++;
                }
            }
            c.commit();
        }
        return queued;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        try {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
