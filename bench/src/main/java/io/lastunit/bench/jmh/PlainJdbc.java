package io.lastunit.bench.jmh;

import io.lastunit.common.HoldId;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Arrays;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The designs lastunit is measured against, as plain JDBC transactions on the shard schema
 * ({@link BenchDatabase#migrate()}): every one writes the same rows the lane engine writes for a
 * Reserve — a {@code holds} row with the same columns (a version-7 hold id, the request
 * fingerprint, {@code expires_at = now() + TTL}), its {@code HELD} outbox row in the same
 * statement, and the bucket counters ({@code available - q}, {@code held + q}, so the
 * {@code bucket_balanced} CHECK holds) — and commits once per Reserve (the baselines) or once per
 * batch (the ceiling). All on a connection from a pool with autocommit off, READ COMMITTED.
 * Stateless, thread-safe.
 */
public final class PlainJdbc {
    private PlainJdbc() {
    }

    /** What a baseline Reserve decided. */
    public enum Outcome { RESERVED, SOLD_OUT }

    private static final String LOCK_BUCKET = """
            SELECT available FROM buckets WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0 FOR UPDATE""";

    private static final String TAKE = """
            UPDATE buckets SET available = available - ?, held = held + ?
             WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0""";

    private static final String TAKE_IF_AVAILABLE = TAKE + " AND available >= ?";

    /**
     * One hold and its outbox row in one statement, as the engine writes them (its statement is
     * the same with arrays). A key already used in the tenant inserts nothing: a real service
     * would then look the key up and return its hold; the benchmark never reuses a key.
     */
    private static final String INSERT_HOLD = """
            WITH ins AS (
                INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                   request_fingerprint, state, created_at, expires_at)
                VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, 'HELD', now(), now() + ? * interval '1 millisecond')
                ON CONFLICT (tenant_id, item_id, idempotency_key) DO NOTHING
                RETURNING hold_id, tenant_id, item_id, qty, expires_at
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'HELD', hold_id, qty FROM ins
            )
            SELECT hold_id, expires_at FROM ins""";

    /** A Reserve of {@code qty} units of an item (bucket 0) for one buyer under one idempotency key. */
    public record Reserve(String tenant, String item, String region, int qty, String buyer, String key) {
    }

    /**
     * The naive design: lock the bucket row first ({@code SELECT … FOR UPDATE}), check the
     * stock in Java, take the units, insert the hold, commit. The row lock is held for three
     * round trips and the commit's WAL flush, so callers of one item run one at a time.
     */
    public static Outcome naive(DataSource ds, Reserve r) throws SQLException {
        String fingerprint = BenchItems.fingerprint(r.item(), r.qty(), r.buyer(), r.region(), 0);
        try (Connection c = ds.getConnection()) {
            try {
                long available;
                try (PreparedStatement ps = c.prepareStatement(LOCK_BUCKET)) {
                    ps.setString(1, r.tenant());
                    ps.setString(2, r.item());
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            throw new SQLException("no bucket for " + r.tenant() + "/" + r.item());
                        }
                        available = rs.getLong(1);
                    }
                }
                if (available < r.qty()) {
                    c.rollback();
                    return Outcome.SOLD_OUT;
                }
                try (PreparedStatement ps = c.prepareStatement(TAKE)) {
                    bindTake(ps, r);
                    ps.executeUpdate();
                }
                insertHold(c, r, fingerprint);
                c.commit();
                return Outcome.RESERVED;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /**
     * The textbook fix: insert the hold first, then take the units with one conditional
     * statement ({@code … WHERE available >= q}), last, so the row lock is held only from that
     * statement to the commit. No rows updated → sold out → roll the hold back.
     */
    public static Outcome singleStatement(DataSource ds, Reserve r) throws SQLException {
        String fingerprint = BenchItems.fingerprint(r.item(), r.qty(), r.buyer(), r.region(), 0);
        try (Connection c = ds.getConnection()) {
            try {
                insertHold(c, r, fingerprint);
                int taken;
                try (PreparedStatement ps = c.prepareStatement(TAKE_IF_AVAILABLE)) {
                    bindTake(ps, r);
                    ps.setLong(5, r.qty());
                    taken = ps.executeUpdate();
                }
                if (taken == 0) {
                    c.rollback();
                    return Outcome.SOLD_OUT;
                }
                c.commit();
                return Outcome.RESERVED;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    private static void bindTake(PreparedStatement ps, Reserve r) throws SQLException {
        ps.setLong(1, r.qty());
        ps.setLong(2, r.qty());
        ps.setString(3, r.tenant());
        ps.setString(4, r.item());
    }

    private static void insertHold(Connection c, Reserve r, String fingerprint) throws SQLException {
        UUID id = HoldId.create(r.tenant(), r.item(), r.region(), 0, System.currentTimeMillis()).uuid();
        try (PreparedStatement ps = c.prepareStatement(INSERT_HOLD)) {
            ps.setObject(1, id);
            ps.setString(2, r.tenant());
            ps.setString(3, r.item());
            ps.setString(4, r.region());
            ps.setInt(5, r.qty());
            ps.setString(6, r.buyer());
            ps.setString(7, r.key());
            ps.setString(8, fingerprint);
            ps.setLong(9, BenchItems.HOLD_TTL_MS);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("idempotency key " + r.key() + " is already used; the benchmark never"
                            + " reuses keys");
                }
            }
        }
    }

    private static final LaneStore LANE_STORE = new LaneStore();

    /**
     * The ceiling: {@code n} one-unit holds of one item written with no decision at all, in one
     * transaction — the lane engine's own two statements ({@link LaneStore#insertHolds}: one
     * multi-row insert from {@code unnest} arrays with its outbox rows, then
     * {@link LaneStore#applyBucketDeltas}: one conditional bucket update, last), then one
     * commit. {@code keyPrefix} must be unique per call; keys are {@code keyPrefix + index}.
     */
    public static void rawBatch(DataSource ds, String tenant, String item, String region, int n, String keyPrefix)
            throws SQLException {
        UUID[] ids = new UUID[n];
        String[] tenants = new String[n];
        String[] items = new String[n];
        Integer[] buckets = new Integer[n];
        String[] regions = new String[n];
        Integer[] qtys = new Integer[n];
        String[] buyers = new String[n];
        String[] keys = new String[n];
        String[] fingerprints = new String[n];
        Long[] ttls = new Long[n];
        long now = System.currentTimeMillis();
        for (int x = 0; x < n; x++) {
            ids[x] = HoldId.create(tenant, item, region, 0, now).uuid();
            keys[x] = keyPrefix + x;
            buyers[x] = "b" + keys[x];
            // No decision logic: a fixed 22-character stand-in for the request fingerprint.
            fingerprints[x] = "raw-ceiling-fingerprnt";
        }
        Arrays.fill(tenants, tenant);
        Arrays.fill(items, item);
        Arrays.fill(buckets, 0);
        Arrays.fill(regions, region);
        Arrays.fill(qtys, 1);
        Arrays.fill(ttls, BenchItems.HOLD_TTL_MS);
        try (Connection c = ds.getConnection()) {
            try {
                int inserted = LANE_STORE.insertHolds(c, ids, tenants, items, buckets, regions, qtys, buyers, keys,
                        fingerprints, ttls).count();
                if (inserted != n) {
                    throw new SQLException("inserted " + inserted + " of " + n + " holds: keys reused");
                }
                int updated = LANE_STORE.applyBucketDeltas(c, new String[] {tenant}, new String[] {item},
                        new Integer[] {0}, new Long[] {0L}, new Long[] {(long) -n}, new Long[] {(long) n}, new Long[] {0L},
                        new Long[] {(long) n}).size();
                if (updated != 1) {
                    throw new SQLException("bucket " + tenant + "/" + item + " had fewer than " + n + " units");
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /**
     * Creates items {@code item-0 … item-(n-1)} with {@link BenchItems#TOTAL} units each, exactly
     * as the shard node does (the shard's {@link ItemStore}: the item row, bucket 0 with every
     * unit, its CREATED outbox row), in one transaction.
     */
    public static void createItems(DataSource ds, int n) throws SQLException {
        ItemStore store = new ItemStore();
        try (Connection c = ds.getConnection()) {
            for (int i = 0; i < n; i++) {
                store.createItem(c, BenchItems.TENANT, BenchItems.itemId(i), new ItemStore.ItemRow(BenchItems.REGION,
                        BenchItems.TOTAL, BenchItems.TOTAL, 0, BenchItems.HOLD_TTL_MS, BenchItems.HOLD_TTL_MS, 1,
                        List.of(BenchItems.REGION)));
            }
            c.commit();
        }
    }

    /** What was written, for a sanity line at the end of a trial. */
    public record Ledger(long holds, long outboxHeld, long bucketsHeld, long unbalancedBuckets) {
        /** Every hold has its outbox row and is counted in its bucket, and every bucket sums. */
        public boolean consistent() {
            return holds == outboxHeld && holds == bucketsHeld && unbalancedBuckets == 0;
        }
    }

    public static Ledger ledger(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     SELECT (SELECT count(*) FROM holds WHERE state = 'HELD'),
                            (SELECT count(*) FROM outbox WHERE kind = 'HELD'),
                            (SELECT coalesce(sum(held), 0) FROM buckets),
                            (SELECT count(*) FROM buckets WHERE available + held + sold <> allotment)""");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            Ledger l = new Ledger(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4));
            c.rollback();
            return l;
        }
    }
}
