package io.lastunit.shard.lane;

import io.lastunit.common.Failure;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-writer lane: one thread that owns a set of buckets, drains its bounded queue in
 * batches, decides each batch in memory against its cached bucket counters, writes the whole
 * batch in one transaction (see {@link Batch}) and completes the callers only after the
 * commit. A hundred sales share one WAL flush.
 *
 * <p>Thread-safety: {@link #offer} may be called from any thread; everything else runs on the
 * lane's own thread, which asserts it. Hazard: the cache can be stale (a restart, a second
 * writer by mistake); the conditional bucket update makes that cost a redo, never an oversell.
 */
final class Lane implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(Lane.class);
    /** SQL states after which the batch is decided again: serialization, deadlock, CHECK. */
    private static final Set<String> REDO_STATES = Set.of("40001", "40P01", "23514");

    final int index;
    private final ArrayBlockingQueue<Op> queue;
    private final DataSource dataSource;
    private final LaneStore store;
    private final ItemStore items;
    private final LaneConfig config;
    private final Limits limits;
    private final InstantSource clock;
    private final Map<BucketKey, BucketState> buckets = new HashMap<>();
    private final ArrayDeque<Op> carry = new ArrayDeque<>();
    /** How often each carried operation has been carried; entries leave when the op completes. */
    private final java.util.IdentityHashMap<Op, Integer> carried = new java.util.IdentityHashMap<>();
    private volatile boolean running = true;
    private volatile Thread thread;
    /** Database clock minus local clock, in micros, measured at each bucket load. */
    private long dbOffsetMicros;

    final AtomicLong batches = new AtomicLong();
    final AtomicLong opsApplied = new AtomicLong();
    final AtomicLong redos = new AtomicLong();
    /** Database transactions committed by batches (a batch answered from the cache commits none). */
    final AtomicLong transactions = new AtomicLong();

    Lane(int index, DataSource dataSource, LaneStore store, ItemStore items, LaneConfig config, Limits limits,
         InstantSource clock) {
        this.index = index;
        this.queue = new ArrayBlockingQueue<>(config.queueCapacity());
        this.dataSource = dataSource;
        this.store = store;
        this.items = items;
        this.config = config;
        this.limits = limits;
        this.clock = clock;
    }

    boolean offer(Op op) {
        return queue.offer(op);
    }

    int depth() {
        return queue.size();
    }

    /** Stops taking work; the lane finishes what is queued, then its thread ends. */
    void stop() {
        running = false;
    }

    @Override
    public void run() {
        thread = Thread.currentThread();
        List<Op> batch = new ArrayList<>(config.batchMax());
        try {
            while (true) {
                batch.clear();
                while (!carry.isEmpty() && batch.size() < config.batchMax()) {
                    batch.add(carry.poll());
                }
                if (batch.isEmpty()) {
                    if (!running && queue.isEmpty()) {
                        break;
                    }
                    Op first = queue.poll(20, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        continue;
                    }
                    batch.add(first);
                }
                queue.drainTo(batch, config.batchMax() - batch.size());
                process(batch);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            failQueued();
        }
    }

    /** Fails whatever is still queued. Called by the lane as it ends, and by the engine after it. */
    void failQueued() {
        List<Op> left = new ArrayList<>(carry);
        carry.clear();
        carried.clear();
        queue.drainTo(left);
        for (Op op : left) {
            op.future().completeExceptionally(Failure.retryable(Reason.SHUTTING_DOWN,
                    "lane " + index + " stopped before applying this request", retryAfter()));
        }
    }

    private void assertOnLaneThread() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("lane " + index + " used from " + Thread.currentThread().getName());
        }
    }

    private void process(List<Op> batch) {
        assertOnLaneThread();
        batches.incrementAndGet();
        List<Op> work = new ArrayList<>(batch.size());
        for (Op op : batch) {
            try {
                if (op instanceof Op.CreateItem c) {
                    createItem(c);
                } else if (op instanceof Op.Restock r) {
                    restock(r);
                } else {
                    work.add(op);
                }
            } catch (RuntimeException e) {
                log.error("lane {}: {} failed", index, op.getClass().getSimpleName(), e);
                op.future().completeExceptionally(e);
            }
        }
        if (!work.isEmpty()) {
            applyBatch(work);
        }
        if (!carried.isEmpty()) {
            carried.keySet().removeIf(op -> op.future().isDone());
        }
    }

    /**
     * Decides and writes a batch, deciding again (at most {@code redoMax} times) when the
     * database refuses the cached view. Every operation is completed when this returns.
     */
    private void applyBatch(List<Op> ops) {
        Set<String> keysElsewhere = new HashSet<>();
        Set<BucketKey> reload = new HashSet<>();
        for (int attempt = 0; ; attempt++) {
            ops.removeIf(op -> op.future().isDone());
            if (ops.isEmpty()) {
                return;
            }
            for (BucketKey k : reload) {
                buckets.remove(k);
            }
            reload.clear();
            boolean committing = false;
            try (LazyConnection c = new LazyConnection(dataSource)) {
                Batch b = new Batch(this, c, ops, keysElsewhere);
                try {
                    Batch.Redo redo = b.decideAndWrite();
                    if (redo == null) {
                        committing = true;
                        if (c.opened()) {
                            c.commit();
                            transactions.incrementAndGet();
                        }
                        opsApplied.addAndGet(ops.size());
                        b.publish();
                        return;
                    }
                    c.rollbackQuietly();
                    redos.incrementAndGet();
                    reload.addAll(redo.buckets());
                    keysElsewhere.addAll(redo.keys());
                    log.debug("lane {}: redo {} ({})", index, attempt + 1, redo.why());
                    if (attempt >= config.redoMax()) {
                        failAll(ops, "the store refused the lane's view " + (attempt + 1) + " times: " + redo.why());
                        return;
                    }
                } catch (SQLException | RuntimeException e) {
                    c.rollbackQuietly();
                    throw e;
                }
            } catch (SQLException e) {
                invalidate(ops);
                if (!committing && REDO_STATES.contains(e.getSQLState()) && attempt < config.redoMax()) {
                    redos.incrementAndGet();
                    log.debug("lane {}: redo after SQL state {}: {}", index, e.getSQLState(), e.getMessage());
                    continue;
                }
                log.warn("lane {}: batch of {} failed{}: {}", index, ops.size(),
                        committing ? " during commit (outcome unknown)" : "", e.toString());
                failAll(ops, (committing ? "outcome unknown, commit failed: " : "store error: ") + e.getMessage());
                return;
            } catch (IllegalStateException e) {
                // An invariant broke while applying: crash this batch rather than oversell.
                invalidate(ops);
                log.error("lane {}: invariant broken, batch refused", index, e);
                for (Op op : ops) {
                    op.future().completeExceptionally(Failure.of(Reason.INVARIANT_BROKEN, e.getMessage()));
                }
                return;
            }
        }
    }

    private void failAll(List<Op> ops, String why) {
        for (Op op : ops) {
            op.future().completeExceptionally(Failure.retryable(Reason.STORE_UNAVAILABLE,
                    why + "; retry with the same idempotency key", retryAfter()));
        }
    }

    private void invalidate(List<Op> ops) {
        for (Op op : ops) {
            buckets.remove(op.bucket());
        }
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is broken; Hikari evicts it
        }
    }

    Duration retryAfter() {
        return Duration.ofMillis(config.retryAfterMs());
    }

    /** The cached bucket, loading it (with its item, keys and earliest expiry) on a miss; null if absent. */
    BucketState bucket(LazyConnection lazy, BucketKey key) throws SQLException {
        BucketState b = buckets.get(key);
        if (b != null) {
            return b;
        }
        Connection c = lazy.get();
        LaneStore.LoadedBucket loaded = store.loadBucket(c, key.tenantId(), key.itemId(), key.bucketNo());
        if (loaded == null) {
            return null;
        }
        dbOffsetMicros = loaded.dbNowMicros() - nowMicrosLocal();
        ItemConfig item = new ItemConfig(key.tenantId(), key.itemId(), loaded.homeRegion(), loaded.total(),
                loaded.perBuyerLimit(), loaded.holdTtlMs(), loaded.extendByMs(), loaded.bucketCount(), loaded.state());
        b = new BucketState(key, item, config.keyIndexMax());
        LaneStore.BucketRow row = loaded.bucket();
        b.setCounters(row.allotment(), row.available(), row.held(), row.sold());
        b.earliestDueMicros = loaded.earliestDueMicros();
        List<String> keys = store.bucketKeys(c, key.tenantId(), key.itemId(), key.bucketNo(), config.keyIndexMax());
        for (String k : keys) {
            b.addKey(k);
        }
        if (keys.size() > config.keyIndexMax()) {
            b.markKeysIncomplete();
        }
        buckets.put(key, b);
        return b;
    }

    BucketState cached(BucketKey key) {
        return buckets.get(key);
    }

    /** An estimate of the database clock, in epoch micros. */
    long dbNowMicros() {
        return nowMicrosLocal() + dbOffsetMicros;
    }

    private long nowMicrosLocal() {
        java.time.Instant now = clock.instant();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    LaneStore store() {
        return store;
    }

    LaneConfig config() {
        return config;
    }

    /**
     * Puts an operation into the next batch (a second call on a hold in the same batch, a key
     * whose first use is still being decided). Bounded: an operation carried more than
     * {@code redoMax + 1} times fails with STORE_UNAVAILABLE instead of circling forever.
     */
    void carryOver(Op op) {
        int n = carried.merge(op, 1, Integer::sum);
        if (n > config.redoMax() + 1) {
            carried.remove(op);
            op.future().completeExceptionally(Failure.retryable(Reason.STORE_UNAVAILABLE, "lane " + index
                    + " could not settle this request after " + (n - 1) + " batches; retry with the same key",
                    retryAfter()));
            return;
        }
        carry.add(op);
    }

    // ---- item-level operations, each in its own transaction (rare: admin calls) ----

    private void createItem(Op.CreateItem op) {
        var r = op.request();
        try (Connection c = dataSource.getConnection()) {
            try {
                boolean created = items.createItem(c, r.getTenantId(), r.getItemId(), r.getHomeRegion(), r.getTotal(),
                        r.getPerBuyerLimit(), op.holdTtlMs(), op.extendByMs(), 1);
                if (!created) {
                    ItemStore.ItemRow existing = items.readItem(c, r.getTenantId(), r.getItemId());
                    c.rollback();
                    ItemStore.ItemRow asked = new ItemStore.ItemRow(r.getHomeRegion(), r.getTotal(),
                            r.getPerBuyerLimit(), op.holdTtlMs(), op.extendByMs(), 1);
                    if (!asked.equals(existing)) {
                        op.future().completeExceptionally(Failure.of(Reason.ITEM_EXISTS, "item " + r.getTenantId()
                                + "/" + r.getItemId() + " exists with other parameters: existing=" + existing
                                + ", requested=" + asked));
                        return;
                    }
                }
                var stock = items.readStock(c, r.getTenantId(), r.getItemId());
                c.commit();
                op.future().complete(io.lastunit.api.inventory.v1.CreateItemResponse.newBuilder()
                        .setStock(stock).setCreated(created).build());
            } catch (SQLException e) {
                rollbackQuietly(c);
                throw e;
            }
        } catch (SQLException e) {
            op.future().completeExceptionally(Failure.retryable(Reason.STORE_UNAVAILABLE,
                    "CreateItem failed: " + e.getMessage(), retryAfter()));
        }
    }

    private void restock(Op.Restock op) {
        var r = op.request();
        try (Connection c = dataSource.getConnection()) {
            try {
                if (!items.recordRestock(c, r.getTenantId(), r.getRestockId(), r.getItemId(), r.getQuantity())) {
                    Object[] prev = items.readRestock(c, r.getTenantId(), r.getRestockId());
                    var stock = items.readStock(c, r.getTenantId(), r.getItemId());
                    c.rollback();
                    if (prev == null || !prev[0].equals(r.getItemId()) || (long) prev[1] != r.getQuantity() || stock == null) {
                        op.future().completeExceptionally(Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "restock_id "
                                + r.getRestockId() + " was used for item=" + (prev == null ? "?" : prev[0])
                                + " quantity=" + (prev == null ? "?" : prev[1])));
                        return;
                    }
                    op.future().complete(io.lastunit.api.inventory.v1.RestockResponse.newBuilder()
                            .setStock(stock).setApplied(false).build());
                    return;
                }
                LaneStore.BucketRow row = items.restock(c, r.getTenantId(), r.getItemId(), r.getQuantity(),
                        limits.itemTotalMax());
                if (row == null) {
                    boolean exists = items.readItem(c, r.getTenantId(), r.getItemId()) != null;
                    c.rollback();
                    op.future().completeExceptionally(exists
                            ? Failure.invalid("quantity", "is " + r.getQuantity() + ": the item's total would pass "
                                    + limits.itemTotalMax())
                            : Failure.of(Reason.ITEM_NOT_FOUND, "no item " + r.getTenantId() + "/" + r.getItemId()));
                    return;
                }
                var stock = items.readStock(c, r.getTenantId(), r.getItemId());
                c.commit();
                BucketState cached = buckets.get(op.bucket());
                if (cached != null) {
                    cached.setCounters(row.allotment(), row.available(), row.held(), row.sold());
                }
                op.future().complete(io.lastunit.api.inventory.v1.RestockResponse.newBuilder()
                        .setStock(stock).setApplied(true).build());
            } catch (SQLException e) {
                rollbackQuietly(c);
                throw e;
            }
        } catch (SQLException e) {
            buckets.remove(op.bucket());
            op.future().completeExceptionally(Failure.retryable(Reason.STORE_UNAVAILABLE,
                    "Restock outcome unknown: " + e.getMessage() + "; retry with the same restock_id", retryAfter()));
        }
    }
}
