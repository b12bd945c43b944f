package io.lastunit.shard.lane;

import io.lastunit.shard.decide.BatchDecider;
import io.lastunit.shard.decide.BorrowResult;
import io.lastunit.shard.decide.BucketFacts;
import io.lastunit.shard.decide.Call;
import io.lastunit.shard.decide.Decided;
import io.lastunit.shard.decide.Decision;
import io.lastunit.shard.decide.KeyName;
import io.lastunit.shard.decide.Loaded;
import io.lastunit.shard.decide.Needs;
import io.lastunit.shard.decide.Outcome;
import io.lastunit.shard.decide.Slot;
import io.lastunit.shard.escrow.Borrower;
import io.lastunit.shard.escrow.Collapser;
import io.lastunit.shard.escrow.ItemLedger;
import io.lastunit.shard.escrow.ItemLedgers;
import io.lastunit.shard.escrow.Promises;
import io.lastunit.shard.fence.Fence;
import io.lastunit.shard.store.HoldRow;
import io.lastunit.shard.store.KeyRef;
import io.lastunit.shard.store.LaneStore;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One attempt at one batch of a lane: load → decide → write. The buckets the batch touches come
 * from the lane's cache (loaded on a miss); the pure {@link BatchDecider} decides every call and
 * says what it needs first — rows to read ({@link BatchLoader}) or borrows for dry buckets
 * ({@link Borrower}, each a short transaction of its own) — and is asked again with them, at most
 * {@link #DECIDE_ROUNDS_MAX} times; no transaction opens inside a decision. Then one
 * {@link BatchWriter} writes the decision in the attempt's transaction. {@link #decideAndWrite}
 * says whether the attempt is {@link Written} (and committed itself, or waits for the lane's
 * commit), or a {@link Redo} when the database refused the lane's view; the lane then rolls back
 * and decides again. Callers are answered only by
 * {@link #publish}, after the commit. Lane-confined; not thread-safe.
 */
final class Batch {
    /**
     * Decisions per attempt: a first one; one after loading rows (keys, usage, holds, due holds);
     * one after borrowing; one after a borrow's sweep request or a second load. More is a bug.
     */
    static final int DECIDE_ROUNDS_MAX = 6;

    /**
     * What an attempt works with, the same for every attempt of a lane: the statements, the lane's
     * cached buckets, the item ledgers, the database clock estimate, the settings, the escrow rooms
     * (borrowing, the collapse trigger), the operations carried to the next batch, the replier that
     * answers after the commit, the lanes that Reserves of other buckets are sent to, and what a call
     * on an item fenced by a tenant move is told.
     */
    record Collaborators(LaneStore store, BucketCache cache, ItemLedgers ledgers, DbClock clock, LaneConfig config,
                         Borrower borrower, Collapser collapser, CarryOver carry, Replier replier,
                         Reroutes reroutes, Fence fence) {
    }

    /** Sends a Reserve to the lane of another bucket of its item, after the commit. */
    @FunctionalInterface
    interface Reroutes {
        void reroute(Op.Reserve r, int bucketNo);
    }

    /** What an attempt came to: written, or to be decided again. */
    sealed interface Result permits Written, Redo {
    }

    /**
     * Written: {@code committedItself} when the batch was one statement that committed itself;
     * otherwise its transaction waits for the lane's commit.
     */
    record Written(boolean committedItself) implements Result {
    }

    /**
     * Why the batch must be decided again, and what to reload or look up first.
     * {@code statementByStatement}: the database refused a one-statement batch, nothing was
     * written, and the next attempt uses the separate statements, which say precisely what was off.
     */
    record Redo(String why, Set<BucketKey> buckets, Set<KeyRef> keys, boolean statementByStatement)
            implements Result {
        Redo(String why, Set<BucketKey> buckets, Set<KeyRef> keys) {
            this(why, buckets, keys, false);
        }
    }

    /**
     * The one statement of a one-statement batch, which commits itself, failed other than by the
     * database's refusal: it may or may not have committed.
     */
    static final class SelfCommitFailed extends SQLException {
        private static final long serialVersionUID = 1L;

        SelfCommitFailed(SQLException cause) {
            super(cause.getMessage(), cause.getSQLState(), cause);
        }
    }

    private final Collaborators rooms;
    private final LazyConnection conn;
    private final List<Op> ops;
    private final List<Call> calls;
    private final Set<KeyName> lookUp = new HashSet<>();
    private final boolean stepwise;
    /** What the lane's batch holds against other lanes' borrows, across its attempts. */
    private final Promises promises;
    /**
     * Rows of the borrowing buckets after this attempt's borrows, each committed already. The
     * lender's published level is set right after its borrow commits; the borrower's only when the
     * batch ends ({@link #publish} with its final row, or {@link #publishBorrows}), so that units
     * this batch is still promising are not offered to other lanes' borrows meanwhile.
     */
    private final List<LaneStore.BucketRow> borrowerRows = new ArrayList<>();
    private Map<Slot, BucketFacts> facts;
    private Loaded loaded;
    private Decided decided;
    private BatchWriter writer;
    private boolean published;

    Batch(Collaborators rooms, LazyConnection conn, List<Op> ops, Set<KeyRef> keysElsewhere, boolean stepwise,
          Promises promises) {
        this.rooms = rooms;
        this.conn = conn;
        this.ops = ops;
        this.calls = Facts.calls(ops);
        for (KeyRef k : keysElsewhere) {
            lookUp.add(Facts.keyName(k));
        }
        this.stepwise = stepwise;
        this.promises = promises;
    }

    /** What the last decision decided (null before one finished). */
    Decided decided() {
        return decided;
    }

    /** The database's time the batch was judged at (after {@link #decideAndWrite}). */
    long nowMicros() {
        return loaded.nowMicros();
    }

    Result decideAndWrite() throws SQLException {
        decided = decide();
        writer = new BatchWriter(rooms.store(), conn, ops, rooms.clock().nowMicros() / 1000);
        return writer.write(decided, stepwise);
    }

    /** Decides, loading and borrowing between decisions as they ask, until every call has its outcome. */
    private Decided decide() throws SQLException {
        loaded = new Loaded(rooms.clock().nowMicros());
        boolean nowRead = false;
        BatchLoader loader = new BatchLoader(rooms.store(), rooms.config().sweepBatchMax());
        for (int round = 0; ; round++) {
            facts = facts();
            Decision d = BatchDecider.decide(calls, facts, loaded, lookUp);
            if (d instanceof Decided done) {
                promise(takenBy(done));
                return done;
            }
            Needs n = ((Decision.More) d).needs();
            promise(n.taken());
            if (round == DECIDE_ROUNDS_MAX - 1) {
                throw new IllegalStateException("a batch of " + ops.size() + " still needs " + n + " after "
                        + DECIDE_ROUNDS_MAX + " decisions");
            }
            if (!n.onlyBorrows()) {
                loader.load(n, conn, loaded, nowRead);
                nowRead |= !n.holds().isEmpty() || !n.due().isEmpty();
            }
            for (Map.Entry<Slot, Long> b : n.borrows().entrySet()) {
                loaded.borrowed(b.getKey(), borrow(b.getKey(), b.getValue(), n));
            }
        }
    }

    /** The touched buckets, from the cache (a miss or a stale row is loaded: the first of the loads). */
    private Map<Slot, BucketFacts> facts() throws SQLException {
        Map<Slot, BucketFacts> m = new LinkedHashMap<>();
        for (Op op : ops) {
            Slot s = Facts.slot(op.bucket());
            if (m.containsKey(s)) {
                continue;
            }
            BucketState b = rooms.cache().load(conn, op.bucket());
            if (b != null) {
                m.put(s, Facts.bucket(b, ledger(op.bucket())));
            }
        }
        return m;
    }

    private ItemLedger ledger(BucketKey k) {
        return rooms.ledgers().get(k.tenantId(), k.itemId());
    }

    private static Map<Slot, Long> takenBy(Decided d) {
        Map<Slot, Long> taken = new LinkedHashMap<>();
        d.deltas().forEach((s, delta) -> taken.put(s, delta.taken()));
        return taken;
    }

    /** The units this decision takes, held against other lanes' borrows (items of several buckets). */
    private void promise(Map<Slot, Long> taken) {
        promises.beginAttempt();
        for (Map.Entry<Slot, Long> e : taken.entrySet()) {
            ItemLedger ledger = ledger(Facts.key(e.getKey()));
            if (ledger != null && ledger.bucketCount > 1 && e.getValue() > 0) {
                promises.want(ledger, e.getKey().bucketNo(), e.getValue());
            }
        }
        promises.attemptDecided();
    }

    private BorrowResult borrow(Slot slot, long need, Needs n) throws SQLException {
        BucketKey k = Facts.key(slot);
        Borrower.Outcome o = rooms.borrower().borrow(ledger(k), k.bucketNo(), need, new Borrower.Borrowing() {
            @Override
            public long leftAfterBatch(int bucketNo) {
                Long left = n.remaining().get(new Slot(slot.tenantId(), slot.itemId(), bucketNo));
                return left == null ? UNTOUCHED : left;
            }

            @Override
            public void moved(LaneStore.Borrowed moved) {
                borrowerRows.add(moved.borrower());
                rooms.cache().committed(moved.lender());
                rooms.cache().committed(moved.borrower());
            }

            @Override
            public void outcomeUnknown(int bucketNo) {
                rooms.cache().markStale(new BucketKey(k.tenantId(), k.itemId(), bucketNo));
            }
        });
        return switch (o) {
            case BORROWED -> BorrowResult.BORROWED;
            case NOTHING -> BorrowResult.NOTHING;
            case WAIT_FOR_SWEEP -> BorrowResult.WAIT_FOR_SWEEP;
            case CLOSED -> BorrowResult.CLOSED;
        };
    }

    private List<LaneStore.BucketRow> bucketRows() {
        return writer == null || writer.written() == null ? List.of() : writer.written().buckets();
    }

    /**
     * After the last attempt at a batch: a borrow commits whatever becomes of the attempt that
     * made it, so a bucket that borrowed and has no final row published by a committed attempt
     * (the attempt was refused and the next one did not touch the bucket, or the batch failed)
     * has its published level raised to the row the borrow returned. Its units are not hidden
     * from other lanes, and the level is not raised while an attempt is still promising them.
     */
    static void publishBorrows(List<Batch> attempts) {
        boolean borrowed = false;
        for (Batch a : attempts) {
            borrowed |= !a.borrowerRows.isEmpty();
        }
        if (!borrowed) {
            return; // the common case: nothing borrowed, nothing to build for every batch
        }
        Set<BucketKey> published = new HashSet<>();
        for (Batch a : attempts) {
            if (a.published) {
                for (LaneStore.BucketRow r : a.bucketRows()) {
                    published.add(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
                }
            }
        }
        for (Batch a : attempts) {
            for (LaneStore.BucketRow r : a.borrowerRows) {
                BucketKey k = new BucketKey(r.tenantId(), r.itemId(), r.bucketNo());
                ItemLedger ledger = published.contains(k) ? null : a.ledger(k);
                if (ledger != null) {
                    ledger.raise(r.bucketNo(), r.available());
                }
            }
        }
    }

    /** Before the commit: raise the published units of buckets this batch adds units to. */
    void raiseBeforeCommit() {
        for (LaneStore.BucketRow r : bucketRows()) {
            ItemLedger ledger = ledger(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
            if (ledger != null) {
                ledger.raise(r.bucketNo(), r.available());
            }
        }
    }

    /** After the commit: refresh the cache and the ledgers from what the database returned, then answer every caller. */
    void publish() {
        published = true;
        BatchWriter.Written w = writer.written();
        measureClock(w);
        for (LaneStore.BucketRow r : w.buckets()) {
            rooms.cache().committed(r);
            ItemLedger ledger = ledger(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
            if (ledger != null) {
                ledger.publish(r.bucketNo(), r.available());
            }
        }
        publishKeysAndDue(w);
        decided.demand().forEach((item, n) -> {
            ItemLedger ledger = rooms.ledgers().get(item.tenantId(), item.itemId());
            if (ledger != null) {
                ledger.countDemand(n[0], n[1]);
            }
        });
        answerAll();
    }

    /**
     * New holds carry the transaction's {@code now()}: the lane's estimate of the database clock
     * is measured again at every batch that placed one, not only at bucket loads, so a local
     * clock that jumps (skew, a suspended VM) misleads the lane for one batch at most.
     */
    private void measureClock(BatchWriter.Written w) {
        Instant newest = null;
        for (HoldRow r : w.placed()) {
            if (r != null && (newest == null || r.createdAt().isAfter(newest))) {
                newest = r.createdAt();
            }
        }
        if (newest != null) {
            rooms.clock().measured(Facts.micros(newest));
        }
    }

    /** The keys placed join their bucket's key set; swept and new holds move the bucket's earliest expiry. */
    private void publishKeysAndDue(BatchWriter.Written w) {
        Set<Slot> touched = new HashSet<>(decided.deltas().keySet());
        touched.addAll(decided.nextDue().keySet());
        for (int x = 0; x < ops.size(); x++) {
            Outcome o = decided.outcome(x);
            if (o instanceof Outcome.Reserved || o instanceof Outcome.Recorded) {
                Op.Reserve r = (Op.Reserve) ops.get(x);
                BucketState b = rooms.cache().get(r.bucket());
                if (b != null) {
                    b.addKey(r.request().getIdempotencyKey());
                }
                touched.add(Facts.slot(r.bucket()));
            }
        }
        for (Slot s : touched) {
            BucketKey k = Facts.key(s);
            BucketState b = rooms.cache().get(k);
            if (b == null) {
                continue;
            }
            Long due = decided.nextDue().get(s);
            if (due != null) {
                b.earliestDueMicros = due;
            }
            b.earliestDueMicros = Math.min(b.earliestDueMicros, w.firstNewExpiry().getOrDefault(s, Long.MAX_VALUE));
            ItemLedger ledger = ledger(k);
            if (ledger != null) {
                ledger.publishDue(k.bucketNo(), b.earliestDueMicros);
                rooms.collapser().requestIfLow(ledger);
            }
        }
    }

    /**
     * On the lane's thread: carried calls into the next batch, rerouted ones to their lane. Then each
     * caller's answer, on the replier; a repeat of a key follows its first use's answer.
     */
    private void answerAll() {
        Duration retryAfter = Duration.ofMillis(rooms.config().retryAfterMs());
        HoldRow[] placed = writer.written().placed();
        long now = loaded.nowMicros();
        List<Runnable> completions = new ArrayList<>(ops.size());
        for (int x = 0; x < ops.size(); x++) {
            Op op = ops.get(x);
            Outcome o = decided.outcome(x);
            if (o instanceof Outcome.Carry) {
                rooms.carry().carryOver(op);
            } else if (o instanceof Outcome.Reroute r) {
                rooms.reroutes().reroute((Op.Reserve) op, r.bucketNo());
            } else if (o instanceof Outcome.Follow f) {
                Op.Reserve leader = (Op.Reserve) ops.get(f.leaderIndex());
                completions.add(() -> follow((Op.Reserve) op, leader));
            } else {
                BucketFacts b = facts.get(Facts.slot(op.bucket()));
                HoldRow row = placed[x];
                completions.add(() -> Answers.complete(op, o, row, b == null ? null : b.item(), now, retryAfter,
                        rooms.fence()));
            }
        }
        rooms.replier().reply(completions);
    }

    private static void follow(Op.Reserve follower, Op.Reserve leader) {
        leader.future().whenComplete((resp, err) -> {
            if (err != null) {
                follower.future().completeExceptionally(err);
            } else {
                follower.future().complete(resp);
            }
        });
    }
}
