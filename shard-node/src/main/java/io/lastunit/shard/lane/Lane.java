package io.lastunit.shard.lane;

import io.lastunit.shard.store.WriteGate;
import io.lastunit.common.Failure;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.shard.escrow.Borrower;
import io.lastunit.shard.escrow.Collapser;
import io.lastunit.shard.escrow.ItemLedgers;
import io.lastunit.shard.escrow.Promises;
import io.lastunit.shard.fence.Fence;
import io.lastunit.shard.lane.RedoPolicy.Stage;
import io.lastunit.shard.lane.RedoPolicy.Verdict;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.KeyRef;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.Transactions;
import io.lastunit.shard.transfer.ShardTransfers;
import io.lastunit.shard.transfer.TransferStore;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-writer lane: one thread that owns a set of buckets, drains its bounded queue in
 * batches, decides each batch in memory against its cached bucket counters, writes the whole
 * batch in one transaction (see {@link Batch}) and completes the callers only after the
 * commit. A hundred sales share one WAL flush.
 *
 * <p>Thread-safety: {@link #offer} may be called from any thread; {@link #closeReplies} by the
 * engine once the lane thread ended; the completions it hands to its {@link Replier} run on
 * that thread; everything else runs on the lane's own thread, which asserts it. Hazard: the cache can be stale (a restart, a second
 * writer by mistake); the conditional bucket update makes that cost a redo, never an oversell.
 */
final class Lane implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(Lane.class);
    /**
     * Redos after a borrow's lock wait was cut short that do not count in {@code redoMax}: a
     * commit stalled elsewhere (the disk) should not fail every Reserve of a batch for that alone.
     * After these, such redos count like any other.
     */
    static final int LOCK_TIMEOUT_REDOS_MAX = 8;

    final int index;
    private final LaneQueue queue;
    private final Transactions transactions;
    private final LaneConfig config;
    private final BucketCache cache;
    private final CarryOver carry;
    private final Replier replier;
    private final Collapser collapser;
    private final ShardTransfers transfers;
    private final ItemOperations itemOperations;
    /** The lane's seated items (docs/seats.md). */
    private final SeatLane seats;
    /** What every attempt at a batch works with. */
    private final Batch.Collaborators rooms;
    private final WriteGate gate;
    private final LaneEngine engine;
    private volatile boolean running = true;
    private volatile Thread thread;
    /** When the lane started its last batch ({@link System#nanoTime}); lane thread only. */
    private long batchStartNanos;

    final AtomicLong batches = new AtomicLong();
    /** True while the lane is inside a batch (its operations wait on it): readiness counts it as work in hand. */
    volatile boolean busy;
    final AtomicLong opsApplied = new AtomicLong();
    final AtomicLong redos = new AtomicLong();
    /** Database transactions committed by batches (a batch answered from the cache commits none). */
    final AtomicLong commits = new AtomicLong();
    /** Of {@link #commits}, those written as one statement that committed itself. */
    final AtomicLong oneStatementBatches = new AtomicLong();
    /** One-statement batches the database refused (nothing written), decided again statement by statement. */
    final AtomicLong oneStatementRefusals = new AtomicLong();
    /** Batches that waited for the batch interval before they started ({@link #pace}). */
    final AtomicLong paced = new AtomicLong();
    /** Of the batches that committed a transaction: nanoseconds from the start of the decision to the end of the commit. */
    final AtomicLong writeNanos = new AtomicLong();
    /** Batches decided again because a borrow's lock wait was cut short (SQL state 55P03). */
    final AtomicLong borrowLockTimeouts = new AtomicLong();
    /** Operations refused because the write gate was closed (no synchronous standby connected). */
    final AtomicLong gateRefusals = new AtomicLong();
    /** Batches failed because a CHECK constraint refused what the lane decided (SQL state 23514): bugs. */
    final AtomicLong checkViolations = new AtomicLong();

    Lane(int index, LaneEngine engine, ItemLedgers ledgers, Transactions transactions, LaneStore store,
         ItemStore items, LaneConfig config, Limits limits, InstantSource clock, Fence fence) {
        this.index = index;
        this.gate = engine.gate();
        this.engine = engine;
        this.queue = new LaneQueue(config.queueCapacity());
        this.transactions = transactions;
        this.config = config;
        DbClock dbClock = new DbClock(clock);
        this.cache = new BucketCache(store, items, ledgers, dbClock, config.keyIndexMax());
        this.carry = new CarryOver(index, config.redoMax(), retryAfter());
        this.replier = new Replier(index);
        Borrower borrower = new Borrower(transactions, store, dbClock::nowMicros, engine::sweep);
        this.collapser = new Collapser(index, transactions, items, ledgers, config.keyIndexMax(),
                config.collapseBelow(), engine::collapse);
        this.transfers = new ShardTransfers(transactions, new TransferStore(), items, ledgers, cache, retryAfter(),
                fence);
        this.itemOperations = new ItemOperations(transactions, items, ledgers, cache, config, limits, fence);
        this.seats = new SeatLane(index, transactions, replier, fence, retryAfter(), clock);
        this.rooms = new Batch.Collaborators(store, cache, ledgers, dbClock, config, borrower, collapser, carry,
                replier, engine::reroute, fence);
    }

    Borrower borrower() {
        return rooms.borrower();
    }

    long collapses() {
        return collapser.collapses();
    }

    long bucketLoads() {
        return cache.bucketLoads.get();
    }

    /** After the lane thread ended: lets the replier finish what it was given (bounded wait). */
    void closeReplies() throws InterruptedException {
        replier.close();
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
                carry.drainTo(batch, config.batchMax());
                if (batch.isEmpty()) {
                    if (!running && queue.isEmpty()) {
                        break;
                    }
                    Op first = queue.poll(20, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        seats.idle(); // a seat write the database refused is decided again now
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
            seats.close();
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
        List<Op> left = new ArrayList<>(carry.takeAll());
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

    /**
     * Item-level operations first, each in a transaction of its own; then the rest as one batch;
     * then the tenants' cached buckets that a move asked to drop ({@link Op.Forget}), so whatever
     * the lane took before that request has been written when it is answered.
     */
    private void process(List<Op> batch) {
        busy = true;
        try {
            processBatch(batch);
            seats.idle();
        } finally {
            busy = false;
        }
    }

    private void processBatch(List<Op> batch) {
        assertOnLaneThread();
        batches.incrementAndGet();
        engine.observer().batch(index, batch.size());
        String closed = gate.closedBecause();
        if (closed != null) {
            refuseWrites(batch, closed);
            return;
        }
        List<Op> work = new ArrayList<>(batch.size());
        List<Op> seatWork = List.of();
        List<Op.Forget> forgets = List.of();
        for (Op op : batch) {
            try {
                if (op instanceof Op.Forget g) {
                    forgets = forgets.isEmpty() ? new ArrayList<>() : forgets;
                    forgets.add(g);
                } else if (op instanceof Op.CreateItem c) {
                    if (c.request().getKind() == io.lastunit.api.inventory.v1.ItemKind.SEATED) {
                        seats.createItem(c);
                    } else {
                        itemOperations.createItem(c);
                    }
                } else if (op instanceof Op.Restock r) {
                    Boolean seated = seated(op);
                    if (seated == null) {
                        continue;
                    }
                    if (seated) {
                        seats.restock(r);
                    } else if (r.request().hasSeatMap()) {
                        r.future().completeExceptionally(Failure.invalid("seat_map", "is for SEATED items; item "
                                + r.request().getItemId() + " is COUNTED"));
                    } else {
                        itemOperations.restock(r);
                    }
                } else if (op instanceof Op.SetSeats x) {
                    Boolean seated = seated(op);
                    if (seated == null) {
                        continue;
                    }
                    if (seated) {
                        seatWork = seatWork.isEmpty() ? new ArrayList<>() : seatWork;
                        seatWork.add(x);
                    } else {
                        x.future().completeExceptionally(Failure.of(Reason.ITEM_NOT_FOUND, "no SEATED item "
                                + x.request().getTenantId() + "/" + x.request().getItemId() + " on this shard"));
                    }
                } else if (op instanceof Op.Collapse x) {
                    collapse(x);
                } else if (op instanceof Op.TransferOut t) {
                    answer(t.future(), () -> transfers.out(t.request()));
                } else if (op instanceof Op.TransferIn t) {
                    answer(t.future(), () -> transfers.in(t.request()));
                } else {
                    Boolean seated = seated(op);
                    if (seated == null) {
                        continue;
                    }
                    if (seated) {
                        seatWork = seatWork.isEmpty() ? new ArrayList<>() : seatWork;
                        seatWork.add(op);
                    } else if (op instanceof Op.Reserve r && r.request().hasSeats()
                            && seats.knownCounted(op)) {
                        r.future().completeExceptionally(Failure.invalid("seats", "is for SEATED items; item "
                                + r.request().getItemId() + " is COUNTED: ask for a quantity"));
                    } else {
                        work.add(op);
                    }
                }
            } catch (RuntimeException e) {
                log.error("lane {}: {} failed", index, op.getClass().getSimpleName(), e);
                op.future().completeExceptionally(e);
            }
        }
        if (!work.isEmpty()) {
            applyBatch(work);
        }
        if (!seatWork.isEmpty()) {
            seats.apply(seatWork);
        }
        if (!forgets.isEmpty()) {
            forget(forgets);
        }
        carry.forgetCompleted();
    }

    /**
     * The write gate is closed: every operation that would write is refused at once, nothing sent
     * to the database (UNAVAILABLE / STANDBY_MISSING, definite); dropping cached buckets still
     * happens, it writes nothing.
     */
    private void refuseWrites(List<Op> batch, String why) {
        List<Op.Forget> forgets = new ArrayList<>();
        Failure refusal = Failure.retryable(Reason.STANDBY_MISSING, "shard lane " + index + ": " + why, retryAfter());
        for (Op op : batch) {
            if (op instanceof Op.Forget g) {
                forgets.add(g);
            } else {
                op.future().completeExceptionally(refusal);
            }
        }
        gateRefusals.addAndGet(batch.size() - forgets.size());
        engine.observer().refused(Reason.STANDBY_MISSING, batch.size() - forgets.size());
        if (!forgets.isEmpty()) {
            forget(forgets);
        }
        carry.forgetCompleted();
    }

    /**
     * Drops the tenants' cached buckets; the next operation on one reloads it, with its item's state
     * as committed. Answered through the replier, behind the answers of the batches before it.
     */
    private void forget(List<Op.Forget> forgets) {
        List<Runnable> completions = new ArrayList<>(forgets.size());
        for (Op.Forget g : forgets) {
            cache.forgetTenant(g.tenantId());
            seats.forgetTenant(g.tenantId());
            completions.add(() -> g.future().complete(null));
        }
        replier.reply(completions);
    }

    /**
     * Whether the op's item is SEATED (true), COUNTED or unknown here (false); null when its kind
     * could not be read (the op is then failed, retryable).
     */
    private Boolean seated(Op op) {
        if (cache.get(op.bucket()) != null) {
            return false; // a bucket the counted path has loaded
        }
        try {
            return seats.owns(op);
        } catch (SQLException e) {
            op.future().completeExceptionally(Failure.storeUnavailable("could not read the item's kind; retry", e,
                    retryAfter(), op.bucket().tenantId(), op.bucket().itemId()));
            return null;
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

    /** What the attempts at one batch have in common: what to treat as known, how often they were refused. */
    private static final class Attempts {
        final Set<KeyRef> keysElsewhere = new HashSet<>();
        final Set<BucketKey> reload = new HashSet<>();
        boolean stepwise;
        int lockTimeouts;
    }

    private void applyAttempts(List<Op> ops, List<Batch> attempts, Promises promises) {
        Attempts state = new Attempts();
        for (int attempt = 0; ; attempt++) {
            ops.removeIf(op -> op.future().isDone());
            if (ops.isEmpty()) {
                return;
            }
            for (BucketKey k : state.reload) {
                cache.markStale(k); // counters only: the key set stays valid
            }
            state.reload.clear();
            Stage stage = Stage.BEFORE_COMMIT;
            try (LazyConnection c = new LazyConnection(transactions)) {
                Batch b = new Batch(rooms, c, ops, state.keysElsewhere, state.stepwise, promises);
                attempts.add(b);
                try {
                    long decideNanos = System.nanoTime();
                    Batch.Result result = b.decideAndWrite();
                    if (result instanceof Batch.Written w) {
                        stage = Stage.COMMIT;
                        commit(b, w, c, decideNanos);
                        opsApplied.addAndGet(ops.size());
                        b.publish();
                        return;
                    }
                    c.rollbackQuietly();
                    Batch.Redo redo = (Batch.Redo) result;
                    if (redo.statementByStatement()) {
                        // Nothing was written. Decide again with the separate statements, which say
                        // precisely which key or bucket was off; this is not one of the redoMax redos.
                        state.stepwise = true;
                        oneStatementRefusals.incrementAndGet();
                        engine.observer().redo(index, "one_statement_refused");
                        attempt--;
                        log.debug("lane {}: {}; deciding again statement by statement", index, redo.why());
                        continue;
                    }
                    if (refused(ops, redo, attempt, state)) {
                        return;
                    }
                } catch (SQLException | RuntimeException e) {
                    c.rollbackQuietly();
                    throw e;
                }
            } catch (SQLException e) {
                invalidate(ops);
                if (e instanceof Batch.SelfCommitFailed) {
                    stage = Stage.SELF_COMMITTING_STATEMENT;
                }
                AfterFailure next = redoAfter(ops, e, stage, attempt, state);
                if (next == AfterFailure.FAILED) {
                    return;
                }
                if (next == AfterFailure.REDO_UNCOUNTED) {
                    attempt--;
                }
            } catch (IllegalStateException e) {
                // An invariant broke while applying: crash this batch rather than oversell.
                invalidate(ops);
                failAll(ops, Failure.logged(Reason.INVARIANT_BROKEN, "lane " + index
                        + ": an invariant broke while applying the batch; it was refused, nothing of it committed", e,
                        null));
                return;
            }
        }
    }

    /** Commits a decided attempt (unless its one statement committed it) and counts it. */
    private void commit(Batch b, Batch.Written w, LazyConnection c, long decideNanos) throws SQLException {
        b.raiseBeforeCommit();
        if (w.committedItself()) {
            oneStatementBatches.incrementAndGet();
        } else if (c.opened()) {
            c.commit();
        } else {
            return;
        }
        long nanos = System.nanoTime() - decideNanos;
        commits.incrementAndGet();
        writeNanos.addAndGet(nanos);
        engine.observer().committed(index, b.decided(), b.nowMicros(), nanos);
    }

    /**
     * The database refused the attempt's view: reload what it names and decide again, or, past
     * {@code redoMax}, fail the batch. True when the batch was failed.
     */
    private boolean refused(List<Op> ops, Batch.Redo redo, int attempt, Attempts state) {
        redos.incrementAndGet();
        engine.observer().redo(index, "stale_view");
        state.reload.addAll(redo.buckets());
        state.keysElsewhere.addAll(redo.keys());
        log.debug("lane {}: redo {} ({})", index, attempt + 1, redo.why());
        if (attempt < config.redoMax()) {
            return false;
        }
        log.warn("lane {}: the store refused the lane's view of a batch of {} {} times; last: {}",
                index, ops.size(), attempt + 1, redo.why());
        engine.observer().refused(Reason.STORE_UNAVAILABLE, ops.size());
        failAll(ops, Failure.retryable(Reason.STORE_UNAVAILABLE, "lane " + index + ": the store refused"
                + " the lane's view " + (attempt + 1) + " times; retry with the same idempotency key", retryAfter()));
        return true;
    }

    /** What comes after an attempt whose statement or commit failed. */
    private enum AfterFailure {
        /** Decide again; the attempt does not count towards {@code redoMax}. */
        REDO_UNCOUNTED,
        /** Decide again; the attempt counts. */
        REDO,
        /** Every operation of the batch was failed. */
        FAILED
    }

    /** After a statement or the commit of an attempt failed: what {@link RedoPolicy} says, within the lane's bounds. */
    private AfterFailure redoAfter(List<Op> ops, SQLException e, Stage stage, int attempt, Attempts state) {
        Verdict v = RedoPolicy.classify(e.getSQLState(), stage);
        if (v == Verdict.REDO_FREE && state.lockTimeouts < LOCK_TIMEOUT_REDOS_MAX) {
            // A borrow gave up a lock wait (a commit stalled elsewhere: borrows lock in bucket order
            // and commit at once, so not a cycle): decide again, not counted in redoMax.
            state.lockTimeouts++;
            redos.incrementAndGet();
            borrowLockTimeouts.incrementAndGet();
            engine.observer().redo(index, "lock_timeout");
            log.debug("lane {}: redo after a lock wait of {} ms: {}", index, Borrower.BORROW_LOCK_TIMEOUT_MILLIS,
                    e.getMessage());
            return AfterFailure.REDO_UNCOUNTED;
        }
        if ((v == Verdict.REDO || v == Verdict.REDO_FREE) && attempt < config.redoMax()) {
            redos.incrementAndGet();
            engine.observer().redo(index, "sql_" + e.getSQLState());
            log.debug("lane {}: redo after SQL state {}: {}", index, e.getSQLState(), e.getMessage());
            return AfterFailure.REDO;
        }
        if (v == Verdict.BUG) {
            checkViolations.incrementAndGet();
            failAll(ops, Failure.logged(Reason.INVARIANT_BROKEN, "lane " + index + ": a constraint of the store"
                    + " refused what the lane decided (SQL state " + e.getSQLState() + "); nothing of the batch"
                    + " committed", e, null));
            return AfterFailure.FAILED;
        }
        boolean unknown = stage != Stage.BEFORE_COMMIT;
        if (unknown) {
            for (Op op : ops) {
                cache.doubt(op.bucket()); // its keys may have holds a later load does not see yet
            }
            engine.observer().unknownOutcome(index, ops.size());
        } else {
            engine.observer().refused(Reason.STORE_UNAVAILABLE, ops.size());
        }
        failAll(ops, Failure.storeUnavailable("lane " + index + ": " + (unknown
                ? "the batch's commit failed, outcome unknown" : "the store failed the batch")
                + "; retry with the same idempotency key", e, retryAfter()));
        return AfterFailure.FAILED;
    }

    private static void failAll(List<Op> ops, Failure f) {
        for (Op op : ops) {
            op.future().completeExceptionally(f);
        }
    }

    private void invalidate(List<Op> ops) {
        for (Op op : ops) {
            cache.remove(op.bucket());
        }
    }

    private Duration retryAfter() {
        return Duration.ofMillis(config.retryAfterMs());
    }

    /** Collapses the item's buckets into bucket 0 and teaches bucket 0 the closed buckets' keys. */
    private void collapse(Op.Collapse op) {
        BucketKey k = op.bucket();
        try {
            Collapser.Collapsed done = collapser.collapse(k.tenantId(), k.itemId());
            if (done != null) {
                BucketState b0 = cache.get(k);
                if (b0 != null) {
                    LaneStore.BucketRow row = done.bucket0();
                    b0.setCounters(row.allotment(), row.available(), row.held(), row.sold(), row.lent());
                    cache.addKeys(b0, done.keysOutsideBucket0());
                }
            }
            op.future().complete(done != null);
        } catch (SQLException e) {
            if (!Collapser.changedNothing(e)) {
                cache.remove(k); // bucket 0's cached row and keys may be off: reload them
            }
            op.future().completeExceptionally(e);
        }
    }
}
