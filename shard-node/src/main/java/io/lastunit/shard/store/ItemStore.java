package io.lastunit.shard.store;

import io.lastunit.api.inventory.v1.Stock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/**
 * Item-level statements: creating an item, restocking it, and the committed reads behind
 * GetStock and GetHold. Stateless; the caller owns the connection and the transaction.
 * Thread-safe.
 */
public final class ItemStore {

    /** The parameters an item was created with, to answer a repeated CreateItem. */
    public record ItemRow(String homeRegion, long initialTotal, int perBuyerLimit, long holdTtlMs, long extendByMs,
                          int bucketCount) {
    }

    /** Inserts the item and its bucket 0 holding all units. False if the item already exists. */
    public boolean createItem(Connection c, String tenant, String item, String homeRegion, long total,
                              int perBuyerLimit, long holdTtlMs, long extendByMs, int bucketCount) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO items (tenant_id, item_id, home_region, total, initial_total, per_buyer_limit,
                                   hold_ttl_ms, extend_by_ms, bucket_count)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setString(3, homeRegion);
            ps.setLong(4, total);
            ps.setLong(5, total);
            ps.setInt(6, perBuyerLimit);
            ps.setLong(7, holdTtlMs);
            ps.setLong(8, extendByMs);
            ps.setInt(9, bucketCount);
            if (ps.executeUpdate() == 0) {
                return false;
            }
        }
        try (PreparedStatement ps = c.prepareStatement("""
                WITH b AS (
                    INSERT INTO buckets (tenant_id, item_id, bucket_no, allotment, available, held, sold)
                    VALUES (?, ?, 0, ?, ?, 0, 0) RETURNING tenant_id, item_id, allotment
                )
                INSERT INTO outbox (tenant_id, item_id, kind, qty) SELECT tenant_id, item_id, 'CREATED', allotment FROM b""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setLong(3, total);
            ps.setLong(4, total);
            ps.executeUpdate();
        }
        return true;
    }

    public ItemRow readItem(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT home_region, initial_total, per_buyer_limit, hold_ttl_ms, extend_by_ms, bucket_count
                  FROM items WHERE tenant_id = ? AND item_id = ?""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new ItemRow(rs.getString(1), rs.getLong(2), rs.getInt(3), rs.getLong(4), rs.getLong(5),
                        rs.getInt(6));
            }
        }
    }

    /** Records a restock id. False if the tenant used it before. */
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

    /** The (item, qty) a restock id was used for, or null. */
    public Object[] readRestock(Connection c, String tenant, String restockId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT item_id, qty FROM restocks WHERE tenant_id = ? AND restock_id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, restockId);
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
                       sum(b.allotment), sum(b.available), sum(b.held), sum(b.sold)
                  FROM items i JOIN buckets b ON b.tenant_id = i.tenant_id AND b.item_id = i.item_id
                 WHERE i.tenant_id = ? AND i.item_id = ?
                 GROUP BY i.tenant_id, i.item_id""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return Stock.newBuilder()
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
                        .setSold(rs.getLong(9))
                        .build();
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
