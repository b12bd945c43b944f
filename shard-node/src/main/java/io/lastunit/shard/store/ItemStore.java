package io.lastunit.shard.store;

import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.shard.decide.ItemState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Item-level statements: creating an item, restocking it, and the committed reads behind
 * GetStock and GetHold. Stateless; the caller owns the connection and the transaction.
 * Thread-safe.
 */
public final class ItemStore {
    /** The parameters an item was created with, to answer a repeated CreateItem. */
    public record ItemRow(String homeRegion, long createdTotal, long base, int perBuyerLimit, long holdTtlMs,
                          long extendByMs, int bucketCount, List<String> regions) {
    }

    /**
     * Inserts the item with {@code base} units split over {@code bucketCount} buckets (the
     * remainder in bucket 0). False if the item already exists.
     */
    public boolean createItem(Connection c, String tenant, String item, ItemRow row) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO items (tenant_id, item_id, home_region, total, initial_total, per_buyer_limit,
                                   hold_ttl_ms, extend_by_ms, bucket_count, regions, created_total)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setString(3, row.homeRegion());
            ps.setLong(4, row.base());
            ps.setLong(5, row.base());
            ps.setInt(6, row.perBuyerLimit());
            ps.setLong(7, row.holdTtlMs());
            ps.setLong(8, row.extendByMs());
            ps.setInt(9, row.bucketCount());
            ps.setArray(10, c.createArrayOf("text", row.regions().toArray()));
            ps.setLong(11, row.createdTotal());
            if (ps.executeUpdate() == 0) {
                return false;
            }
        }
        int n = row.bucketCount();
        Integer[] numbers = new Integer[n];
        Long[] allotments = new Long[n];
        for (int b = 0; b < n; b++) {
            numbers[b] = b;
            allotments[b] = row.base() / n + (b == 0 ? row.base() % n : 0);
        }
        try (PreparedStatement ps = c.prepareStatement("""
                WITH b AS (
                    INSERT INTO buckets (tenant_id, item_id, bucket_no, allotment, available, held, sold)
                    SELECT ?, ?, d.n, d.a, d.a, 0, 0 FROM unnest(?::int4[], ?::int8[]) AS d(n, a)
                    RETURNING tenant_id, item_id, allotment
                )
                INSERT INTO outbox (tenant_id, item_id, kind, qty)
                SELECT tenant_id, item_id, 'CREATED', sum(allotment) FROM b GROUP BY tenant_id, item_id""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setArray(3, c.createArrayOf("int4", numbers));
            ps.setArray(4, c.createArrayOf("int8", allotments));
            ps.executeUpdate();
        }
        return true;
    }

    /**
     * The class of the advisory locks that serialise, per tenant, what creates its items and what a
     * tenant move does to their states ({@link #lockTenant}): "LUTM". Retention takes it shared
     * around each batch of a tenant's deletions.
     */
    public static final int TENANT_LOCK_CLASS = 0x4C55544D;

    /**
     * Takes the tenant's advisory lock until the transaction ends: {@code shared} for CreateItem,
     * exclusive for a move's state change or import. So an item created while a move freezes or
     * imports the tenant is either seen by that statement or sees its result (and is refused); a
     * hash collision between two tenants only makes them wait for each other.
     */
    public void lockTenant(Connection c, String tenant, boolean shared) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(shared
                ? "SELECT pg_advisory_xact_lock_shared(?, hashtext(?))"
                : "SELECT pg_advisory_xact_lock(?, hashtext(?))")) {
            ps.setInt(1, TENANT_LOCK_CLASS);
            ps.setString(2, tenant);
            ps.executeQuery().close();
        }
    }

    /** The item's state, or null when it is not on this shard. */
    public ItemState itemState(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT state FROM items WHERE tenant_id = ? AND item_id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? ItemState.of(rs.getString(1)) : null;
            }
        }
    }

    /**
     * The state of one of the tenant's items here that a move fences, FROZEN or IMPORTING before
     * MOVED; null when none is.
     */
    public ItemState movingStateOfTenant(Connection c, String tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT state FROM items WHERE tenant_id = ? AND state IN ('FROZEN', 'IMPORTING', 'MOVED')
                 ORDER BY state = 'MOVED' LIMIT 1""")) {
            ps.setString(1, tenant);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? ItemState.of(rs.getString(1)) : null;
            }
        }
    }

    public ItemRow readItem(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT home_region, created_total, initial_total, per_buyer_limit, hold_ttl_ms, extend_by_ms,
                       bucket_count, regions
                  FROM items WHERE tenant_id = ? AND item_id = ?""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new ItemRow(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4), rs.getLong(5),
                        rs.getLong(6), rs.getInt(7), List.of((String[]) rs.getArray(8).getArray()));
            }
        }
    }

    /**
     * Collapses an item's open buckets into bucket 0 (DESIGN §5): every other open bucket is
     * closed and its available units move to bucket 0 with their allotment. Two statements: the
     * first locks all the item's bucket rows in bucket order, the second moves the units. Waits
     * at most {@code lockTimeoutMillis} for each lock, then fails with SQLSTATE 55P03
     * (lock_not_available). Returns bucket 0 after, or null when the item has no bucket 0. Must
     * run inside a READ COMMITTED transaction.
     *
     * <p>Why two statements: one statement runs on one snapshot. When it had to wait for a bucket
     * row that another transaction changed and then committed (a lane's Reserve), its UPDATE
     * could write that row from a mix of the two versions: the new {@code available} taken away
     * from the allotment, but the old {@code held}. The bucket_balanced CHECK refused such a row,
     * so the collapse failed and was tried again after a later batch: in most load-generator runs,
     * at the end of a warm-up sale. The second statement here takes its snapshot after every lock
     * is held, so it reads exactly the rows it writes ({@code CollapseConcurrentCommitIT}).
     */
    public LaneStore.BucketRow collapseBuckets(Connection c, String tenant, String item, long lockTimeoutMillis)
            throws SQLException {
        LaneStore.boundLockWaits(c, lockTimeoutMillis);
        // Every bucket row of the item, bucket 0 first, locked in bucket order before anything is
        // written: the order a transfer and a borrow (LaneStore.borrowInto) take them in too, and a
        // lane's batch locks only its own buckets' rows, so no cycle. The lock timeout bounds a
        // wait for a commit the disk stalls: the collapse gives up (it is tried again after a later
        // batch) instead of stalling bucket 0's lane.
        lockBuckets(c, tenant, item);
        try (PreparedStatement ps = c.prepareStatement(COLLAPSE_MOVE)) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setString(3, tenant);
            ps.setString(4, item);
            ps.setString(5, tenant);
            ps.setString(6, item);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new LaneStore.BucketRow(rs.getString(1), rs.getString(2), rs.getInt(3),
                        rs.getLong(4), rs.getLong(5), rs.getLong(6), rs.getLong(7)) : null;
            }
        }
    }

    /** Every bucket of the item, locked in bucket order (a collapse, a transfer): {bucket_no, available}. */
    public List<long[]> lockBuckets(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT bucket_no, available FROM buckets WHERE tenant_id = ? AND item_id = ?
                 ORDER BY bucket_no FOR UPDATE""")) {
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

    /** Runs after {@link #lockBuckets}, on a snapshot that sees the rows this transaction locked. */
    private static final String COLLAPSE_MOVE = """
            WITH closing AS (
                SELECT bucket_no, available FROM buckets
                 WHERE tenant_id = ? AND item_id = ? AND bucket_no <> 0 AND open
            ), shut AS (
                UPDATE buckets b SET open = false, available = 0, allotment = b.allotment - x.available
                  FROM closing x
                 WHERE b.tenant_id = ? AND b.item_id = ? AND b.bucket_no = x.bucket_no
                RETURNING x.available AS moved
            )
            UPDATE buckets SET available = available + (SELECT coalesce(sum(moved), 0) FROM shut),
                               allotment = allotment + (SELECT coalesce(sum(moved), 0) FROM shut)
             WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0
            RETURNING tenant_id, item_id, bucket_no, allotment, available, held, sold""";

    /** The keys of an item's closed buckets: a range of the {@code holds_bucket_state} index (schema V3). */
    static final String KEYS_OUTSIDE_BUCKET0 =
            "SELECT idempotency_key FROM holds WHERE tenant_id = ? AND item_id = ? AND bucket_no <> 0 LIMIT ?";

    /** Up to {@code max + 1} idempotency keys placed in the item's buckets other than bucket 0. */
    public List<String> keysOutsideBucket0(Connection c, String tenant, String item, int max) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(KEYS_OUTSIDE_BUCKET0)) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setInt(3, max + 1);
            ps.setFetchSize(10_000);
            List<String> keys = new java.util.ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    keys.add(rs.getString(1));
                }
            }
            return keys;
        }
    }

    /** Records a restock id. False if it was used for the item before. */
    public boolean recordRestock(Connection c, String tenant, String restockId, String item, long qty)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO restocks (tenant_id, restock_id, item_id, qty) VALUES (?, ?, ?, ?)
                ON CONFLICT DO NOTHING""")) {
            ps.setString(1, tenant);
            ps.setString(2, restockId);
            ps.setString(3, item);
            ps.setLong(4, qty);
            return ps.executeUpdate() == 1;
        }
    }

    /** The (item, qty) a restock id of the item was used for, or null. */
    public Object[] readRestock(Connection c, String tenant, String item, String restockId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT item_id, qty FROM restocks WHERE tenant_id = ? AND item_id = ? AND restock_id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setString(3, restockId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Object[] {rs.getString(1), rs.getLong(2)} : null;
            }
        }
    }

    /**
     * Adds {@code qty} to the item's total and to bucket 0, unless the total would pass
     * {@code totalMax}. Returns the new bucket row, or null when the item is missing or the
     * total would pass the bound.
     */
    public LaneStore.BucketRow restock(Connection c, String tenant, String item, long qty, long totalMax)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE items SET total = total + ? WHERE tenant_id = ? AND item_id = ? AND total + ? <= ?")) {
            ps.setLong(1, qty);
            ps.setString(2, tenant);
            ps.setString(3, item);
            ps.setLong(4, qty);
            ps.setLong(5, totalMax);
            if (ps.executeUpdate() == 0) {
                return null;
            }
        }
        try (PreparedStatement ps = c.prepareStatement("""
                WITH b AS (
                    UPDATE buckets SET allotment = allotment + ?, available = available + ?
                     WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0
                    RETURNING tenant_id, item_id, bucket_no, allotment, available, held, sold
                ), ob AS (
                    INSERT INTO outbox (tenant_id, item_id, kind, qty) SELECT tenant_id, item_id, 'RESTOCKED', ? FROM b
                )
                SELECT * FROM b""")) {
            ps.setLong(1, qty);
            ps.setLong(2, qty);
            ps.setString(3, tenant);
            ps.setString(4, item);
            ps.setLong(5, qty);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new LaneStore.BucketRow(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getLong(4),
                        rs.getLong(5), rs.getLong(6), rs.getLong(7));
            }
        }
    }

    /** The committed counters of an item summed over its buckets on this shard, or null. */
    public Stock readStock(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT i.home_region, i.bucket_count, i.per_buyer_limit, i.hold_ttl_ms, i.extend_by_ms,
                       sum(b.allotment), sum(b.available), sum(b.held), sum(b.sold), i.kind,
                       CASE WHEN i.kind = 'SEATED' THEN (SELECT count(*) FROM seats s WHERE s.tenant_id = i.tenant_id
                                                           AND s.item_id = i.item_id AND NOT s.on_sale) ELSE 0 END
                  FROM items i JOIN buckets b ON b.tenant_id = i.tenant_id AND b.item_id = i.item_id
                 WHERE i.tenant_id = ? AND i.item_id = ?
                 GROUP BY i.tenant_id, i.item_id""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                Stock.Builder b = Stock.newBuilder()
                        .setTenantId(tenant)
                        .setItemId(item)
                        .setHomeRegion(rs.getString(1))
                        .setBucketCount(rs.getInt(2))
                        .setPerBuyerLimit(rs.getInt(3))
                        .setHoldTtlMs(rs.getLong(4))
                        .setExtendByMs(rs.getLong(5))
                        .setTotal(rs.getLong(6))
                        .setAvailable(rs.getLong(7))
                        .setHeld(rs.getLong(8))
                        .setSold(rs.getLong(9));
                if ("SEATED".equals(rs.getString(10))) { // counted items leave kind unset (= COUNTED)
                    b.setKind(io.lastunit.api.inventory.v1.ItemKind.SEATED).setKilled(rs.getLong(11));
                }
                return b.build();
            }
        }
    }

    public HoldRow readHold(Connection c, UUID holdId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT " + HoldRow.columns("") + " FROM holds WHERE hold_id = ?")) {
            ps.setObject(1, holdId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? HoldRow.read(rs) : null;
            }
        }
    }
}
