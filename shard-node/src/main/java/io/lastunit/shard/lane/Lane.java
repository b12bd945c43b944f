package io.lastunit.shard.lane;

import io.lastunit.common.Failure;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.shard.escrow.Borrower;
import io.lastunit.shard.escrow.CachedRows;
import io.lastunit.shard.escrow.Collapser;
import io.lastunit.shard.escrow.ItemLedger;
import io.lastunit.shard.escrow.ItemLedgers;
import io.lastunit.shard.escrow.Promises;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.transfer.ShardTransfers;
import io.lastunit.shard.transfer.TransferStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-writer lane: one thread that owns a set of buckets, drains its bounded queue in
 * batches, decides each batch in memory against its cached bucket counters, writes the whole
 * batch in one transaction (see {@link Batch}) and completes the callers only after the
 * commit. A hundred sales share one WAL flush.
 *
 * <p>Thread-safety: {@link #offer} may be called from any thread; {@link #closeReplies} by the
 * engine once the lane thread ended; the completions it hands to {@link #reply} run on its
 * replier thread; everything else runs on the lane's own thread, which asserts it. Hazard: the cache can be stale (a restart, a second
 * writer by mistake); the conditional bucket update makes that cost a redo, never an oversell.
 */
final class Lane implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(Lane.class);
    /**
     * SQL states after which the batch is decided again: serialization, deadlock, CHECK, and a
     * lock wait longer than allowed (a borrow's {@link Borrower#BORROW_LOCK_TIMEOUT_MILLIS} is handled
     * before these, outside {@code redoMax}; this covers a role's own lock_timeout).
     */
    private static final Set<String> REDO_STATES = Set.of("40001", "40P01", "23514", "55P03");
    private static final String LOCK_NOT_AVAILABLE = "55P03";
    /**
     * Redos after a borrow's lock wait was cut short that do not count in {@code redoMax}: a
     * commit stalled elsewhere (the disk) should not fail every Reserve of a batch for that alone.
     * After these, such redos count like any other.
     */
    static final int LOCK_TIMEOUT_REDOS_MAX = 8;

    final int index;
    private final LaneEngine engine;
    private final ItemLedgers ledgers;
    private final Borrower borrower;
    private final Collapser collapser;
    private final ShardTransfers transfers;
    private final ItemOperations itemOperations;
    private final LaneQueue queue;
    private final DataSource dataSource;
    private final LaneStore store;
    private final ItemStore items;
    private final LaneConfig config;
    private final Limits limits;
    private final InstantSource clock;
    private final Map<BucketKey, BucketState> buckets = new HashMap<>();
    /** The cache as item operations, transfers and collapses see it. */
    private final CachedRows cachedRows = new CachedRows() {
        @Override
        public void committed(LaneStore.BucketRow row) {
            BucketState cached = buckets.get(new BucketKey(row.tenantId(), row.itemId(), row.bucketNo()));
            if (cached != null) {
                cached.setCounters(row.allotment(), row.available(), row.held(), row.sold(), row.lent());
            }
        }

        @Override
        public void forget(String tenant, String item, int bucketNo) {
            buckets.remove(new BucketKey(tenant, item, bucketNo));
        }
    };
    private final ArrayDeque<Op> carry = new ArrayDeque<>();
    /** How often each carried operation has been carried; entries leave when the op completes. */
    private final IdentityHashMap<Op, Integer> carried = new IdentityHashMap<>();
    /**
     * Reserves whose key the bucket's fingerprint index knew but the holds table did not have (a
     * fingerprint collision, or an insert that was rolled back): decided as new keys from then
     * on. Entries leave when the op completes.
     */
    private final Set<Op> keyAbsent = Collections.newSetFromMap(new IdentityHashMap<>());
    /**
     * Answers the callers of committed batches, so that the lane starts its next batch while
     * the replies of the last one go out (waking blocked callers, serializing gRPC replies).
     * One thread, so a lane's callers are answered in commit order. Bounded: past
     * {@link #REPLY_BATCHES_MAX} batches waiting, the lane answers inline and slows down.
     */
    private final ThreadPoolExecutor replier;
    private final AtomicInteger repliesWaiting = new AtomicInteger();
    static final int REPLY_BATCHES_MAX = 64;
    private volatile boolean running = true;
    private volatile Thread thread;
    /** When the lane started its last batch ({@link System#nanoTime}); lane thread only. */
    private long batchStartNanos;
    /** Database clock minus local clock, in micros, measured at each bucket load. */
    private long dbOffsetMicros;

    final AtomicLong batches = new AtomicLong();
    final AtomicLong opsApplied = new AtomicLong();
    final AtomicLong redos = new AtomicLong();
    /** Database transactions committed by batches (a batch answered from the cache commits none). */
    final AtomicLong transactions = new AtomicLong();
    /** Of {@link #transactions}, those written as one statement that committed itself. */
    final AtomicLong oneStatementBatches = new AtomicLong();
    /** One-statement batches the database refused (nothing written), decided again statement by statement. */
    final AtomicLong oneStatementRefusals = new AtomicLong();
    /** Batches that waited for the batch interval before they started ({@link #pace}). */
    final AtomicLong paced = new AtomicLong();
    /** Buckets loaded whole into the cache: the row and the bucket's idempotency keys. */
    final AtomicLong bucketLoads = new AtomicLong();
    /** Of the batches that committed a transaction: nanoseconds from the start of the decision to the end of the commit. */
    final AtomicLong writeNanos = new AtomicLong();
    /** Batches decided again because a borrow's lock wait was cut short (SQL state 55P03). */
    final AtomicLong borrowLockTimeouts = new AtomicLong();

    Lane(int index, LaneEngine engine, ItemLedgers ledgers, DataSource dataSource, LaneStore store, ItemStore items,
         LaneConfig config, Limits limits, InstantSource clock) {
        this.index = index;
        this.engine = engine;
        this.ledgers = ledgers;
        this.borrower = new Borrower(dataSource, store, this::dbNowMicros, engine::sweep);
        this.collapser = new Collapser(index, dataSource, items, ledgers, config.keyIndexMax(), config.collapseBelow(),
                engine::collapse);
        this.transfers = new ShardTransfers(dataSource, new TransferStore(), items, ledgers, cachedRows,
                Duration.ofMillis(config.retryAfterMs()));
        this.itemOperations = new ItemOperations(dataSource, items, ledgers, cachedRows, config, limits);
        this.queue = new LaneQueue(config.queueCapacity());
        this.dataSource = dataSource;
        this.store = store;
        this.items = items;
        this.config = config;
        this.limits = limits;
        this.clock = clock;
        this.replier = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "lane-" + index + "-replies");
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * Runs a committed batch's completions on the replier thread (inline when it is behind or
     * shut down). Called after the batch's state is published.
     */
    void reply(List<Runnable> completions) {
        if (completions.isEmpty()) {
            return;
        }
        if (repliesWaiting.incrementAndGet() <= REPLY_BATCHES_MAX) {
            try {
                replier.execute(() -> {
                    try {
                        runAll(completions);
                    } finally {
                        repliesWaiting.decrementAndGet();
                    }
                });
                return;
            } catch (RejectedExecutionException shutDown) {
                // fall through: answer here
            }
        }
        repliesWaiting.decrementAndGet();
        runAll(completions);
    }

    private static void runAll(List<Runnable> completions) {
        for (Runnable r : completions) {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.error("completing a caller failed", e);
            }
        }
    }

    /** After the lane thread ended: lets the replier finish what it was given (bounded wait). */
    void closeReplies() throws InterruptedException {
        replier.shutdown();
        if (!replier.awaitTermination(10, TimeUnit.SECONDS)) {
            log.warn("lane {}: replies still running after 10 s", index);
        }
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
        batchStartNanos = System.nanoTime() - config.batchIntervalMicros() * 1_000; // the first batch starts at once
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
                pace(batch.size());
                queue.drainTo(batch, config.batchMax() - batch.size());
                process(batch);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            failQueued();
        }
    }

    /**
     * Keeps a busy lane's batches at least {@code batch-interval-micros} apart, measured from
     * the start of one to the start of the next, unless {@code pace-below} operations (with the
     * {@code inHand} it already took; at most a full batch) are waiting: the lane then starts at
     * once, and it stops waiting as soon as that many arrive. A lane that was idle for the
     * interval starts at once too, so pacing never delays a lone request; it only lets a lane
     * that would otherwise commit back to back gather more per commit (docs/lanes.md, "Pacing").
     */
    private void pace(int inHand) {
        long interval = config.batchIntervalMicros() * 1_000;
        if (interval == 0) {
            return; // pacing off (the default): nothing to wait for, nothing to remember
        }
        long wait = batchStartNanos + interval - System.nanoTime();
        int enough = Math.min(config.paceBelow(), config.batchMax());
        if (wait > 0 && inHand + queue.size() < enough) {
            paced.incrementAndGet();
            queue.awaitSize(enough - inHand, wait);
        }
        batchStartNanos = System.nanoTime();
    }

    /** Fails whatever is still queued. Called by the lane as it ends, and by the engine after it. */
    void failQueued() {
        List<Op> left = new ArrayList<>(carry);
        carry.clear();
        carried.clear();
        keyAbsent.clear();
        queue.drainTo(left, Integer.MAX_VALUE);
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
                    itemOperations.createItem(c);
                } else if (op instanceof Op.Restock r) {
                    itemOperations.restock(r);
                } else if (op instanceof Op.Collapse x) {
                    collapse(x);
                } else if (op instanceof Op.TransferOut t) {
                    answer(t.future(), () -> transfers.out(t.request()));
                } else if (op instanceof Op.TransferIn t) {
                    answer(t.future(), () -> transfers.in(t.request()));
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
        if (!keyAbsent.isEmpty()) {
            keyAbsent.removeIf(op -> op.future().isDone());
        }
    }

    /** Completes {@code f} with what {@code step} returns, or with the {@link Failure} it throws. */
    private static <T> void answer(CompletableFuture<T> f, Supplier<T> step) {
        try {
            f.complete(step.get());
        } catch (Failure e) {
            f.completeExceptionally(e);
        }
    }

    /** The table has no hold with this Reserve's key although the bucket's index named it. */
    void markKeyAbsent(Op.Reserve op) {
        keyAbsent.add(op);
    }

    /** True when a lookup found this Reserve's key absent: the index's "known" was a collision. */
    boolean keyAbsent(Op.Reserve op) {
        return keyAbsent.contains(op);
    }

    /**
     * Decides and writes a batch, deciding again (at most {@code redoMax} times) when the
     * database refuses the cached view. Every operation is completed when this returns.
     */
    private void applyBatch(List<Op> ops) {
        List<Batch> attempts = new ArrayList<>(2);
        Promises promises = new Promises();
        try {
            applyAttempts(ops, attempts, promises);
        } finally {
            promises.releaseAll(); // after the commit, if there was one
            Batch.publishBorrows(attempts);
        }
    }

    private void applyAttempts(List<Op> ops, List<Batch> attempts, Promises promises) {
        Set<io.lastunit.shard.store.KeyRef> keysElsewhere = new HashSet<>();
        Set<BucketKey> reload = new HashSet<>();
        boolean stepwise = false;
        int lockTimeouts = 0;
        for (int attempt = 0; ; attempt++) {
            ops.removeIf(op -> op.future().isDone());
            if (ops.isEmpty()) {
                return;
            }
            for (BucketKey k : reload) {
                BucketState stale = buckets.get(k);
                if (stale != null) {
                    stale.stale = true; // counters only: the key set stays valid
                }
            }
            reload.clear();
            boolean committing = false;
            Batch b = null;
            try (LazyConnection c = new LazyConnection(dataSource)) {
                b = new Batch(this, c, ops, keysElsewhere, stepwise, promises);
                attempts.add(b);
                try {
                    long decideNanos = System.nanoTime();
                    Batch.Redo redo = b.decideAndWrite();
                    if (redo == null) {
                        committing = true;
                        b.raiseBeforeCommit();
                        if (b.committedInStatement()) {
                            transactions.incrementAndGet();
                            oneStatementBatches.incrementAndGet();
                            writeNanos.addAndGet(System.nanoTime() - decideNanos);
                        } else if (c.opened()) {
                            c.commit();
                            transactions.incrementAndGet();
                            writeNanos.addAndGet(System.nanoTime() - decideNanos);
                        }
                        opsApplied.addAndGet(ops.size());
                        b.publish();
                        return;
                    }
                    c.rollbackQuietly();
                    if (b.refusedInOneStatement()) {
                        // Nothing was written. Decide again with the separate statements, which say
                        // precisely which key or bucket was off; this is not one of the redoMax redos.
                        stepwise = true;
                        oneStatementRefusals.incrementAndGet();
                        attempt--;
                        log.debug("lane {}: {}; deciding again statement by statement", index, redo.why());
                        continue;
                    }
                    redos.incrementAndGet();
                    reload.addAll(redo.buckets());
                    keysElsewhere.addAll(redo.keys());
                    log.debug("lane {}: redo {} ({})", index, attempt + 1, redo.why());
                    if (attempt >= config.redoMax()) {
                        log.warn("lane {}: the store refused the lane's view of a batch of {} {} times; last: {}",
                                index, ops.size(), attempt + 1, redo.why());
                        failAll(ops, Failure.retryable(Reason.STORE_UNAVAILABLE, "lane " + index + ": the store refused"
                                + " the lane's view " + (attempt + 1) + " times; retry with the same idempotency key",
                                retryAfter()));
                        return;
                    }
                } catch (SQLException | RuntimeException e) {
                    c.rollbackQuietly();
                    throw e;
                }
            } catch (SQLException e) {
                invalidate(ops);
                if (!committing && LOCK_NOT_AVAILABLE.equals(e.getSQLState())
                        && lockTimeouts < LOCK_TIMEOUT_REDOS_MAX) {
                    // A borrow gave up a lock wait (a commit stalled elsewhere: borrows lock in
                    // bucket order and commit at once, so not a cycle): decide again. Up to
                    // LOCK_TIMEOUT_REDOS_MAX such redos do not count in redoMax; after that they do.
                    lockTimeouts++;
                    attempt--;
                    redos.incrementAndGet();
                    borrowLockTimeouts.incrementAndGet();
                    log.debug("lane {}: redo after a lock wait of {} ms: {}", index,
                            Borrower.BORROW_LOCK_TIMEOUT_MILLIS, e.getMessage());
                    continue;
                }
                if (!committing && REDO_STATES.contains(e.getSQLState()) && attempt < config.redoMax()) {
                    redos.incrementAndGet();
                    log.debug("lane {}: redo after SQL state {}: {}", index, e.getSQLState(), e.getMessage());
                    continue;
                }
                boolean unknown = committing || (b != null && b.oneStatementSent());
                failAll(ops, Failure.storeUnavailable("lane " + index + ": " + (unknown
                        ? "the batch's commit failed, outcome unknown" : "the store failed the batch")
                        + "; retry with the same idempotency key", e, retryAfter()));
                return;
            } catch (IllegalStateException e) {
                // An invariant broke while applying: crash this batch rather than oversell.
                invalidate(ops);
                Failure broken = Failure.logged(Reason.INVARIANT_BROKEN, "lane " + index
                        + ": an invariant broke while applying the batch; it was refused, nothing of it committed", e,
                        null);
                for (Op op : ops) {
                    op.future().completeExceptionally(broken);
                }
                return;
            }
        }
    }

    private static void failAll(List<Op> ops, Failure f) {
        for (Op op : ops) {
            op.future().completeExceptionally(f);
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

    /**
     * The cached bucket, loading it (with its item, keys and earliest expiry) on a miss and
     * refreshing its counters when a redo marked it stale; null if absent. Also makes sure the
     * engine knows the item's ledger.
     */
    BucketState bucket(LazyConnection lazy, BucketKey key) throws SQLException {
        BucketState b = buckets.get(key);
        if (b != null && !b.stale) {
            return b;
        }
        Connection c = lazy.get();
        LaneStore.LoadedBucket loaded = store.loadBucket(c, key.tenantId(), key.itemId(), key.bucketNo());
        if (loaded == null) {
            buckets.remove(key);
            return null;
        }
        dbOffsetMicros = loaded.dbNowMicros() - nowMicrosLocal();
        ItemConfig item = new ItemConfig(key.tenantId(), key.itemId(), loaded.homeRegion(), loaded.total(),
                loaded.perBuyerLimit(), loaded.holdTtlMs(), loaded.extendByMs(), loaded.bucketCount(), loaded.state());
        LaneStore.BucketRow row = loaded.bucket();
        if (b != null) {
            b.item = item;
            b.setCounters(row.allotment(), row.available(), row.held(), row.sold(), row.lent());
            b.earliestDueMicros = loaded.earliestDueMicros();
            b.stale = false;
            ledgers.load(c, key.tenantId(), key.itemId());
            return b;
        }
        b = new BucketState(key, item, config.keyIndexMax());
        bucketLoads.incrementAndGet();
        b.setCounters(row.allotment(), row.available(), row.held(), row.sold(), row.lent());
        b.earliestDueMicros = loaded.earliestDueMicros();
        List<String> keys = store.bucketKeys(c, key.tenantId(), key.itemId(), key.bucketNo(), config.keyIndexMax());
        for (String k : keys) {
            b.addKey(k);
        }
        if (keys.size() > config.keyIndexMax()) {
            b.markKeysIncomplete();
        }
        ItemLedger ledger = ledgers.load(c, key.tenantId(), key.itemId());
        if (key.bucketNo() == 0 && ledger != null && ledger.open().length == 1 && ledger.bucketCount > 1) {
            // Collapsed: bucket 0 answers for keys placed in the closed buckets too.
            addKeys(b, items.keysOutsideBucket0(c, key.tenantId(), key.itemId(), config.keyIndexMax()));
        }
        buckets.put(key, b);
        return b;
    }

    private void addKeys(BucketState b, List<String> keys) {
        for (String k : keys) {
            b.addKey(k);
        }
        if (keys.size() > config.keyIndexMax()) {
            b.markKeysIncomplete();
        }
    }

    /** The item's ledger, if this node knows the item. */
    ItemLedger ledger(BucketKey key) {
        return ledgers.get(key.tenantId(), key.itemId());
    }

    Borrower borrower() {
        return borrower;
    }

    Collapser collapser() {
        return collapser;
    }

    LaneEngine engine() {
        return engine;
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

    /** Collapses the item's buckets into bucket 0 and teaches bucket 0 the closed buckets' keys. */
    private void collapse(Op.Collapse op) {
        BucketKey k = op.bucket();
        try {
            Collapser.Collapsed done = collapser.collapse(k.tenantId(), k.itemId());
            if (done != null) {
                BucketState b0 = buckets.get(k);
                if (b0 != null) {
                    LaneStore.BucketRow row = done.bucket0();
                    b0.setCounters(row.allotment(), row.available(), row.held(), row.sold(), row.lent());
                    addKeys(b0, done.keysOutsideBucket0());
                }
            }
            op.future().complete(done != null);
        } catch (SQLException e) {
            if (!Collapser.changedNothing(e)) {
                buckets.remove(k); // bucket 0's cached row and keys may be off: reload them
            }
            op.future().completeExceptionally(e);
        }
    }
}
