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
import io.lastunit.shard.store.KeyRef;
import io.lastunit.shard.store.LaneStore;
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
    record Written(Map<Integer, HoldRow> placed, List<LaneStore.BucketRow> buckets, Map<Slot, Long> firstNewExpiry) {
    }

    private final LaneStore store;
    private final LazyConnection conn;
    private final List<Op> ops;
    private final long nowMillis;
    private boolean oneStatementSent;
    private boolean committedInStatement;
    private boolean refusedInOneStatement;
    private Written written;

    BatchWriter(LaneStore store, LazyConnection conn, List<Op> ops, long nowMillis) {
        this.store = store;
        this.conn = conn;
        this.ops = ops;
        this.nowMillis = nowMillis;
    }

    /** Writes the decision; null when it is written (and, in one statement, committed), else why not. */
    Batch.Redo write(Decided d, boolean stepwise) throws SQLException {
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
        Map<Integer, HoldRow> placed = new HashMap<>();
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
                : store.applyBucketDeltas(conn.get(), b.t, b.i, b.bn, b.dal, b.da, b.dh, b.ds, b.tk);
        if (rows.size() != b.size()) {
            Set<BucketKey> stale = new HashSet<>(b.keys);
            for (LaneStore.BucketRow r : rows) {
                stale.remove(new BucketKey(r.tenantId(), r.itemId(), r.bucketNo()));
            }
            return new Batch.Redo("conditional bucket update matched " + rows.size() + " of " + b.size()
                    + " (stale cache: " + stale + ")", stale, Set.of());
        }
        written = new Written(placed, rows, holds.firstExpiry);
        return null;
    }

    Written written() {
        return written;
    }

    boolean oneStatementSent() {
        return oneStatementSent;
    }

    boolean committedInStatement() {
        return committedInStatement;
    }

    boolean refusedInOneStatement() {
        return refusedInOneStatement;
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
        Map<Integer, Map<Call.Kind, List<Decided.Step>>> rounds = new java.util.TreeMap<>();
        for (Decided.Step s : d.steps()) {
            rounds.computeIfAbsent(s.round(), r -> new LinkedHashMap<>())
                    .computeIfAbsent(s.call().kind(), k -> new ArrayList<>()).add(s);
        }
        for (Map<Call.Kind, List<Decided.Step>> round : rounds.values()) {
            for (Map.Entry<Call.Kind, List<Decided.Step>> e : round.entrySet()) {
                List<Decided.Step> steps = e.getValue();
                LaneStore.HoldRefs refs = holdRefs(steps);
                Connection c = conn.get();
                List<HoldRow> changed = switch (e.getKey()) {
                    case CONFIRM -> store.confirm(c, refs,
                            steps.stream().map(s -> s.call().orderRef()).toArray(String[]::new));
                    case RELEASE -> store.release(c, refs);
                    case EXTEND -> store.extend(c, refs, steps.stream()
                            .map(s -> (s.after().expiresAtMicros() - s.before().expiresAtMicros()) / 1_000L)
                            .toArray(Long[]::new));
                };
                if (changed.size() != steps.size()) {
                    return stale(e.getKey() + " changed " + changed.size() + " of " + steps.size() + " holds",
                            steps.stream().map(Decided.Step::before).toList());
                }
            }
        }
        return null;
    }

    private LaneStore.HoldRefs holdRefs(List<Decided.Step> steps) {
        int n = steps.size();
        LaneStore.HoldRefs refs = new LaneStore.HoldRefs(new UUID[n], new String[n], new String[n], new Integer[n],
                new String[n]);
        for (int x = 0; x < n; x++) {
            HoldId id = ((Op.HoldAction) ops.get(steps.get(x).call().index())).holdId();
            refs.ids()[x] = id.uuid();
            refs.tenants()[x] = id.tenantId();
            refs.items()[x] = id.itemId();
            refs.buckets()[x] = id.bucketNo();
            refs.regions()[x] = id.region();
        }
        return refs;
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
            int n = d.usageGiven().size();
            String[] t = new String[n];
            String[] i = new String[n];
            String[] b = new String[n];
            Long[] q = new Long[n];
            for (int x = 0; x < n; x++) {
                HoldFacts h = d.usageGiven().get(x);
                t[x] = h.slot().tenantId();
                i[x] = h.slot().itemId();
                b[x] = h.buyerId();
                q[x] = (long) h.qty();
            }
            store.subtractUsage(conn.get(), t, i, b, q);
        }
        if (d.usageTaken().isEmpty()) {
            return null;
        }
        int n = d.usageTaken().size();
        String[] t = new String[n];
        String[] i = new String[n];
        String[] b = new String[n];
        Long[] expected = new Long[n];
        Long[] add = new Long[n];
        int x = 0;
        for (Map.Entry<BuyerName, Decided.UsageTake> e : d.usageTaken().entrySet()) {
            t[x] = e.getKey().tenantId();
            i[x] = e.getKey().itemId();
            b[x] = e.getKey().buyerId();
            expected[x] = e.getValue().expected();
            add[x] = e.getValue().add();
            x++;
        }
        int matched = store.casUsage(conn.get(), t, i, b, expected, add);
        if (matched != n) {
            return new Batch.Redo("buyer usage changed underneath (" + matched + " of " + n + " matched)", Set.of(),
                    Set.of());
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
    private Batch.Redo records(Decided d, Map<Integer, HoldRow> placed) throws SQLException {
        List<Integer> at = new ArrayList<>();
        for (int x = 0; x < d.outcomes().length; x++) {
            if (d.outcome(x) instanceof Outcome.Recorded) {
                at.add(x);
            }
        }
        if (at.isEmpty()) {
            return null;
        }
        LaneStore.KeyRecords rec = LaneStore.KeyRecords.of(at.size());
        List<Op.Reserve> tried = new ArrayList<>(at.size());
        for (int x = 0; x < at.size(); x++) {
            Op.Reserve r = (Op.Reserve) ops.get(at.get(x));
            Outcome.Recorded o = (Outcome.Recorded) d.outcome(at.get(x));
            var q = r.request();
            int bucketNo = r.bucket().bucketNo();
            rec.ids()[x] = HoldId.create(q.getTenantId(), q.getItemId(), q.getRegion(), bucketNo, nowMillis).uuid();
            rec.tenants()[x] = q.getTenantId();
            rec.items()[x] = q.getItemId();
            rec.buckets()[x] = bucketNo;
            rec.regions()[x] = q.getRegion();
            rec.qtys()[x] = q.getQuantity();
            rec.buyers()[x] = q.getBuyerId();
            rec.keys()[x] = q.getIdempotencyKey();
            rec.fingerprints()[x] = r.fingerprint();
            rec.states()[x] = o.state().name();
            tried.add(r);
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
            placed.put(x, rows.get(((Op.Reserve) ops.get(x)).keyRef()));
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

    /** The new holds of a batch, as the insert's parameter arrays, with the call index of each. */
    private static final class NewHolds {
        final List<Integer> at = new ArrayList<>();
        final List<Op.Reserve> reserves = new ArrayList<>();
        UUID[] ids;
        String[] t;
        String[] i;
        Integer[] bn;
        String[] rg;
        Integer[] qty;
        String[] buyer;
        String[] key;
        String[] fp;
        Long[] ttl;
        final Map<Slot, Long> firstExpiry = new HashMap<>();

        boolean isEmpty() {
            return at.isEmpty();
        }
    }

    private NewHolds newHolds(Decided d) {
        NewHolds h = new NewHolds();
        List<Long> ttls = new ArrayList<>();
        for (int x = 0; x < d.outcomes().length; x++) {
            if (d.outcome(x) instanceof Outcome.Reserved r) {
                h.at.add(x);
                h.reserves.add((Op.Reserve) ops.get(x));
                ttls.add(r.ttlMs());
            }
        }
        int n = h.at.size();
        h.ids = new UUID[n];
        h.t = new String[n];
        h.i = new String[n];
        h.bn = new Integer[n];
        h.rg = new String[n];
        h.qty = new Integer[n];
        h.buyer = new String[n];
        h.key = new String[n];
        h.fp = new String[n];
        h.ttl = ttls.toArray(Long[]::new);
        for (int x = 0; x < n; x++) {
            Op.Reserve r = h.reserves.get(x);
            var q = r.request();
            h.ids[x] = HoldId.create(q.getTenantId(), q.getItemId(), q.getRegion(), r.bucket().bucketNo(), nowMillis)
                    .uuid();
            h.t[x] = q.getTenantId();
            h.i[x] = q.getItemId();
            h.bn[x] = r.bucket().bucketNo();
            h.rg[x] = q.getRegion();
            h.qty[x] = q.getQuantity();
            h.buyer[x] = q.getBuyerId();
            h.key[x] = q.getIdempotencyKey();
            h.fp[x] = r.fingerprint();
        }
        return h;
    }

    private Batch.Redo insertHolds(NewHolds h, Map<Integer, HoldRow> placed) throws SQLException {
        if (h.isEmpty()) {
            return null;
        }
        LaneStore.InsertedHolds inserted = store.insertHolds(conn.get(), h.ids, h.t, h.i, h.bn, h.rg, h.qty, h.buyer,
                h.key, h.fp, h.ttl);
        if (inserted.count() != h.ids.length) {
            return keysInUse(new HashSet<>(inserted.inserted()), h.reserves);
        }
        placed(h, inserted.createdAt(), placed);
        return null;
    }

    /** Once the holds are written at {@code created} (the database's now()): their rows, and each bucket's first new expiry. */
    private static void placed(NewHolds h, Instant created, Map<Integer, HoldRow> placed) {
        long createdMicros = Facts.micros(created);
        for (int x = 0; x < h.ids.length; x++) {
            placed.put(h.at.get(x), new HoldRow(h.ids[x], h.t[x], h.i[x], h.bn[x], h.rg[x], h.qty[x], h.buyer[x],
                    h.key[x], h.fp[x], "HELD", created, created.plusMillis(h.ttl[x]), false, null, false));
            h.firstExpiry.merge(Facts.slot(h.reserves.get(x).bucket()), createdMicros + h.ttl[x] * 1_000L, Math::min);
        }
    }

    // ---- the hot rows, last ----

    /** The counter changes of every bucket the batch changes, as the bucket update's parameter arrays. */
    private record BucketDeltas(List<BucketKey> keys, String[] t, String[] i, Integer[] bn, Long[] dal, Long[] da,
                                Long[] dh, Long[] ds, Long[] tk) {
        int size() {
            return keys.size();
        }
    }

    private static BucketDeltas deltas(Decided d) {
        List<Map.Entry<Slot, BucketDelta>> changed = new ArrayList<>();
        for (Map.Entry<Slot, BucketDelta> e : d.deltas().entrySet()) {
            if (e.getValue().changes()) {
                changed.add(e);
            }
        }
        int n = changed.size();
        BucketDeltas b = new BucketDeltas(new ArrayList<>(n), new String[n], new String[n], new Integer[n], new Long[n],
                new Long[n], new Long[n], new Long[n], new Long[n]);
        for (int x = 0; x < n; x++) {
            Slot s = changed.get(x).getKey();
            BucketDelta delta = changed.get(x).getValue();
            b.keys.add(Facts.key(s));
            b.t[x] = s.tenantId();
            b.i[x] = s.itemId();
            b.bn[x] = s.bucketNo();
            b.dal[x] = 0L; // allotment moves only in a borrow, which commits on its own
            b.da[x] = delta.available();
            b.dh[x] = delta.held();
            b.ds[x] = delta.sold();
            b.tk[x] = delta.taken();
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
    private Batch.Redo writeInOneStatement(NewHolds h, BucketDeltas b) throws SQLException {
        Connection c = conn.get();
        c.setAutoCommit(true);
        LaneStore.Reserved done;
        try {
            oneStatementSent = true;
            done = store.reserveInOneStatement(c, h.ids, h.t, h.i, h.bn, h.rg, h.qty, h.buyer, h.key, h.fp, h.ttl,
                    b.t, b.i, b.bn, b.dal, b.da, b.dh, b.ds, b.tk);
        } catch (SQLException e) {
            if (LaneStore.REFUSED.equals(e.getSQLState())) {
                refusedInOneStatement = true;
                return new Batch.Redo("one-statement batch refused (" + e.getMessage() + ")", Set.of(), Set.of());
            }
            throw e;
        } finally {
            restoreTransactions(c);
        }
        committedInStatement = true;
        Map<Integer, HoldRow> placed = new HashMap<>();
        placed(h, done.createdAt(), placed);
        written = new Written(placed, done.buckets(), h.firstExpiry);
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
}
