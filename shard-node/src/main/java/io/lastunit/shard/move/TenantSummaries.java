package io.lastunit.shard.move;

import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.TenantSummary;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;

/**
 * Per item of a tenant on this shard, the figures its invariants are computed from (the item row,
 * its buckets' sums, its holds and units by stored state, buyer usage, transfers, restocks), read
 * in one REPEATABLE READ READ ONLY snapshot: a move compares the source's with the target's, item
 * by item. Holds are counted by the state their rows store (a HELD hold past its expiry that no
 * sweep ended yet counts as HELD, on both sides alike). Stateless; each call uses the caller's
 * connection, which must not be inside a transaction yet, and restores it. The answer grows with
 * the tenant's items here, about 200 bytes each.
 */
public final class TenantSummaries {

    /** The tenant's items on this shard, sorted by item id, as seen by one snapshot. */
    public TenantSummary summarize(Connection c, String shardId, String region, String tenant) throws SQLException {
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        c.setReadOnly(true);
        try {
            Map<String, ItemSummary.Builder> items = items(c, tenant, region);
            buckets(c, tenant, items);
            holds(c, tenant, items);
            usage(c, tenant, items);
            transfers(c, tenant, items);
            restocks(c, tenant, items);
            c.commit();
            TenantSummary.Builder s = TenantSummary.newBuilder().setShardId(shardId).setRegion(region);
            items.values().forEach(s::addItems);
            return s.build();
        } finally {
            c.rollback();
            c.setReadOnly(false);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    /** Runs a per-item query of the tenant; {@code row} fills the item's summary (absent items are skipped). */
    private interface Row {
        void fill(ItemSummary.Builder item, ResultSet rs) throws SQLException;
    }

    private static void each(Connection c, String sql, String tenant, Map<String, ItemSummary.Builder> items, Row row)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, tenant);
            ps.setFetchSize(TenantExport.FETCH_ROWS);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ItemSummary.Builder item = items.get(rs.getString(1));
                    if (item != null) {
                        row.fill(item, rs);
                    }
                }
            }
        }
    }

    private static Map<String, ItemSummary.Builder> items(Connection c, String tenant, String region)
            throws SQLException {
        Map<String, ItemSummary.Builder> items = new TreeMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT item_id, total, bucket_count, collapsed, state FROM items WHERE tenant_id = ?")) {
            ps.setString(1, tenant);
            ps.setFetchSize(TenantExport.FETCH_ROWS);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    items.put(rs.getString(1), ItemSummary.newBuilder().setItemId(rs.getString(1)).setRegion(region)
                            .setTotal(rs.getLong(2)).setBucketCount(rs.getInt(3)).setCollapsed(rs.getBoolean(4))
                            .setState(rs.getString(5)));
                }
            }
        }
        return items;
    }

    private static void buckets(Connection c, String tenant, Map<String, ItemSummary.Builder> items)
            throws SQLException {
        each(c, """
                SELECT item_id, sum(allotment), sum(available), sum(held), sum(sold) FROM buckets
                 WHERE tenant_id = ? GROUP BY item_id""", tenant, items, (item, rs) -> item
                .setAllotment(rs.getLong(2)).setAvailable(rs.getLong(3)).setHeld(rs.getLong(4)).setSold(rs.getLong(5)));
    }

    private static void holds(Connection c, String tenant, Map<String, ItemSummary.Builder> items)
            throws SQLException {
        each(c, "SELECT item_id, state, count(*), sum(qty) FROM holds WHERE tenant_id = ? GROUP BY item_id, state",
                tenant, items, (item, rs) -> item.putHoldsByState(rs.getString(2), rs.getLong(3))
                        .putUnitsByState(rs.getString(2), rs.getLong(4)));
    }

    private static void usage(Connection c, String tenant, Map<String, ItemSummary.Builder> items)
            throws SQLException {
        each(c, "SELECT item_id, sum(qty), count(*) FROM buyer_usage WHERE tenant_id = ? GROUP BY item_id", tenant,
                items, (item, rs) -> item.setUsageUnits(rs.getLong(2)).setUsageBuyers(rs.getLong(3)));
    }

    private static void transfers(Connection c, String tenant, Map<String, ItemSummary.Builder> items)
            throws SQLException {
        each(c, """
                SELECT item_id, coalesce(sum(qty) FILTER (WHERE direction = 'IN'), 0),
                       coalesce(sum(qty) FILTER (WHERE direction = 'OUT'), 0), count(*) FILTER (WHERE state = 'PENDING')
                  FROM transfers WHERE tenant_id = ? GROUP BY item_id""", tenant, items, (item, rs) -> item
                .setTransferredIn(rs.getLong(2)).setTransferredOut(rs.getLong(3)).setTransfersPending(rs.getLong(4)));
    }

    private static void restocks(Connection c, String tenant, Map<String, ItemSummary.Builder> items)
            throws SQLException {
        each(c, "SELECT item_id, count(*), sum(qty) FROM restocks WHERE tenant_id = ? GROUP BY item_id", tenant, items,
                (item, rs) -> item.setRestocks(rs.getLong(2)).setRestockedUnits(rs.getLong(3)));
    }
}
