package io.lastunit.shard.lane;

import io.lastunit.common.HoldId;
import io.lastunit.shard.decide.BucketDelta;
import io.lastunit.shard.decide.BuyerName;
import io.lastunit.shard.decide.Call;
import io.lastunit.shard.decide.Decided;
import io.lastunit.shard.decide.HoldFacts;
import io.lastunit.shard.decide.Outcome;
import io.lastunit.shard.decide.Slot;
import io.lastunit.shard.store.HoldRow;
import io.lastunit.shard.store.BucketDeltaColumns;
import io.lastunit.shard.store.HoldRefColumns;
import io.lastunit.shard.store.KeyRecordColumns;
import io.lastunit.shard.store.KeyRef;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.NewHoldColumns;
import io.lastunit.shard.store.UsageColumns;
import io.lastunit.shard.store.UsageKey;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Writes one decided attempt in its transaction, in order: the expiries, the hold transitions
 * (round by round), buyer usage given back then taken (compare-and-set), the key records, the new
 * holds, and last the conditional update of every changed bucket's counters — or, for a batch
 * that only places holds on a connection it has not used yet, the holds and the counters in one
 * statement that commits itself. Every statement's row count is checked against the decision: a
 * difference means the lane's view was stale, and the attempt is decided again ({@link Batch.Redo}).
 * One writer per attempt; lane-confined.
 */
final class BatchWriter {

    /** What the database returned for the written attempt: the rows of new holds and key records by call index, and the buckets' new rows. */
    record Written(HoldRow[] placed, List<LaneStore.BucketRow> buckets, Map<Slot, Long> firstNewExpiry) {
    }

    private final LaneStore store;
    private final LazyConnection conn;
    private final List<Op> ops;
    private final long nowMillis;
    private Written written;

    BatchWriter(LaneStore store, LazyConnection conn, List<Op> ops, long nowMillis) {
        this.store = store;
        this.conn = conn;
        this.ops = ops;
        this.nowMillis = nowMillis;
    }

    /** Writes the decision: {@link Batch.Written}, or why the attempt must be decided again. */
    Batch.Result write(Decided d, boolean stepwise) throws SQLException {
        NewHolds holds = newHolds(d);
        boolean onlyHolds = d.expired().isEmpty() && d.steps().isEmpty() && d.usageGiven().isEmpty()
                && d.usageTaken().isEmpty() && !hasRecords(d);
        if (onlyHolds && !holds.isEmpty() && !stepwise && !conn.opened()) {
            return writeInOneStatement(holds, deltas(d));
        }
        Batch.Redo redo = expire(d);
        if (redo == null) {
            redo = transitions(d);
        }
        if (redo == null) {
            redo = usage(d);
        }
        HoldRow[] placed = new HoldRow[ops.size()];
        if (redo == null) {
            redo = records(d, placed);
        }
        if (redo == null) {
            redo = insertHolds(holds, placed);
        }
        if (redo != null) {
            return redo;
        }
        BucketDeltas b = deltas(d);
        List<LaneStore.BucketRow> rows = b.size() == 0 ? List.of()
                : store.applyBucketDeltas(conn.get(), b.columns());
        if (rows.size() != b.size()) {
            Set<BucketKey> stale = new HashSet<>(b.keys);
            for (LaneStore.BucketRow r : rows) {
                stale.remove(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
            }
            return new Batch.Redo("conditional bucket update matched " + rows.size() + " of " + b.size()
                    + " (stale cache: " + stale + ")", stale, Set.of());
        }
        written = new Written(placed, rows, holds.firstExpiry);
        return new Batch.Written(false);
    }

    Written written() {
        return written;
    }

    // ---- expiries and transitions ----

    private Batch.Redo expire(Decided d) throws SQLException {
        if (d.expired().isEmpty()) {
            return null;
        }
        UUID[] ids = d.expired().stream().map(HoldFacts::holdId).toArray(UUID[]::new);
        int n = store.expire(conn.get(), ids);
        if (n != ids.length) {
            return stale("expired " + n + " of " + ids.length + " due holds", d.expired());
        }
        return null;
    }

    /** Round by round (a hold's second step in the batch runs after its first), one statement per kind. */
    private Batch.Redo transitions(Decided d) throws SQLException {
        Map<Integer, Map<Call.Kind, List<Decided.Step>>> rounds = new TreeMap<>();
        for (Decided.Step s : d.steps()) {
            rounds.computeIfAbsent(s.round(), r -> new LinkedHashMap<>())
                    .computeIfAbsent(s.call().kind(), k -> new ArrayList<>()).add(s);
        }
        for (Map<Call.Kind, List<Decided.Step>> round : rounds.values()) {
            for (Map.Entry<Call.Kind, List<Decided.Step>> e : round.entrySet()) {
                List<Decided.Step> steps = e.getValue();
                HoldRefColumns refs = new HoldRefColumns();
                for (Decided.Step s : steps) {
                    refs.add(((Op.HoldAction) ops.get(s.call().index())).holdId());
                }
                Connection c = conn.get();
                List<HoldRow> changed = switch (e.getKey()) {
                    case CONFIRM -> store.confirm(c, refs, steps.stream().map(s -> s.call().orderRef()).toList());
                    case RELEASE -> store.release(c, refs);
                    case EXTEND -> store.extend(c, refs, steps.stream()
                            .map(s -> (s.after().expiresAtMicros() - s.before().expiresAtMicros()) / 1_000L).toList());
                };
                if (changed.size() != steps.size()) {
                    return stale(e.getKey() + " changed " + changed.size() + " of " + steps.size() + " holds",
                            steps.stream().map(Decided.Step::before).toList());
                }
            }
        }
        return null;
    }

    /** The rows changed under the lane (a second writer, a cache gone stale): reload their buckets. */
    private static Batch.Redo stale(String what, List<HoldFacts> holds) {
        Set<BucketKey> buckets = new HashSet<>();
        for (HoldFacts h : holds) {
            buckets.add(Facts.key(h.slot()));
        }
        return new Batch.Redo(what + ": the holds changed underneath", buckets, Set.of());
    }

    // ---- buyer usage ----

    private Batch.Redo usage(Decided d) throws SQLException {
        if (!d.usageGiven().isEmpty()) {
            UsageColumns ended = new UsageColumns();
            for (HoldFacts h : d.usageGiven()) {
                ended.add(new UsageKey(h.slot().tenantId(), h.slot().itemId(), h.buyerId()), 0, h.qty());
            }
            store.subtractUsage(conn.get(), ended);
        }
        if (d.usageTaken().isEmpty()) {
            return null;
        }
        UsageColumns taken = new UsageColumns();
        for (Map.Entry<BuyerName, Decided.UsageTake> e : d.usageTaken().entrySet()) {
            BuyerName b = e.getKey();
            taken.add(new UsageKey(b.tenantId(), b.itemId(), b.buyerId()), e.getValue().expected(), e.getValue().add());
        }
        int matched = store.casUsage(conn.get(), taken);
        if (matched != taken.size()) {
            return new Batch.Redo("buyer usage changed underneath (" + matched + " of " + taken.size() + " matched)",
                    Set.of(), Set.of());
        }
        return null;
    }

    // ---- key records and new holds ----

    private static boolean hasRecords(Decided d) {
        for (Outcome o : d.outcomes()) {
            if (o instanceof Outcome.Recorded) {
                return true;
            }
        }
        return false;
    }

    /** FORWARDED and CLAIMED records, in the bucket that decided them (so its key set and the table agree). */
    private Batch.Redo records(Decided d, HoldRow[] placed) throws SQLException {
        List<Integer> at = new ArrayList<>();
        KeyRecordColumns rec = new KeyRecordColumns();
        List<Op.Reserve> tried = new ArrayList<>();
        for (int x = 0; x < d.outcomes().length; x++) {
            if (d.outcome(x) instanceof Outcome.Recorded o) {
                Op.Reserve r = (Op.Reserve) ops.get(x);
                var q = r.request();
                int bucketNo = r.bucket().bucketNo();
                rec.add(HoldId.create(q.getTenantId(), q.getItemId(), q.getRegion(), bucketNo, nowMillis).uuid(),
                        q.getTenantId(), q.getItemId(), bucketNo, q.getRegion(), q.getQuantity(), q.getBuyerId(),
                        q.getIdempotencyKey(), r.fingerprint(), o.state());
                at.add(x);
                tried.add(r);
            }
        }
        if (at.isEmpty()) {
            return null;
        }
        List<HoldRow> inserted = store.insertKeyRecords(conn.get(), rec);
        Map<KeyRef, HoldRow> rows = new HashMap<>();
        for (HoldRow h : inserted) {
            rows.put(new KeyRef(h.tenantId(), h.itemId(), h.idempotencyKey()), h);
        }
        if (inserted.size() != at.size()) {
            return keysInUse(rows.keySet(), tried);
        }
        for (int x : at) {
            placed[x] = rows.get(((Op.Reserve) ops.get(x)).keyRef());
        }
        return null;
    }

    /**
     * An insert skipped some keys (ON CONFLICT): they were used for their item already (another
     * bucket, a claim, another writer). Decide again with those keys looked up instead of placed.
     */
    private static Batch.Redo keysInUse(Set<KeyRef> placed, List<Op.Reserve> tried) {
        Set<KeyRef> elsewhere = new HashSet<>();
        for (Op.Reserve r : tried) {
            if (!placed.contains(r.keyRef())) {
                elsewhere.add(r.keyRef());
            }
        }
        return new Batch.Redo(elsewhere.size() + " idempotency keys already in use", Set.of(), elsewhere);
    }

    /** The new holds of a batch, as the insert's columns, with the call index of each. */
    private static final class NewHolds {
        final NewHoldColumns columns;
        final int[] at;
        final Op.Reserve[] reserves;
        final Map<Slot, Long> firstExpiry = new HashMap<>();

        NewHolds(int n) {
            columns = new NewHoldColumns(n);
            at = new int[n];
            reserves = new Op.Reserve[n];
        }

        boolean isEmpty() {
            return at.length == 0;
        }
    }

    private NewHolds newHolds(Decided d) {
        int n = 0;
        for (Outcome o : d.outcomes()) {
            if (o instanceof Outcome.Reserved) {
                n++;
            }
        }
        NewHolds h = new NewHolds(n);
        int y = 0;
        for (int x = 0; x < d.outcomes().length; x++) {
            if (d.outcome(x) instanceof Outcome.Reserved o) {
                Op.Reserve r = (Op.Reserve) ops.get(x);
                var q = r.request();
                int bucketNo = r.bucket().bucketNo();
                h.columns.add(HoldId.create(q.getTenantId(), q.getItemId(), q.getRegion(), bucketNo, nowMillis).uuid(),
                        q.getTenantId(), q.getItemId(), bucketNo, q.getRegion(), q.getQuantity(), q.getBuyerId(),
                        q.getIdempotencyKey(), r.fingerprint(), o.ttlMs());
                h.at[y] = x;
                h.reserves[y] = r;
                y++;
            }
        }
        return h;
    }

    private Batch.Redo insertHolds(NewHolds h, HoldRow[] placed) throws SQLException {
        if (h.isEmpty()) {
            return null;
        }
        LaneStore.InsertedHolds inserted = store.insertHolds(conn.get(), h.columns);
        if (inserted.count() != h.columns.size()) {
            return keysInUse(new HashSet<>(inserted.inserted()), List.of(h.reserves));
        }
        placed(h, inserted.createdAt(), placed);
        return null;
    }

    /** Once the holds are written at {@code created} (the database's now()): their rows, and each bucket's first new expiry. */
    private static void placed(NewHolds h, Instant created, HoldRow[] placed) {
        long createdMicros = Facts.micros(created);
        for (int x = 0; x < h.columns.size(); x++) {
            placed[h.at[x]] = h.columns.row(x, created);
            h.firstExpiry.merge(Facts.slot(h.reserves[x].bucket()), createdMicros + h.columns.ttlMs(x) * 1_000L,
                    Math::min);
        }
    }

    // ---- the hot rows, last ----

    /** The counter changes of every bucket the batch changes, as the bucket update's columns. */
    private record BucketDeltas(List<BucketKey> keys, BucketDeltaColumns columns) {
        int size() {
            return keys.size();
        }
    }

    private static BucketDeltas deltas(Decided d) {
        BucketDeltas b = new BucketDeltas(new ArrayList<>(), new BucketDeltaColumns());
        for (Map.Entry<Slot, BucketDelta> e : d.deltas().entrySet()) {
            BucketDelta delta = e.getValue();
            if (!delta.changes()) {
                continue;
            }
            Slot s = e.getKey();
            b.keys.add(Facts.key(s));
            // allotment moves only in a borrow, which commits on its own
            b.columns.add(s.tenantId(), s.itemId(), s.bucketNo(), 0, delta.available(), delta.held(), delta.sold(),
                    delta.taken());
        }
        return b;
    }

    /**
     * The batch's new holds and its bucket updates as one statement in its own transaction
     * ({@link LaneStore#reserveInOneStatement}): the statement's end is the commit, with no round
     * trip for a separate update and commit. If the database refuses it (a key already in use,
     * stale counters), nothing was written and the lane decides the batch again statement by
     * statement, which says precisely which key or bucket was off.
     */
    private Batch.Result writeInOneStatement(NewHolds h, BucketDeltas b) throws SQLException {
        Connection c = conn.get();
        c.setAutoCommit(true);
        LaneStore.Reserved done;
        try {
            done = store.reserveInOneStatement(c, h.columns, b.columns());
        } catch (SQLException e) {
            if (LaneStore.REFUSED.equals(e.getSQLState())) {
                return new Batch.Redo("one-statement batch refused (" + e.getMessage() + ")", Set.of(), Set.of(), true);
            }
            throw new Batch.SelfCommitFailed(e);
        } finally {
            restoreTransactions(c);
        }
        HoldRow[] placed = new HoldRow[ops.size()];
        placed(h, done.createdAt(), placed);
        written = new Written(placed, done.buckets(), h.firstExpiry);
        return new Batch.Written(true);
    }

    /** Back to explicit transactions (the pool's setting); a broken connection is the pool's to evict. */
    private static void restoreTransactions(Connection c) {
        try {
            c.setAutoCommit(false);
        } catch (SQLException ignored) {
            // the connection is closed or broken; the caller's SQLException, if any, says why
        }
    }
}
