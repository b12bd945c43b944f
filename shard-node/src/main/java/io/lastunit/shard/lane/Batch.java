package io.lastunit.shard.lane;

import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.shard.escrow.Borrower;
import io.lastunit.shard.escrow.Collapser;
import io.lastunit.shard.escrow.ItemLedger;
import io.lastunit.shard.escrow.ItemLedgers;
import io.lastunit.shard.escrow.Promises;
import io.lastunit.shard.store.BucketDeltaColumns;
import io.lastunit.shard.store.HoldRefColumns;
import io.lastunit.shard.store.HoldRow;
import io.lastunit.shard.store.KeyRecordColumns;
import io.lastunit.shard.store.KeyRef;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.NewHoldColumns;
import io.lastunit.shard.store.UsageColumns;
import io.lastunit.shard.store.UsageKey;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * One attempt at one batch of a lane, inside one transaction. In order:
 * <ol>
 *   <li>load the buckets the batch touches (cache misses only);</li>
 *   <li>sweep buckets whose earliest expiry has passed, so expired holds never make a false
 *       SOLD_OUT, then apply Confirm / Release / Extend (one statement each);</li>
 *   <li>decide every Reserve in memory: retries by the bucket's key set, SOLD_OUT when the
 *       bucket (plus what this batch gave back) is dry, LIMIT_EXCEEDED from buyer usage;</li>
 *   <li>insert all new holds with one multi-row statement, then buyer usage;</li>
 *   <li>last, one conditional update of every touched bucket's counters.</li>
 * </ol>
 * {@link #decideAndWrite} returns null when the batch is ready to commit, or a {@link Redo}
 * when the database refused the cached view (a key already used, stale counters, usage
 * changed underneath); the lane then rolls back and decides again. Results are published
 * only by {@link #publish}, after the commit. Lane-confined; not thread-safe.
 */
final class Batch {

    /**
     * What an attempt works with, the same for every attempt of a lane: the statements, the lane's
     * cached buckets, the item ledgers, the database clock estimate, the settings, the escrow rooms
     * (borrowing, the collapse trigger), the operations carried to the next batch, the replier that
     * answers after the commit, and the lanes that Reserves of other buckets are sent to.
     */
    record Collaborators(LaneStore store, BucketCache cache, ItemLedgers ledgers, DbClock clock, LaneConfig config,
                         Borrower borrower, Collapser collapser, CarryOver carry, Replier replier,
                         Reroutes reroutes) {
    }

    /** Sends a Reserve to the lane of another bucket of its item, after the commit. */
    @FunctionalInterface
    interface Reroutes {
        void reroute(Op.Reserve r, int bucketNo);
    }

    /** Why the batch must be decided again, and what to reload or treat as known first. */
    record Redo(String why, Set<BucketKey> buckets, Set<KeyRef> keys) {
    }

    /** Counter changes of one bucket within this batch. */
    private static final class Delta {
        long available;
        long held;
        long sold;
        /** Units taken by reserves decided in this batch. */
        long taken;
        /** Units given back by releases and expiries in this batch. */
        long credited;
        boolean swept;
        long minNewExpiryMicros = Long.MAX_VALUE;
        final List<String> newKeys = new ArrayList<>();
    }

    private final BucketCache cache;
    private final ItemLedgers ledgers;
    private final DbClock clock;
    private final LaneConfig config;
    private final Borrower borrower;
    private final Collapser collapser;
    private final CarryOver carry;
    private final Replier replier;
    private final Reroutes lanes;
    private final LazyConnection conn;
    private final List<Op> ops;
    private final Set<KeyRef> keysElsewhere;
    private final LaneStore store;

    private final Map<BucketKey, Delta> deltas = new LinkedHashMap<>();
    private final List<Runnable> completions = new ArrayList<>();
    private final List<LaneStore.BucketRow> bucketRows = new ArrayList<>();
    private final Map<BucketKey, Long> recomputedDue = new HashMap<>();
    /**
     * Rows of the borrowing buckets after this batch's borrows, each committed already. The
     * lender's published level is set right after its borrow commits; the borrower's only when
     * the batch ends ({@link #publish} with its final row, or {@link #publishBorrows}), so that
     * units this batch is still promising are not offered to other lanes' borrows meanwhile.
     */
    private final List<LaneStore.BucketRow> borrowerRows = new ArrayList<>();
    private boolean published;
    /** What the lane's batch holds against other lanes' borrows, across its attempts. */
    private final Promises promises;
    /** Reserves that belong to another bucket's lane, sent there after the commit. */
    private final List<Map.Entry<Op.Reserve, Integer>> reroutes = new ArrayList<>();
    /** Reserves for an item collapsed to its home region, to be recorded FORWARDED. */
    private final List<Op.Reserve> forwards = new ArrayList<>();
    /** Claims of keys new here (ShardService.ClaimKey), to be recorded CLAIMED. */
    private final List<Op.Reserve> claims = new ArrayList<>();
    /** Reserves decided and SOLD_OUTs answered per item, added to the item's counters after the commit. */
    private final Map<ItemLedger, long[]> demand = new java.util.IdentityHashMap<>();

    /** Never one statement: after a refusal, decide again with the separate statements. */
    private final boolean stepwise;
    /** New holds prepared but not yet written, for the one statement. */
    private NewHolds deferred;
    private boolean oneStatementSent;
    private boolean committedInStatement;
    private boolean refusedInOneStatement;

    Batch(Collaborators rooms, LazyConnection conn, List<Op> ops, Set<KeyRef> keysElsewhere, boolean stepwise,
          Promises promises) {
        this.store = rooms.store();
        this.cache = rooms.cache();
        this.ledgers = rooms.ledgers();
        this.clock = rooms.clock();
        this.config = rooms.config();
        this.borrower = rooms.borrower();
        this.collapser = rooms.collapser();
        this.carry = rooms.carry();
        this.replier = rooms.replier();
        this.lanes = rooms.reroutes();
        this.promises = promises;
        promises.beginAttempt();
        this.conn = conn;
        this.ops = ops;
        this.keysElsewhere = keysElsewhere;
        this.stepwise = stepwise;
    }

    private Connection c() throws SQLException {
        return conn.get();
    }

    /** The item's ledger, if this node knows the item. */
    private ItemLedger ledger(BucketKey k) {
        return ledgers.get(k.tenantId(), k.itemId());
    }

    private Duration retryAfter() {
        return Duration.ofMillis(config.retryAfterMs());
    }

    Redo decideAndWrite() throws SQLException {
        List<Op.Reserve> reserves = new ArrayList<>();
        List<Op.HoldAction> actions = new ArrayList<>();
        Map<BucketKey, List<Op.Sweep>> sweeps = new LinkedHashMap<>();
        for (Op op : ops) {
            BucketState b = cache.load(conn, op.bucket());
            if (b == null) {
                failMissing(op);
                continue;
            }
            if (op instanceof Op.Reserve r) {
                reserves.add(r);
            } else if (op instanceof Op.HoldAction a) {
                actions.add(a);
            } else if (op instanceof Op.Sweep s) {
                sweeps.computeIfAbsent(s.bucket(), k -> new ArrayList<>()).add(s);
            }
        }
        sweepDue(sweeps);
        applyHoldActions(actions);
        Redo redo = decideReserves(reserves);
        if (redo != null) {
            return redo;
        }
        return applyBucketDeltas();
    }

    private void failMissing(Op op) {
        BucketKey k = op.bucket();
        if (op instanceof Op.HoldAction a) {
            op.future().completeExceptionally(Failure.of(Reason.HOLD_NOT_FOUND, "no hold " + a.holdId().encode()));
        } else if (op instanceof Op.Sweep s) {
            s.future().complete(0);
        } else {
            op.future().completeExceptionally(Failure.of(Reason.ITEM_NOT_FOUND,
                    "no item " + k.tenantId() + "/" + k.itemId() + " on this shard"));
        }
    }

    private Delta delta(BucketKey k) {
        return deltas.computeIfAbsent(k, x -> new Delta());
    }

    // ---- expiry ----

    private void sweepDue(Map<BucketKey, List<Op.Sweep>> requested) throws SQLException {
        long now = clock.nowMicros();
        Map<BucketKey, Integer> expiredPerBucket = new LinkedHashMap<>();
        for (Op op : ops) {
            BucketState b = cache.get(op.bucket());
            if (b == null || expiredPerBucket.containsKey(b.key)) {
                continue;
            }
            if (requested.containsKey(b.key) || b.earliestDueMicros <= now) {
                expiredPerBucket.put(b.key, sweep(b));
            }
        }
        for (Map.Entry<BucketKey, List<Op.Sweep>> e : requested.entrySet()) {
            int n = expiredPerBucket.getOrDefault(e.getKey(), 0);
            for (Op.Sweep s : e.getValue()) {
                completions.add(() -> s.future().complete(n));
            }
        }
    }

    private int sweep(BucketState b) throws SQLException {
        BucketKey k = b.key;
        int max = config.sweepBatchMax();
        List<HoldRow> expired = store.sweep(c(), k.tenantId(), k.itemId(), k.bucketNo(), max);
        Delta d = delta(k);
        d.swept = true;
        for (HoldRow h : expired) {
            credit(d, h);
        }
        subtractUsage(expired);
        recomputedDue.put(k, expired.size() >= max ? Long.MIN_VALUE
                : store.earliestDue(c(), k.tenantId(), k.itemId(), k.bucketNo()));
        return expired.size();
    }

    private static void credit(Delta d, HoldRow h) {
        d.available += h.qty();
        d.held -= h.qty();
        d.credited += h.qty();
    }

    /** Gives back the buyer usage of ended holds (released, expired) of limited items. */
    private void subtractUsage(List<HoldRow> ended) throws SQLException {
        List<HoldRow> limited = new ArrayList<>(ended.size());
        for (HoldRow h : ended) {
            BucketState b = cache.get(new BucketKey(h.tenantId(), h.itemId(), h.bucketNo()));
            if (b == null) {
                throw new IllegalStateException("ended hold " + h.holdId() + " of a bucket not in the lane's cache");
            }
            if (b.item.limited()) {
                limited.add(h);
            }
        }
        if (limited.isEmpty()) {
            return;
        }
        UsageColumns ends = new UsageColumns();
        for (HoldRow h : limited) {
            ends.add(new UsageKey(h.tenantId(), h.itemId(), h.buyerId()), 0, h.qty());
        }
        store.subtractUsage(c(), ends);
    }

    // ---- confirm, release, extend ----

    /**
     * Rounds of hold transitions in one batch: calls on the same hold are decided as if they had
     * arrived one after another. A round runs the first waiting call of every hold; the calls
     * behind it are judged against the row it left ({@link HoldTransitions}), and the first of them
     * that still changes the hold (only possible after an Extend: a Confirm or Release) runs in the
     * next round. So two rounds settle any mix; the bound is for a rule change that breaks that.
     */
    static final int HOLD_ROUNDS_MAX = 3;

    private void applyHoldActions(List<Op.HoldAction> actions) throws SQLException {
        if (actions.isEmpty()) {
            return;
        }
        Map<UUID, ArrayDeque<Op.HoldAction>> waiting = new LinkedHashMap<>();
        for (Op.HoldAction a : actions) {
            waiting.computeIfAbsent(a.holdId().uuid(), k -> new ArrayDeque<>()).add(a);
        }
        for (int round = 0; !waiting.isEmpty(); round++) {
            if (round == HOLD_ROUNDS_MAX) {
                for (ArrayDeque<Op.HoldAction> left : waiting.values()) {
                    left.forEach(carry::carryOver);
                }
                return;
            }
            List<Op.HoldAction> heads = new ArrayList<>(waiting.size());
            for (ArrayDeque<Op.HoldAction> q : waiting.values()) {
                heads.add(q.poll());
            }
            Map<UUID, Optional<HoldRow>> settled = applyRound(heads);
            for (var it = waiting.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                ArrayDeque<Op.HoldAction> behind = e.getValue();
                Optional<HoldRow> row = settled.get(e.getKey());
                if (row == null) {
                    behind.forEach(carry::carryOver); // the first call was carried: so are the ones behind it
                    behind.clear();
                }
                while (!behind.isEmpty()) {
                    Op.HoldAction a = behind.peek();
                    HoldTransitions.Verdict v = HoldTransitions.judge(a.holdId(), a.kind(), a.orderRef(),
                            row.orElse(null));
                    if (v instanceof HoldTransitions.Apply) {
                        break; // it changes the hold: its statement runs in the next round
                    }
                    answer(behind.poll(), v);
                }
                if (behind.isEmpty()) {
                    it.remove();
                }
            }
        }
    }

    /**
     * One round: at most one call per hold, one statement per kind. Answers every call, and
     * returns the row each hold has after it (empty: no such hold); a hold whose call was carried
     * to the next batch is absent.
     */
    private Map<UUID, Optional<HoldRow>> applyRound(List<Op.HoldAction> heads) throws SQLException {
        Map<Op.HoldAction.Kind, List<Op.HoldAction>> byKind = new LinkedHashMap<>();
        for (Op.HoldAction a : heads) {
            byKind.computeIfAbsent(a.kind(), k -> new ArrayList<>()).add(a);
        }
        Map<UUID, Op.HoldAction> unmatched = new LinkedHashMap<>();
        for (Op.HoldAction a : heads) {
            unmatched.put(a.holdId().uuid(), a);
        }
        Map<UUID, Optional<HoldRow>> settled = new HashMap<>();
        List<HoldRow> released = new ArrayList<>();
        for (Map.Entry<Op.HoldAction.Kind, List<Op.HoldAction>> e : byKind.entrySet()) {
            List<Op.HoldAction> list = e.getValue();
            HoldRefColumns refs = new HoldRefColumns();
            list.forEach(a -> refs.add(a.holdId()));
            List<HoldRow> changed = switch (e.getKey()) {
                case CONFIRM -> store.confirm(c(), refs, list.stream().map(Op.HoldAction::orderRef).toList());
                case RELEASE -> store.release(c(), refs);
                case EXTEND -> store.extend(c(), refs, list.stream()
                        .map(a -> cache.get(a.bucket()).item.extendByMs()).toList());
            };
            for (HoldRow h : changed) {
                Op.HoldAction a = unmatched.remove(h.holdId());
                Delta d = delta(a.bucket());
                switch (a.kind()) {
                    case CONFIRM -> {
                        d.held -= h.qty();
                        d.sold += h.qty();
                    }
                    case RELEASE -> {
                        credit(d, h);
                        released.add(h);
                    }
                    case EXTEND -> {
                        // counters unchanged; the expiry only moved later
                    }
                }
                settled.put(h.holdId(), Optional.of(h));
                Hold proto = h.toProto();
                completions.add(() -> a.future().complete(proto));
            }
        }
        subtractUsage(released);
        if (!unmatched.isEmpty()) {
            explainUnmatched(unmatched, settled);
        }
        return settled;
    }

    /**
     * Answers hold actions whose conditional update matched nothing, from the hold's current row,
     * and adds that row to {@code settled}. A hold that is HELD, unexpired and yet unmatched has
     * another writer at work: its call is tried again next batch.
     */
    private void explainUnmatched(Map<UUID, Op.HoldAction> unmatched, Map<UUID, Optional<HoldRow>> settled)
            throws SQLException {
        Map<UUID, HoldRow> rows = new HashMap<>();
        for (HoldRow h : store.readHolds(c(), unmatched.keySet().toArray(UUID[]::new))) {
            rows.put(h.holdId(), h);
        }
        for (Op.HoldAction a : unmatched.values()) {
            HoldRow h = rows.get(a.holdId().uuid());
            HoldTransitions.Verdict v = HoldTransitions.judge(a.holdId(), a.kind(), a.orderRef(), h);
            if (v instanceof HoldTransitions.Apply) {
                carry.carryOver(a);
                continue;
            }
            settled.put(a.holdId().uuid(), Optional.ofNullable(h));
            answer(a, v);
        }
    }

    private void answer(Op.HoldAction a, HoldTransitions.Verdict v) {
        if (v instanceof HoldTransitions.Answer ok) {
            completions.add(() -> a.future().complete(ok.hold()));
        } else if (v instanceof HoldTransitions.Refuse no) {
            fail(a, no.failure());
        } else {
            throw new IllegalStateException("a call to apply is not an answer: " + a);
        }
    }

    private void fail(Op op, Failure f) {
        completions.add(() -> op.future().completeExceptionally(f));
    }

    // ---- reserve ----

    private Redo decideReserves(List<Op.Reserve> reserves) throws SQLException {
        if (reserves.isEmpty()) {
            promises.attemptDecided();
            return null;
        }
        Map<UsageKey, Long> usage = readUsage(reserves);
        Map<UsageKey, Long> usageAdded = new LinkedHashMap<>();
        Map<KeyRef, Op.Reserve> leaders = new HashMap<>();
        Map<Op.Reserve, Op.Reserve> followers = new LinkedHashMap<>();
        List<Op.Reserve> lookups = new ArrayList<>();
        List<Op.Reserve> maybeSoldOut = new ArrayList<>();
        List<Op.Reserve> accepted = new ArrayList<>();
        for (Op.Reserve r : reserves) {
            BucketState b = cache.get(r.bucket());
            ItemConfig item = b.item;
            var q = r.request();
            KeyRef tk = r.keyRef();
            Op.Reserve leader = leaders.putIfAbsent(tk, r);
            if (leader != null) {
                if (leader.fingerprint().equals(r.fingerprint()) && leader.claim() == r.claim()) {
                    followers.put(r, leader);
                } else {
                    carry.carryOver(r); // decided against the leader's committed outcome next batch
                }
                continue;
            }
            if ((b.knowsKey(q.getIdempotencyKey()) && !carry.keyAbsent(r)) || keysElsewhere.contains(tk)) {
                lookups.add(r);
                continue;
            }
            ItemLedger ledger = ledger(r.bucket());
            int target = ledger == null ? r.bucket().bucketNo() : ledger.bucketFor(q.getIdempotencyKey());
            if (target != r.bucket().bucketNo()) {
                reroutes.add(Map.entry(r, target));
                continue;
            }
            if (!item.active()) {
                fail(r, Failure.retryable(Reason.ITEM_NOT_ACTIVE, "item " + q.getTenantId() + "/" + q.getItemId()
                        + " is " + item.state(), retryAfter()));
                continue;
            }
            if (r.claim()) {
                Failure refused = refuseClaim(r, item);
                if (refused != null) {
                    fail(r, refused);
                } else {
                    claims.add(r);
                }
                continue;
            }
            if (ledger != null) {
                demand.computeIfAbsent(ledger, x -> new long[2])[0]++;
            }
            if (ledger != null && ledger.regionCollapsed() && !ledger.isHome(q.getRegion())) {
                forwards.add(r);
                continue;
            }
            Delta d = delta(r.bucket());
            long remaining = remaining(b, d, ledger);
            if (remaining < q.getQuantity() && ledger != null && ledger.bucketCount > 1) {
                Borrower.Outcome outcome = borrower.borrow(ledger, b.key.bucketNo(),
                        q.getQuantity() - remaining, borrowing(b.key, ledger));
                if (outcome == Borrower.Outcome.WAIT_FOR_SWEEP || outcome == Borrower.Outcome.CLOSED) {
                    carry.carryOver(r);
                    continue;
                }
                remaining = remaining(b, d, ledger);
            }
            if (remaining < q.getQuantity()) {
                if (b.keysComplete()) {
                    soldOut(r, ledger);
                } else {
                    maybeSoldOut.add(r);
                }
                continue;
            }
            if (item.limited()) {
                UsageKey uk = new UsageKey(q.getTenantId(), q.getItemId(), q.getBuyerId());
                long used = usage.getOrDefault(uk, 0L) + usageAdded.getOrDefault(uk, 0L);
                if (used + q.getQuantity() > item.perBuyerLimit()) {
                    answer(r, ReserveResponse.newBuilder().setOutcome(ReserveOutcome.LIMIT_EXCEEDED).build());
                    continue;
                }
                usageAdded.merge(uk, (long) q.getQuantity(), Long::sum);
            }
            d.taken += q.getQuantity();
            if (ledger != null && ledger.bucketCount > 1) {
                promises.want(ledger, r.bucket().bucketNo(), q.getQuantity());
            }
            accepted.add(r);
        }
        promises.attemptDecided();
        resolveMaybeSoldOut(maybeSoldOut, lookups);
        answerLookups(lookups);
        Redo redo = insertKeyRecords();
        if (redo != null) {
            return redo;
        }
        redo = insertHolds(accepted, usageAdded.isEmpty());
        if (redo != null) {
            return redo;
        }
        redo = writeUsage(accepted, usage, usageAdded);
        if (redo != null) {
            return redo;
        }
        for (Map.Entry<Op.Reserve, Op.Reserve> f : followers.entrySet()) {
            Op.Reserve leader = f.getValue();
            Op.Reserve follower = f.getKey();
            completions.add(() -> leader.future().whenComplete((resp, err) -> {
                if (err != null) {
                    follower.future().completeExceptionally(err);
                } else {
                    follower.future().complete(resp);
                }
            }));
        }
        return null;
    }

    private void answer(Op.Reserve r, ReserveResponse resp) {
        completions.add(() -> r.future().complete(resp));
    }

    /**
     * What the bucket has left for this batch: its cached units, less what other lanes' committed
     * borrows took after the cached row ({@link BucketState#unseenLent}), plus what this batch gave
     * back, less what it took. {@code ledger} is the bucket's item's (null for none).
     */
    private static long remaining(BucketState b, Delta d, ItemLedger ledger) {
        return b.available - b.unseenLent(ledger) + d.credited - d.taken;
    }

    /**
     * SOLD_OUT: no bucket of the item on this shard has the units. For an item sold in several
     * regions that has not collapsed home, only this region is out: say so, and the router pulls
     * stock in through the balancer.
     */
    private void soldOut(Op.Reserve r, ItemLedger ledger) {
        boolean regionDry = ledger != null && ledger.multiRegion() && !ledger.regionCollapsed();
        if (ledger != null) {
            demand.computeIfAbsent(ledger, x -> new long[2])[1]++;
        }
        answer(r, ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).setRegionDry(regionDry).build());
    }

    /** The borrowing bucket's side of its borrows: what this batch leaves in siblings, and its cache. */
    private Borrower.Borrowing borrowing(BucketKey k, ItemLedger ledger) {
        return new Borrower.Borrowing() {
            @Override
            public long leftAfterBatch(int bucketNo) {
                BucketKey sk = new BucketKey(k.tenantId(), k.itemId(), bucketNo);
                BucketState local = cache.get(sk);
                Delta sd = deltas.get(sk);
                return local != null && sd != null ? remaining(local, sd, ledger) : UNTOUCHED;
            }

            @Override
            public void moved(LaneStore.Borrowed moved) {
                borrowerRows.add(moved.borrower());
                for (LaneStore.BucketRow r : List.of(moved.lender(), moved.borrower())) {
                    BucketState cached = cache.get(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
                    if (cached != null) {
                        cached.setCounters(r.allotment(), r.available(), r.held(), r.sold(), r.lent());
                    }
                }
            }

            @Override
            public void outcomeUnknown(int bucketNo) {
                cache.markStale(new BucketKey(k.tenantId(), k.itemId(), bucketNo));
            }
        };
    }

    /**
     * Records the keys that hold no units: Reserves for an item collapsed home (FORWARDED, answered
     * FORWARDED) and claims of keys new here (CLAIMED, answered with the claim). In the bucket that
     * decided them, so that its key set and the table agree.
     */
    private Redo insertKeyRecords() throws SQLException {
        int n = forwards.size() + claims.size();
        if (n == 0) {
            return null;
        }
        List<Op.Reserve> all = new ArrayList<>(n);
        all.addAll(forwards);
        all.addAll(claims);
        KeyRecordColumns rec = new KeyRecordColumns();
        long nowMillis = clock.nowMicros() / 1000;
        for (Op.Reserve r : all) {
            var q = r.request();
            int bucketNo = r.bucket().bucketNo();
            rec.add(HoldId.create(q.getTenantId(), q.getItemId(), q.getRegion(), bucketNo, nowMillis).uuid(),
                    q.getTenantId(), q.getItemId(), bucketNo, q.getRegion(), q.getQuantity(), q.getBuyerId(),
                    q.getIdempotencyKey(), r.fingerprint(), r.claim() ? HoldState.CLAIMED : HoldState.FORWARDED);
        }
        List<HoldRow> inserted = store.insertKeyRecords(c(), rec);
        if (inserted.size() != n) {
            return keysInUse(placedKeys(inserted), all);
        }
        Map<KeyRef, HoldRow> rows = new HashMap<>();
        for (HoldRow h : inserted) {
            rows.put(keyOf(h), h);
        }
        for (Op.Reserve r : all) {
            delta(r.bucket()).newKeys.add(r.request().getIdempotencyKey());
            if (r.claim()) {
                Hold claim = rows.get(r.keyRef()).toProto();
                answer(r, ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).setHold(claim).build());
            } else {
                fail(r, forwarded(r));
            }
        }
        return null;
    }

    /**
     * Why this shard may not record a claim of the key (null: it may). A claim comes from a
     * region of an item sold in several regions that is not its home, and is recorded at home.
     */
    private Failure refuseClaim(Op.Reserve r, ItemConfig item) {
        var q = r.request();
        String what = "item " + q.getTenantId() + "/" + q.getItemId();
        if (!item.homeRegion().equals(r.claimHome())) {
            return Failure.invalid("home_region", "is " + r.claimHome() + ", but " + what + " has home region "
                    + item.homeRegion());
        }
        ItemLedger ledger = ledger(r.bucket());
        if (ledger == null || !ledger.multiRegion()) {
            return Failure.invalid("home_region", what + " is sold in one region only: its keys need no claim");
        }
        if (ledger.isHome(q.getRegion()) || !ledger.regions.contains(q.getRegion())) {
            return Failure.invalid("request.region", "is " + q.getRegion() + ": a claim names a region of " + what
                    + " other than its home " + item.homeRegion() + " (regions " + ledger.regions + ")");
        }
        return null;
    }

    private static KeyRef keyOf(HoldRow h) {
        return new KeyRef(h.tenantId(), h.itemId(), h.idempotencyKey());
    }

    private Failure forwarded(Op.Reserve r) {
        ItemLedger ledger = ledger(r.bucket());
        String home = ledger != null ? ledger.homeRegion : cache.get(r.bucket()).item.homeRegion();
        var q = r.request();
        return Failure.of(Reason.FORWARDED, "item " + q.getTenantId() + "/" + q.getItemId()
                + " collapsed to its home region " + home + "; reserve there", Map.of("home_region", home));
    }

    private Map<UsageKey, Long> readUsage(List<Op.Reserve> reserves) throws SQLException {
        List<Op.Reserve> limited = new ArrayList<>();
        for (Op.Reserve r : reserves) {
            BucketState b = cache.get(r.bucket());
            if (!r.claim() && b.item.limited() && b.available + delta(r.bucket()).credited > 0) {
                limited.add(r);
            }
        }
        if (limited.isEmpty()) {
            return Map.of();
        }
        List<UsageKey> keys = new ArrayList<>(limited.size());
        for (Op.Reserve r : limited) {
            var q = r.request();
            keys.add(new UsageKey(q.getTenantId(), q.getItemId(), q.getBuyerId()));
        }
        return store.readUsage(c(), keys);
    }

    /** Keys the bucket's key set could not vouch for: a known key is a retry, the rest SOLD_OUT. */
    private void resolveMaybeSoldOut(List<Op.Reserve> maybe, List<Op.Reserve> lookups) throws SQLException {
        if (maybe.isEmpty()) {
            return;
        }
        Set<KeyRef> known = new java.util.HashSet<>();
        for (HoldRow h : store.readHoldsByKey(c(), maybe.stream().map(Op.Reserve::keyRef).toList())) {
            known.add(keyOf(h));
        }
        for (Op.Reserve r : maybe) {
            if (known.contains(r.keyRef())) {
                lookups.add(r);
            } else {
                soldOut(r, ledger(r.bucket()));
            }
        }
    }

    /**
     * Keys used before: the same request gets its original hold back (a claim: its claim), a
     * FORWARDED key is forwarded again, other parameters are refused naming the first use.
     */
    private void answerLookups(List<Op.Reserve> lookups) throws SQLException {
        if (lookups.isEmpty()) {
            return;
        }
        Map<KeyRef, HoldRow> rows = new HashMap<>();
        for (HoldRow h : store.readHoldsByKey(c(), lookups.stream().map(Op.Reserve::keyRef).toList())) {
            rows.put(keyOf(h), h);
        }
        for (Op.Reserve r : lookups) {
            HoldRow h = rows.get(r.keyRef());
            if (h == null) {
                // The key index named a key the table does not have (a fingerprint collision, or
                // an insert rolled back): decide it as a new key next batch.
                keysElsewhere.remove(r.keyRef());
                carry.markKeyAbsent(r);
                carry.carryOver(r);
                continue;
            }
            boolean same = h.fingerprint().equals(r.fingerprint());
            boolean claimRow = h.state() == HoldState.CLAIMED;
            if (r.claim() ? same && claimRow : same && !claimRow) {
                if (h.state() == HoldState.FORWARDED) {
                    fail(r, forwarded(r));
                } else {
                    answer(r, reserved(r, h.toProto()));
                }
            } else {
                fail(r, keyReused(r.request(), h));
            }
        }
    }

    /** IDEMPOTENCY_KEY_REUSED for {@code q}, naming the key's first use {@code first}. */
    private static Failure keyReused(io.lastunit.api.inventory.v1.ReserveRequest q, HoldRow first) {
        return Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "idempotency_key " + q.getIdempotencyKey() + " of item "
                + q.getTenantId() + "/" + q.getItemId() + " was first used in region " + first.region()
                + " for quantity=" + first.qty() + " buyer=" + first.buyerId()
                + (first.state() == HoldState.CLAIMED ? "" : " (" + first.effectiveState() + ")")
                + "; this request (region " + q.getRegion() + ", quantity=" + q.getQuantity() + ", buyer="
                + q.getBuyerId() + ") differs");
    }

    /**
     * RESERVED with {@code hold}. For an item sold in several regions, a shard that is not its
     * home says where the key's use must be claimed before the router answers
     * ({@code key_home_region}).
     */
    private ReserveResponse reserved(Op.Reserve r, Hold hold) {
        ReserveResponse.Builder b = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).setHold(hold);
        ItemLedger ledger = ledger(r.bucket());
        if (!r.claim() && ledger != null && ledger.multiRegion() && !ledger.isHome(r.request().getRegion())) {
            b.setKeyHomeRegion(ledger.homeRegion);
        }
        return b.build();
    }

    private static Set<KeyRef> placedKeys(List<HoldRow> inserted) {
        Set<KeyRef> placed = new java.util.HashSet<>();
        for (HoldRow h : inserted) {
            placed.add(keyOf(h));
        }
        return placed;
    }

    /**
     * An insert skipped some keys (ON CONFLICT): they were used for their item already (another
     * bucket, a claim, another writer). Decide again with those keys looked up instead of placed.
     */
    private static Redo keysInUse(Set<KeyRef> placed, List<Op.Reserve> tried) {
        Set<KeyRef> elsewhere = new java.util.HashSet<>();
        for (Op.Reserve r : tried) {
            if (!placed.contains(r.keyRef())) {
                elsewhere.add(r.keyRef());
            }
        }
        return new Redo(elsewhere.size() + " idempotency keys already in use", Set.of(), elsewhere);
    }

    /** The new holds of a batch: the Reserves, and the rows for the insert in the same order. */
    private record NewHolds(List<Op.Reserve> reserves, NewHoldColumns rows) {
    }

    /**
     * New holds for the accepted Reserves. With {@code mayDefer}, in a batch that has not touched
     * the database yet and may write in one statement, the insert is only prepared here: the
     * counters change in this batch's deltas as usual, and {@link #applyBucketDeltas} writes the
     * holds and the counters in one statement that commits itself.
     */
    private Redo insertHolds(List<Op.Reserve> accepted, boolean mayDefer) throws SQLException {
        if (accepted.isEmpty()) {
            return null;
        }
        NewHolds h = new NewHolds(accepted, new NewHoldColumns());
        long nowMillis = clock.nowMicros() / 1000;
        for (Op.Reserve r : accepted) {
            var q = r.request();
            int bucketNo = r.bucket().bucketNo();
            long ttl = r.holdTtlMsRequested() != 0 ? r.holdTtlMsRequested() : cache.get(r.bucket()).item.holdTtlMs();
            h.rows().add(HoldId.create(q.getTenantId(), q.getItemId(), q.getRegion(), bucketNo, nowMillis).uuid(),
                    q.getTenantId(), q.getItemId(), bucketNo, q.getRegion(), q.getQuantity(), q.getBuyerId(),
                    q.getIdempotencyKey(), r.fingerprint(), ttl);
        }
        if (mayDefer && !stepwise && !conn.opened()) {
            deferred = h;
            take(h);
            return null;
        }
        LaneStore.InsertedHolds inserted = store.insertHolds(c(), h.rows());
        if (inserted.count() != h.rows().size()) {
            return keysInUse(new java.util.HashSet<>(inserted.inserted()), h.reserves);
        }
        take(h);
        answerPlaced(h, inserted.createdAt());
        return null;
    }

    /** The new holds' units move from available to held in this batch's deltas; their keys join the key set. */
    private void take(NewHolds h) {
        for (int x = 0; x < h.rows().size(); x++) {
            Delta d = delta(h.reserves.get(x).bucket());
            d.available -= h.rows().qty(x);
            d.held += h.rows().qty(x);
            d.newKeys.add(h.rows().key(x));
        }
    }

    /** Once the holds are written at {@code created} (the database's now()): each caller's RESERVED. */
    private void answerPlaced(NewHolds h, Instant created) {
        long createdMicros = created.getEpochSecond() * 1_000_000L + created.getNano() / 1_000;
        for (int x = 0; x < h.rows().size(); x++) {
            Op.Reserve r = h.reserves.get(x);
            HoldRow row = h.rows().row(x, created);
            Delta d = delta(r.bucket());
            d.minNewExpiryMicros = Math.min(d.minNewExpiryMicros, createdMicros + h.rows().ttlMs(x) * 1_000L);
            answer(r, reserved(r, row.toProto()));
        }
    }

    private Redo writeUsage(List<Op.Reserve> accepted, Map<UsageKey, Long> usage, Map<UsageKey, Long> added)
            throws SQLException {
        if (added.isEmpty()) {
            return null;
        }
        int n = added.size();
        UsageColumns changes = new UsageColumns();
        for (Map.Entry<UsageKey, Long> e : added.entrySet()) {
            changes.add(e.getKey(), usage.getOrDefault(e.getKey(), 0L), e.getValue());
        }
        int matched = store.casUsage(c(), changes);
        if (matched != n) {
            return new Redo("buyer usage changed underneath (" + matched + " of " + n + " matched)", Set.of(), Set.of());
        }
        return null;
    }

    // ---- the hot row, last ----

    /** The counter changes of every bucket this batch changes: the buckets, and their deltas in the same order. */
    private record BucketDeltas(List<BucketKey> keys, BucketDeltaColumns columns) {
        int size() {
            return keys.size();
        }
    }

    private BucketDeltas bucketDeltas() {
        List<BucketKey> keys = new ArrayList<>();
        for (Map.Entry<BucketKey, Delta> e : deltas.entrySet()) {
            Delta d = e.getValue();
            if (d.available != 0 || d.held != 0 || d.sold != 0) {
                keys.add(e.getKey());
            }
        }
        BucketDeltas b = new BucketDeltas(keys, new BucketDeltaColumns());
        for (BucketKey k : keys) {
            Delta d = deltas.get(k);
            // allotment moves only in a borrow, which commits on its own
            b.columns().add(k.tenantId(), k.itemId(), k.bucketNo(), 0, d.available, d.held, d.sold, d.taken);
        }
        return b;
    }

    private Redo applyBucketDeltas() throws SQLException {
        if (deferred != null) {
            return writeInOneStatement(deferred, bucketDeltas());
        }
        BucketDeltas b = bucketDeltas();
        if (b.size() == 0) {
            return null;
        }
        List<LaneStore.BucketRow> rows = store.applyBucketDeltas(c(), b.columns());
        if (rows.size() != b.size()) {
            Set<BucketKey> stale = new java.util.HashSet<>(b.keys);
            for (LaneStore.BucketRow r : rows) {
                stale.remove(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
            }
            return new Redo("conditional bucket update matched " + rows.size() + " of " + b.size() + " (stale cache: "
                    + stale + ")", stale, Set.of());
        }
        bucketRows.addAll(rows);
        return null;
    }

    /**
     * The batch's new holds and its bucket updates as one statement in its own transaction
     * ({@link LaneStore#reserveInOneStatement}): the statement's end is the commit, with no
     * round trip for the separate update and commit. If the database refuses it (a key already
     * in use, stale counters), nothing was written and the lane decides the batch again
     * statement by statement ({@link #refusedInOneStatement}).
     */
    private Redo writeInOneStatement(NewHolds h, BucketDeltas b) throws SQLException {
        Connection c = c();
        c.setAutoCommit(true);
        LaneStore.Reserved written;
        try {
            oneStatementSent = true;
            written = store.reserveInOneStatement(c, h.rows(), b.columns());
        } catch (SQLException e) {
            if (LaneStore.REFUSED.equals(e.getSQLState())) {
                refusedInOneStatement = true;
                return new Redo("one-statement batch refused (" + e.getMessage() + ")", Set.of(), Set.of());
            }
            throw e;
        } finally {
            restoreTransactions(c);
        }
        committedInStatement = true;
        bucketRows.addAll(written.buckets());
        answerPlaced(h, written.createdAt());
        return null;
    }

    /** Back to explicit transactions (the pool's setting); a broken connection is the pool's to evict. */
    private static void restoreTransactions(Connection c) {
        try {
            c.setAutoCommit(false);
        } catch (SQLException ignored) {
            // the connection is closed or broken; the caller's SQLException, if any, says why
        }
    }

    /** The batch committed in its one statement: the lane has nothing left to commit. */
    boolean committedInStatement() {
        return committedInStatement;
    }

    /** The batch sent its one statement: a failure other than a refusal leaves its outcome unknown. */
    boolean oneStatementSent() {
        return oneStatementSent;
    }

    /** The database refused the one statement: decide again, statement by statement. */
    boolean refusedInOneStatement() {
        return refusedInOneStatement;
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
        Set<BucketKey> published = new java.util.HashSet<>();
        for (Batch a : attempts) {
            if (a.published) {
                for (LaneStore.BucketRow r : a.bucketRows) {
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
        for (LaneStore.BucketRow r : bucketRows) {
            ItemLedger ledger = ledger(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
            if (ledger != null) {
                ledger.raise(r.bucketNo(), r.available());
            }
        }
    }

    /** After the commit: refresh the cache from what the database returned, then answer every caller. */
    void publish() {
        published = true;
        for (LaneStore.BucketRow r : bucketRows) {
            BucketKey k = new BucketKey(r.tenantId(), r.itemId(), r.bucketNo());
            BucketState b = cache.get(k);
            if (b != null) {
                b.setCounters(r.allotment(), r.available(), r.held(), r.sold(), r.lent());
            }
            ItemLedger ledger = ledger(k);
            if (ledger != null) {
                ledger.publish(r.bucketNo(), r.available());
            }
        }
        for (Map.Entry<BucketKey, Delta> e : deltas.entrySet()) {
            BucketState b = cache.get(e.getKey());
            if (b == null) {
                continue;
            }
            Delta d = e.getValue();
            for (String k : d.newKeys) {
                b.addKey(k);
            }
            Long due = recomputedDue.get(e.getKey());
            if (due != null) {
                b.earliestDueMicros = due;
            }
            b.earliestDueMicros = Math.min(b.earliestDueMicros, d.minNewExpiryMicros);
            ItemLedger ledger = ledger(e.getKey());
            if (ledger != null) {
                ledger.publishDue(e.getKey().bucketNo(), b.earliestDueMicros);
                collapser.requestIfLow(ledger);
            }
        }
        for (Map.Entry<ItemLedger, long[]> e : demand.entrySet()) {
            e.getKey().countDemand(e.getValue()[0], e.getValue()[1]);
        }
        for (Map.Entry<Op.Reserve, Integer> r : reroutes) {
            lanes.reroute(r.getKey(), r.getValue());
        }
        replier.reply(completions);
    }
}
