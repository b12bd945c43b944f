package io.lastunit.shard.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongUnaryOperator;

/**
 * The statements a lane runs, each one round trip that handles a whole batch through
 * {@code unnest} of arrays, each transition conditional, each writing its outbox rows in the
 * same statement (a data-modifying CTE). Stateless: the caller owns the connection and the
 * transaction; nothing here commits. Thread-safe.
 *
 * <p>Hazard: the bucket update must run last in its transaction (it takes the hot row lock);
 * {@link #applyBucketDeltas} is written for that place.
 */
public final class LaneStore {

    /**
     * A bucket row as returned by the conditional update or a load. {@code lent} is the row's
     * running total of units it lent to siblings (schema V6), so that a lane can tell which
     * borrows from the bucket its counters already reflect; -1 when the statement did not read it.
     */
    public record BucketRow(String tenantId, String itemId, int bucketNo,
                            long allotment, long available, long held, long sold, long lent) {
        /** A row read without its lent total (a collapse, a transfer, a restock). */
        public BucketRow(String tenantId, String itemId, int bucketNo, long allotment, long available, long held,
                         long sold) {
            this(tenantId, itemId, bucketNo, allotment, available, held, sold, -1);
        }
    }

    /** An item with one of its buckets, the earliest HELD expiry in it and the database clock. */
    public record LoadedBucket(String homeRegion, long total, int perBuyerLimit, long holdTtlMs, long extendByMs,
                               int bucketCount, String state, BucketRow bucket,
                               long earliestDueMicros, long dbNowMicros) {
    }

    private static final String LOAD_BUCKET = """
            SELECT i.home_region, i.total, i.per_buyer_limit, i.hold_ttl_ms, i.extend_by_ms, i.bucket_count, i.state,
                   b.allotment, b.available, b.held, b.sold, b.lent,
                   (SELECT min(h.expires_at) FROM holds h
                     WHERE h.tenant_id = b.tenant_id AND h.item_id = b.item_id AND h.bucket_no = b.bucket_no
                       AND h.state = 'HELD'),
                   now()
              FROM items i JOIN buckets b ON b.tenant_id = i.tenant_id AND b.item_id = i.item_id
             WHERE b.tenant_id = ? AND b.item_id = ? AND b.bucket_no = ?""";

    public LoadedBucket loadBucket(Connection c, String tenant, String item, int bucketNo) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(LOAD_BUCKET)) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setInt(3, bucketNo);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                Timestamp due = rs.getTimestamp(13);
                return new LoadedBucket(rs.getString(1), rs.getLong(2), rs.getInt(3), rs.getLong(4), rs.getLong(5),
                        rs.getInt(6), rs.getString(7),
                        new BucketRow(tenant, item, bucketNo, rs.getLong(8), rs.getLong(9), rs.getLong(10), rs.getLong(11),
                                rs.getLong(12)),
                        due == null ? Long.MAX_VALUE : micros(due), micros(rs.getTimestamp(14)));
            }
        }
    }

    /** The keys of one bucket: a range of the {@code holds_bucket_state} index (schema V3), not a scan of every hold. */
    static final String BUCKET_KEYS =
            "SELECT idempotency_key FROM holds WHERE tenant_id = ? AND item_id = ? AND bucket_no = ? LIMIT ?";

    /** Up to {@code max} idempotency keys placed in the bucket; {@code max + 1} results mean "more". */
    public List<String> bucketKeys(Connection c, String tenant, String item, int bucketNo, int max) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(BUCKET_KEYS)) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setInt(3, bucketNo);
            ps.setInt(4, max + 1);
            ps.setFetchSize(10_000);
            List<String> keys = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    keys.add(rs.getString(1));
                }
            }
            return keys;
        }
    }

    /** The database's clock at the start of the transaction ({@code now()}), in epoch micros. */
    public long dbNowMicros(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT now()"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return micros(rs.getTimestamp(1));
        }
    }

    static final String DUE = "SELECT " + HoldRow.columns("") + " FROM holds WHERE tenant_id = ? AND item_id = ?"
            + " AND bucket_no = ? AND state = 'HELD' AND expires_at <= now() ORDER BY expires_at LIMIT ?";

    /** Up to {@code limit} HELD holds of one bucket whose expiry has passed (database clock), earliest first. */
    public List<HoldRow> dueHolds(Connection c, String tenant, String item, int bucketNo, int limit)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(DUE)) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setInt(3, bucketNo);
            ps.setInt(4, limit);
            return holds(ps);
        }
    }

    static final String NEXT_DUE = "SELECT min(expires_at) FROM holds WHERE tenant_id = ? AND item_id = ?"
            + " AND bucket_no = ? AND state = 'HELD' AND expires_at > now()";

    /** Earliest expiry (epoch micros) among the bucket's HELD holds not yet due, or Long.MAX_VALUE. */
    public long nextDue(Connection c, String tenant, String item, int bucketNo) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(NEXT_DUE)) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setInt(3, bucketNo);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                Timestamp t = rs.getTimestamp(1);
                return t == null ? Long.MAX_VALUE : micros(t);
            }
        }
    }

    private static final String EXPIRE = """
            WITH upd AS (
                UPDATE holds h SET state = 'EXPIRED', ended_at = now()
                 WHERE h.hold_id = ANY(?::uuid[]) AND h.state = 'HELD' AND h.expires_at <= now()
                RETURNING h.tenant_id, h.item_id, h.hold_id, h.qty
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'EXPIRED', hold_id, qty FROM upd
            )
            SELECT count(*) FROM upd""";

    /** Expires these due HELD holds (with their outbox events); returns how many it expired. */
    public int expire(Connection c, UUID[] ids) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(EXPIRE)) {
            ps.setArray(1, c.createArrayOf("uuid", ids));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static final String CONFIRM = """
            WITH upd AS (
                UPDATE holds h SET state = 'SOLD', order_ref = d.ref, ended_at = now()
                  FROM unnest(?::uuid[], ?::text[], ?::text[], ?::int4[], ?::text[], ?::text[]) AS d(id, t, i, n, r, ref)
                 WHERE h.hold_id = d.id AND h.tenant_id = d.t AND h.item_id = d.i AND h.bucket_no = d.n AND h.region = d.r
                   AND h.state = 'HELD' AND h.expires_at > now()
                RETURNING %s
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'SOLD', hold_id, qty FROM upd
            )
            SELECT * FROM upd""".formatted(HoldRow.columns("h"));

    /** HELD and unexpired → SOLD. Returns the holds it changed. */
    public List<HoldRow> confirm(Connection c, HoldRefColumns refs, List<String> orderRefs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(CONFIRM)) {
            int next = refs.bind(ps, 1);
            ps.setArray(next, c.createArrayOf("text", orderRefs.toArray(String[]::new)));
            return holds(ps);
        }
    }

    private static final String RELEASE = """
            WITH upd AS (
                UPDATE holds h SET state = 'RELEASED', ended_at = now()
                  FROM unnest(?::uuid[], ?::text[], ?::text[], ?::int4[], ?::text[]) AS d(id, t, i, n, r)
                 WHERE h.hold_id = d.id AND h.tenant_id = d.t AND h.item_id = d.i AND h.bucket_no = d.n AND h.region = d.r
                   AND h.state = 'HELD' AND h.expires_at > now()
                RETURNING %s
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'RELEASED', hold_id, qty FROM upd
            )
            SELECT * FROM upd""".formatted(HoldRow.columns("h"));

    /** HELD and unexpired → RELEASED. Returns the holds it changed. */
    public List<HoldRow> release(Connection c, HoldRefColumns refs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(RELEASE)) {
            refs.bind(ps, 1);
            return holds(ps);
        }
    }

    private static final String EXTEND = """
            WITH upd AS (
                UPDATE holds h SET expires_at = h.expires_at + d.ms * interval '1 millisecond', extended = true
                  FROM unnest(?::uuid[], ?::text[], ?::text[], ?::int4[], ?::text[], ?::int8[]) AS d(id, t, i, n, r, ms)
                 WHERE h.hold_id = d.id AND h.tenant_id = d.t AND h.item_id = d.i AND h.bucket_no = d.n AND h.region = d.r
                   AND h.state = 'HELD' AND NOT h.extended AND h.expires_at > now()
                RETURNING %s
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'EXTENDED', hold_id, qty FROM upd
            )
            SELECT * FROM upd""".formatted(HoldRow.columns("h"));

    /** HELD, unexpired and not yet extended → expiry pushed out by the given milliseconds. */
    public List<HoldRow> extend(Connection c, HoldRefColumns refs, List<Long> extendByMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(EXTEND)) {
            int next = refs.bind(ps, 1);
            ps.setArray(next, c.createArrayOf("int8", extendByMs.toArray(Long[]::new)));
            return holds(ps);
        }
    }

    /** Reads holds by id (any tenant; the caller compares). */
    public List<HoldRow> readHolds(Connection c, UUID[] ids) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT " + HoldRow.columns("") + " FROM holds WHERE hold_id = ANY(?::uuid[])")) {
            ps.setArray(1, c.createArrayOf("uuid", ids));
            return holds(ps);
        }
    }

    /** Reads holds (and FORWARDED and CLAIMED records) by (tenant, item, idempotency key). */
    public List<HoldRow> readHoldsByKey(Connection c, List<KeyRef> keys) throws SQLException {
        int n = keys.size();
        String[] t = new String[n];
        String[] i = new String[n];
        String[] k = new String[n];
        for (int x = 0; x < n; x++) {
            t[x] = keys.get(x).tenantId();
            i[x] = keys.get(x).itemId();
            k[x] = keys.get(x).key();
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT " + HoldRow.columns("h")
                + " FROM holds h JOIN unnest(?::text[], ?::text[], ?::text[]) AS d(t, i, k)"
                + " ON h.tenant_id = d.t AND h.item_id = d.i AND h.idempotency_key = d.k")) {
            ps.setArray(1, c.createArrayOf("text", t));
            ps.setArray(2, c.createArrayOf("text", i));
            ps.setArray(3, c.createArrayOf("text", k));
            return holds(ps);
        }
    }

    /**
     * New HELD holds (CTE {@code ins}, ten parameters: {@link NewHoldColumns}) and their outbox rows
     * (CTE {@code ob}); a key already used for the item is skipped.
     */
    private static final String HOLDS_AND_OUTBOX_CTES = """
            WITH ins AS (
                INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                   request_fingerprint, state, created_at, expires_at)
                SELECT d.id, d.t, d.i, d.b, d.r, d.q, d.buyer, d.k, d.fp, 'HELD', now(),
                       now() + d.ttl * interval '1 millisecond'
                  FROM unnest(?::uuid[], ?::text[], ?::text[], ?::int4[], ?::text[], ?::int4[], ?::text[], ?::text[],
                              ?::text[], ?::int8[]) AS d(id, t, i, b, r, q, buyer, k, fp, ttl)
                ON CONFLICT (tenant_id, item_id, idempotency_key) DO NOTHING
                RETURNING hold_id, tenant_id, item_id, qty, idempotency_key
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'HELD', hold_id, qty FROM ins
            )""";

    /**
     * Each bucket's counter deltas, applied only where no counter goes below zero and a bucket
     * that takes units is open (eight parameters: {@link BucketDeltaColumns}).
     */
    private static final String BUCKET_DELTAS_UPDATE = """
            UPDATE buckets b
               SET allotment = b.allotment + d.dal, available = b.available + d.da, held = b.held + d.dh,
                   sold = b.sold + d.ds
              FROM unnest(?::text[], ?::text[], ?::int4[], ?::int8[], ?::int8[], ?::int8[], ?::int8[], ?::int8[])
                   AS d(t, i, n, dal, da, dh, ds, tk)
             WHERE b.tenant_id = d.t AND b.item_id = d.i AND b.bucket_no = d.n
               AND b.available + d.da >= 0 AND b.held + d.dh >= 0 AND b.sold + d.ds >= 0
               AND (d.tk = 0 OR b.open)
            RETURNING b.tenant_id, b.item_id, b.bucket_no, b.allotment, b.available, b.held, b.sold, b.lent""";

    private static final String INSERT_HOLDS = HOLDS_AND_OUTBOX_CTES + """

            SELECT count(*)::int4, now(),
                   CASE WHEN count(*) < ? THEN array_agg(tenant_id) END,
                   CASE WHEN count(*) < ? THEN array_agg(item_id) END,
                   CASE WHEN count(*) < ? THEN array_agg(idempotency_key) END
              FROM ins""";

    /**
     * What one insert of holds did: how many rows it inserted, the transaction's {@code now()}
     * (every new hold's created_at; its expires_at is that plus its TTL), and — only when some
     * keys were skipped — the keys it did insert.
     */
    public record InsertedHolds(int count, Instant createdAt, List<KeyRef> inserted) {
    }

    /**
     * New HELD holds with their outbox rows, one statement. A key already used for the item is
     * skipped. The reply is one row whatever the batch size: the rows inserted are exactly the
     * input (the caller knows them), so nothing is sent back per row.
     */
    public InsertedHolds insertHolds(Connection c, NewHoldColumns holds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT_HOLDS)) {
            int next = holds.bind(ps, 1);
            ps.setInt(next, holds.size());
            ps.setInt(next + 1, holds.size());
            ps.setInt(next + 2, holds.size());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                int count = rs.getInt(1);
                Instant now = rs.getTimestamp(2).toInstant();
                if (count == holds.size()) {
                    return new InsertedHolds(count, now, null);
                }
                String[] t = strings(rs.getArray(3));
                String[] i = strings(rs.getArray(4));
                String[] k = strings(rs.getArray(5));
                List<KeyRef> inserted = new ArrayList<>(k.length);
                for (int x = 0; x < k.length; x++) {
                    inserted.add(new KeyRef(t[x], i[x], k[x]));
                }
                return new InsertedHolds(count, now, inserted);
            }
        }
    }

    /**
     * {@link #insertHolds(Connection, NewHoldColumns)} from parallel arrays: what bench's PlainJdbc
     * calls, kept so that the benchmark builds unchanged.
     */
    public InsertedHolds insertHolds(Connection c, UUID[] ids, String[] tenants, String[] items, Integer[] buckets,
                                     String[] regions, Integer[] qtys, String[] buyers, String[] keys,
                                     String[] fingerprints, Long[] ttlMs) throws SQLException {
        NewHoldColumns holds = new NewHoldColumns(ids.length);
        for (int x = 0; x < ids.length; x++) {
            holds.add(ids[x], tenants[x], items[x], buckets[x], regions[x], qtys[x], buyers[x], keys[x],
                    fingerprints[x], ttlMs[x]);
        }
        return insertHolds(c, holds);
    }

    /**
     * {@link #applyBucketDeltas(Connection, BucketDeltaColumns)} from parallel arrays: what bench's
     * PlainJdbc calls, kept so that the benchmark builds unchanged.
     */
    public List<BucketRow> applyBucketDeltas(Connection c, String[] tenants, String[] items, Integer[] buckets,
                                             Long[] dAllotment, Long[] dAvailable, Long[] dHeld, Long[] dSold,
                                             Long[] taken) throws SQLException {
        BucketDeltaColumns deltas = new BucketDeltaColumns();
        for (int x = 0; x < tenants.length; x++) {
            deltas.add(tenants[x], items[x], buckets[x], dAllotment[x], dAvailable[x], dHeld[x], dSold[x], taken[x]);
        }
        return applyBucketDeltas(c, deltas);
    }

    private static String[] strings(java.sql.Array a) throws SQLException {
        return a == null ? new String[0] : (String[]) a.getArray();
    }

    /** SQLSTATE of {@code lastunit_require} (V4): a one-statement batch refused its own result. */
    public static final String REFUSED = "LU002";

    private static final String RESERVE_IN_ONE_STATEMENT = HOLDS_AND_OUTBOX_CTES + ", upd AS (\n"
            + BUCKET_DELTAS_UPDATE + "\n)" + """

            SELECT v.at, u.tenant_id, u.item_id, u.bucket_no, u.allotment, u.available, u.held, u.sold, u.lent
              FROM (SELECT now() AS at,
                           lastunit_require((SELECT count(*) FROM ins) = ? AND (SELECT count(*) FROM upd) = ?,
                                            'one-statement batch refused: a key in use or stale bucket counters')
                               AS ok) v
              LEFT JOIN upd u ON v.ok""";

    /** What a one-statement batch committed: the transaction's {@code now()} and every bucket's new row. */
    public record Reserved(Instant createdAt, List<BucketRow> buckets) {
    }

    /**
     * A batch of new holds as one statement, to run in its own transaction (autocommit): the
     * holds and their outbox rows ({@link #insertHolds}'s statement), then each bucket's
     * conditional update ({@link #applyBucketDeltas}'s). Either all of it commits, or the statement fails
     * with SQLSTATE {@link #REFUSED} and nothing does: when any key was already used for its
     * item, or any bucket's counters were not what the lane expected. Saves the round trips of
     * the separate insert, update and commit.
     */
    public Reserved reserveInOneStatement(Connection c, NewHoldColumns holds, BucketDeltaColumns deltas)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(RESERVE_IN_ONE_STATEMENT)) {
            int next = deltas.bind(ps, holds.bind(ps, 1));
            ps.setLong(next, holds.size());
            ps.setLong(next + 1, deltas.size());
            Instant at = null;
            List<BucketRow> rows = new ArrayList<>(deltas.size());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    at = rs.getTimestamp(1).toInstant();
                    rows.add(new BucketRow(rs.getString(2), rs.getString(3), rs.getInt(4),
                            rs.getLong(5), rs.getLong(6), rs.getLong(7), rs.getLong(8), rs.getLong(9)));
                }
            }
            CommitWarnings.requireReplicated(ps); // the statement's end was its commit
            if (at == null || rows.size() != deltas.size()) {
                // lastunit_require passed, so the statement committed every row: this cannot happen
                throw new IllegalStateException("one-statement batch committed but returned " + rows.size() + " of "
                        + deltas.size() + " bucket rows");
            }
            return new Reserved(at, rows);
        }
    }

    private static final String INSERT_KEY_RECORDS = """
            INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                               request_fingerprint, state, created_at, expires_at, ended_at)
            SELECT d.id, d.t, d.i, d.b, d.r, d.q, d.buyer, d.k, d.fp, d.s, now(), now(), now()
              FROM unnest(?::uuid[], ?::text[], ?::text[], ?::int4[], ?::text[], ?::int4[], ?::text[], ?::text[],
                          ?::text[], ?::text[]) AS d(id, t, i, b, r, q, buyer, k, fp, s)
            ON CONFLICT (tenant_id, item_id, idempotency_key) DO NOTHING
            RETURNING %s""".formatted(HoldRow.columns(""));

    /**
     * Records of keys that hold no units, with the request they stand for: FORWARDED (the item
     * collapsed to its home region; the Reserve goes there) and CLAIMED (at the home region, a
     * hold placed in the row's region). They move no counter and write no outbox row; their
     * created_at, expires_at and ended_at are the transaction's now(). A key already used for
     * the item is skipped: absent from the result.
     */
    public List<HoldRow> insertKeyRecords(Connection c, KeyRecordColumns records) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT_KEY_RECORDS)) {
            records.bind(ps, 1);
            return holds(ps);
        }
    }

    /**
     * Makes every later statement of the open transaction wait at most {@code millis} for a lock,
     * then fail with SQL state 55P03 ({@code SET LOCAL lock_timeout}; it ends with the transaction).
     */
    public static void boundLockWaits(Connection c, long millis) throws SQLException {
        if (millis < 1) {
            throw new IllegalArgumentException("millis must be >= 1, got " + millis);
        }
        try (Statement st = c.createStatement()) {
            st.execute("SET LOCAL lock_timeout = '" + millis + "ms'");
        }
    }

    /**
     * Moves units, with as much allotment, out of sibling bucket {@code from} into bucket
     * {@code to} of the same item: as many as {@code unitsFor} says, asked with the sibling's
     * available units once both rows are locked (the rule is {@code escrow.BorrowSizing}'s; 0 or
     * less: nothing).
     *
     * <p>Runs in the caller's transaction, which should hold nothing else and commit at once: a
     * borrow is a transaction of its own. First both rows are locked in bucket order, the order a
     * collapse and a transfer lock an item's rows in, so borrows, collapses and transfers never
     * wait on each other in a cycle; a lane's batch locks only its own buckets' rows. Then one
     * update moves the units and adds them to the sibling's {@code lent} total.
     *
     * @return the units moved with both rows after the move; {@link Borrowed#CLOSED} when bucket
     *     {@code to} is closed (its item collapsed into bucket 0: nothing may move into it); null
     *     when the sibling has nothing to spare. Nothing is written unless units moved.
     */
    public Borrowed borrowInto(Connection c, String tenant, String item, int to, int from, LongUnaryOperator unitsFor)
            throws SQLException {
        if (to == from) {
            throw new IllegalArgumentException("borrow from bucket " + from + " into itself");
        }
        long lenderAvailable = -1;
        boolean borrowerOpen = false;
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT bucket_no, available, open FROM buckets
                 WHERE tenant_id = ? AND item_id = ? AND bucket_no IN (?, ?)
                 ORDER BY bucket_no FOR UPDATE""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setInt(3, to);
            ps.setInt(4, from);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getInt(1) == from) {
                        lenderAvailable = rs.getLong(2);
                    } else {
                        borrowerOpen = rs.getBoolean(3);
                    }
                }
            }
        }
        if (!borrowerOpen) {
            return Borrowed.CLOSED;
        }
        long units = unitsFor.applyAsLong(lenderAvailable); // asked with the row locked
        if (units < 1) {
            return null;
        }
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE buckets b
                   SET available = b.available + d.k, allotment = b.allotment + d.k, lent = b.lent + greatest(-d.k, 0)
                  FROM unnest(?::int4[], ?::int8[]) AS d(n, k)
                 WHERE b.tenant_id = ? AND b.item_id = ? AND b.bucket_no = d.n AND b.available + d.k >= 0
                RETURNING b.bucket_no, b.allotment, b.available, b.held, b.sold, b.lent""")) {
            ps.setArray(1, c.createArrayOf("int4", new Integer[] {to, from}));
            ps.setArray(2, c.createArrayOf("int8", new Long[] {units, -units}));
            ps.setString(3, tenant);
            ps.setString(4, item);
            BucketRow borrower = null;
            BucketRow lender = null;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    BucketRow row = new BucketRow(tenant, item, rs.getInt(1), rs.getLong(2), rs.getLong(3),
                            rs.getLong(4), rs.getLong(5), rs.getLong(6));
                    if (row.bucketNo() == to) {
                        borrower = row;
                    } else {
                        lender = row;
                    }
                }
            }
            if (borrower == null || lender == null) { // both rows are locked: only a broken invariant gets here
                throw new IllegalStateException("borrow of " + units + " from " + tenant + "/" + item + " bucket "
                        + from + " into " + to + " updated " + (borrower == null ? "no borrower" : "no lender"));
            }
            return new Borrowed(units, borrower, lender);
        }
    }

    /** Every bucket of an item with its committed available units: {bucket_no, available}. */
    public List<long[]> availableByBucket(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT bucket_no, available FROM buckets WHERE tenant_id = ? AND item_id = ? ORDER BY available DESC")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            List<long[]> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new long[] {rs.getInt(1), rs.getLong(2)});
                }
            }
            return rows;
        }
    }

    /** What a borrow moved: the units and both rows after it (see {@link #borrowInto}). */
    public record Borrowed(long units, BucketRow borrower, BucketRow lender) {
        /** The borrowing bucket is closed: nothing moved. */
        public static final Borrowed CLOSED = new Borrowed(0, null, null);
    }

    /** Every bucket of an item with its available units, open flag and earliest HELD expiry. */
    public record LedgerRow(int bucketNo, long available, boolean open, long earliestDueMicros) {
    }

    /** What an item's ledger starts from: its buckets, whether it collapsed home, its regions. */
    public record LoadedLedger(List<LedgerRow> buckets, boolean collapsed, List<String> regions, String homeRegion) {
    }

    public LoadedLedger loadLedger(Connection c, String tenant, String item) throws SQLException {
        List<LedgerRow> rows = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT b.bucket_no, b.available, b.open,
                       (SELECT min(h.expires_at) FROM holds h
                         WHERE h.tenant_id = b.tenant_id AND h.item_id = b.item_id AND h.bucket_no = b.bucket_no
                           AND h.state = 'HELD')
                  FROM buckets b WHERE b.tenant_id = ? AND b.item_id = ? ORDER BY b.bucket_no""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Timestamp due = rs.getTimestamp(4);
                    rows.add(new LedgerRow(rs.getInt(1), rs.getLong(2), rs.getBoolean(3),
                            due == null ? Long.MAX_VALUE : micros(due)));
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT collapsed, regions, home_region FROM items WHERE tenant_id = ? AND item_id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || rows.isEmpty()) {
                    return null;
                }
                String[] regions = (String[]) rs.getArray(2).getArray();
                return new LoadedLedger(rows, rs.getBoolean(1), List.of(regions), rs.getString(3));
            }
        }
    }

    /** Usage of each (tenant, item, buyer); absent rows are absent (usage 0). */
    public Map<UsageKey, Long> readUsage(Connection c, Collection<UsageKey> keys) throws SQLException {
        Map<UsageKey, Long> usage = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT u.tenant_id, u.item_id, u.buyer_id, u.qty FROM buyer_usage u"
                        + " JOIN unnest(?::text[], ?::text[], ?::text[]) AS d(t, i, b)"
                        + " ON u.tenant_id = d.t AND u.item_id = d.i AND u.buyer_id = d.b")) {
            bindKeys(c, ps, keys);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    usage.put(new UsageKey(rs.getString(1), rs.getString(2), rs.getString(3)), rs.getLong(4));
                }
            }
        }
        return usage;
    }

    private static void bindKeys(Connection c, PreparedStatement ps, Collection<UsageKey> keys) throws SQLException {
        ps.setArray(1, c.createArrayOf("text", keys.stream().map(UsageKey::tenantId).toArray(String[]::new)));
        ps.setArray(2, c.createArrayOf("text", keys.stream().map(UsageKey::itemId).toArray(String[]::new)));
        ps.setArray(3, c.createArrayOf("text", keys.stream().map(UsageKey::buyerId).toArray(String[]::new)));
    }

    /**
     * Compare-and-set of buyer usage: each row goes from its expected usage to that plus its delta.
     * Returns how many rows matched; fewer than the input means another writer got there first and
     * the batch must be decided again.
     */
    public int casUsage(Connection c, UsageColumns changes) throws SQLException {
        int matched;
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE buyer_usage u SET qty = u.qty + d.a
                  FROM unnest(?::text[], ?::text[], ?::text[], ?::int8[], ?::int8[]) AS d(t, i, b, e, a)
                 WHERE d.e > 0 AND u.tenant_id = d.t AND u.item_id = d.i AND u.buyer_id = d.b AND u.qty = d.e""")) {
            changes.bind(c, ps, 1, true);
            matched = ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO buyer_usage (tenant_id, item_id, buyer_id, qty)
                SELECT d.t, d.i, d.b, d.a
                  FROM unnest(?::text[], ?::text[], ?::text[], ?::int8[], ?::int8[]) AS d(t, i, b, e, a)
                 WHERE d.e = 0
                ON CONFLICT (tenant_id, item_id, buyer_id) DO UPDATE SET qty = buyer_usage.qty + EXCLUDED.qty
                 WHERE buyer_usage.qty = 0""")) {
            changes.bind(c, ps, 1, true);
            matched += ps.executeUpdate();
        }
        return matched;
    }

    /** Gives back usage of ended holds (released, expired): each row's delta is subtracted, summed per buyer. */
    public void subtractUsage(Connection c, UsageColumns ended) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE buyer_usage u SET qty = u.qty - d.q
                  FROM (SELECT t, i, b, sum(q) AS q
                          FROM unnest(?::text[], ?::text[], ?::text[], ?::int8[]) AS x(t, i, b, q)
                         GROUP BY t, i, b) AS d
                 WHERE u.tenant_id = d.t AND u.item_id = d.i AND u.buyer_id = d.b""")) {
            ended.bind(c, ps, 1, false);
            int n = ps.executeUpdate();
            if (n == 0 && ended.size() > 0) {
                throw new SQLException("buyer_usage rows missing for ended holds", "LU001");
            }
        }
    }

    /**
     * Applies counter deltas to buckets, conditionally: a bucket whose available or held would
     * go below zero is not updated (and is absent from the result). Runs last in the batch's
     * transaction. The CHECK constraint on the table guards the sum.
     */
    public List<BucketRow> applyBucketDeltas(Connection c, BucketDeltaColumns deltas) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(BUCKET_DELTAS_UPDATE)) {
            deltas.bind(ps, 1);
            List<BucketRow> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new BucketRow(rs.getString(1), rs.getString(2), rs.getInt(3),
                            rs.getLong(4), rs.getLong(5), rs.getLong(6), rs.getLong(7), rs.getLong(8)));
                }
            }
            return rows;
        }
    }

    private static List<HoldRow> holds(PreparedStatement ps) throws SQLException {
        List<HoldRow> rows = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.add(HoldRow.read(rs));
            }
        }
        return rows;
    }

    public static long micros(Timestamp t) {
        return t.getTime() / 1000 * 1_000_000 + t.getNanos() / 1000;
    }
}
