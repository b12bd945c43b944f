package io.lastunit.shard.move;

import io.lastunit.api.shard.v1.BucketFigures;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.SeatFigures;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.TenantSummary;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;

/**
 * Per item of a tenant on this shard, the figures its invariants are computed from (the item row,
 * each bucket's counters and its holds' units, its holds and units by stored state, buyer usage,
 * transfers, restocks, a SEATED item's seats), read in one REPEATABLE READ READ ONLY snapshot: a move compares the
 * source's with the target's, item by item, and checks the invariants of DESIGN §1 on both. Holds
 * are counted by the state their rows store (a HELD hold past its expiry that no sweep ended yet
 * counts as HELD, on both sides alike).
 *
 * <p>A part other than ALL splits the rows at a cut ({@link ChangedRows}): SETTLED sums only the
 * holds and transfers that ended before it, which never change again, so a mover can read them
 * before the fence; RECENT reads everything else through indexes — every item and bucket row, live
 * holds, rows ended since the cut, restocks, the usage of the recent holds' buyers — so its time
 * follows the live and recent rows, not the tenant's history. For holds and transfers SETTLED plus
 * RECENT is ALL.
 *
 * <p>What retention deleted counts as the rows did, from the retired totals (schema V11): each
 * bucket's sold units include its retired SOLD units and each item's units transferred out its
 * retired OUT records', so the invariants are recomputed exactly; holds by state count the rows
 * still stored. The totals do not change while a move names the tenant (retention leaves it alone),
 * so they are settled: in SETTLED and ALL, not in RECENT. Stateless; each call uses the caller's
 * connection, which must not be inside a
 * transaction yet, and restores it. The answer grows with the tenant's buckets here, about 200
 * bytes per item and 30 per bucket.
 */
public final class TenantSummaries {

    /** The tenant's items on this shard, sorted by item id, as seen by one snapshot. */
    public TenantSummary summarize(Connection c, String shardId, String region, String tenant) throws SQLException {
        return summarize(c, shardId, region, tenant, SummaryPart.SUMMARY_PART_ALL, 0);
    }

    /**
     * The same for one part of the rows.
     *
     * @param cutMicros the cut for SETTLED and RECENT (above 0), 0 for ALL
     */
    public TenantSummary summarize(Connection c, String shardId, String region, String tenant, SummaryPart part,
                                   long cutMicros) throws SQLException {
        if ((part == SummaryPart.SUMMARY_PART_ALL) != (cutMicros == 0) || cutMicros < 0) {
            throw new IllegalArgumentException("part " + part + " with cut " + cutMicros
                    + ": ALL takes no cut, SETTLED and RECENT one above 0");
        }
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        c.setReadOnly(true);
        try {
            Map<String, Item> items = items(c, tenant, region);
            boolean settled = part == SummaryPart.SUMMARY_PART_SETTLED;
            if (!settled) {
                buckets(c, tenant, items);
            }
            holds(c, tenant, part, cutMicros, items);
            if (!settled) {
                usage(c, tenant, part, cutMicros, items);
            }
            transfers(c, tenant, part, cutMicros, items);
            if (part != SummaryPart.SUMMARY_PART_RECENT) {
                retired(c, tenant, items);
            }
            if (!settled) {
                restocks(c, tenant, items);
                seats(c, tenant, items);
            }
            c.commit();
            TenantSummary.Builder s = TenantSummary.newBuilder().setShardId(shardId).setRegion(region);
            items.values().forEach(i -> s.addItems(i.build()));
            return s.build();
        } finally {
            c.rollback();
            c.setReadOnly(false);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    /** One item's summary being filled, with its buckets by number. Confined to the summarizing thread. */
    private static final class Item {
        final ItemSummary.Builder summary;
        final Map<Integer, BucketFigures.Builder> buckets = new TreeMap<>();

        Item(ItemSummary.Builder summary) {
            this.summary = summary;
        }

        BucketFigures.Builder bucket(int no) {
            return buckets.computeIfAbsent(no, n -> BucketFigures.newBuilder().setBucketNo(n));
        }

        ItemSummary build() {
            buckets.values().forEach(summary::addBuckets);
            return summary.build();
        }
    }

    /** Fills an item's summary from one row of a per-item query (rows of absent items are skipped). */
    private interface Row {
        void fill(Item item, ResultSet rs) throws SQLException;
    }

    private static void each(Connection c, ChangedRows.Query q, Map<String, Item> items, Row row)
            throws SQLException {
        try (PreparedStatement ps = q.prepare(c)) {
            ps.setFetchSize(TenantExport.FETCH_ROWS);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Item item = items.get(rs.getString(1));
                    if (item != null) {
                        row.fill(item, rs);
                    }
                }
            }
        }
    }

    private static ChangedRows.Query sql(String text, String tenant) {
        return new ChangedRows.Query().sql(text).param(tenant);
    }

    private static Map<String, Item> items(Connection c, String tenant, String region) throws SQLException {
        Map<String, Item> items = new TreeMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT item_id, total, bucket_count, collapsed, state FROM items WHERE tenant_id = ?")) {
            ps.setString(1, tenant);
            ps.setFetchSize(TenantExport.FETCH_ROWS);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    items.put(rs.getString(1), new Item(ItemSummary.newBuilder().setItemId(rs.getString(1))
                            .setRegion(region).setTotal(rs.getLong(2)).setBucketCount(rs.getInt(3))
                            .setCollapsed(rs.getBoolean(4)).setState(rs.getString(5))));
                }
            }
        }
        return items;
    }

    private static void buckets(Connection c, String tenant, Map<String, Item> items) throws SQLException {
        each(c, sql("SELECT item_id, bucket_no, allotment, available, held, sold FROM buckets WHERE tenant_id = ?",
                tenant), items, (item, rs) -> {
            long allotment = rs.getLong(3);
            long available = rs.getLong(4);
            long held = rs.getLong(5);
            long sold = rs.getLong(6);
            ItemSummary.Builder s = item.summary;
            s.setAllotment(s.getAllotment() + allotment).setAvailable(s.getAvailable() + available)
                    .setHeld(s.getHeld() + held).setSold(s.getSold() + sold);
            item.bucket(rs.getInt(2)).setRow(true).setAllotment(allotment).setAvailable(available).setHeld(held)
                    .setSold(sold);
        });
    }

    private static void holds(Connection c, String tenant, SummaryPart part, long cut, Map<String, Item> items)
            throws SQLException {
        ChangedRows.Query q = new ChangedRows.Query()
                .sql("SELECT h.item_id, h.bucket_no, h.state, count(*), sum(h.qty) FROM (");
        switch (part) {
            case SUMMARY_PART_SETTLED -> q.sql("SELECT item_id, bucket_no, state, qty FROM holds WHERE tenant_id = ?"
                    + " AND ended_at < " + ChangedRows.AT_MICROS).param(tenant).param(cut);
            case SUMMARY_PART_RECENT -> ChangedRows.recentHolds("h.item_id, h.bucket_no, h.state, h.qty", tenant, cut, q);
            default -> q.sql("SELECT item_id, bucket_no, state, qty FROM holds WHERE tenant_id = ?").param(tenant);
        }
        q.sql(") h GROUP BY h.item_id, h.bucket_no, h.state");
        each(c, q, items, (item, rs) -> {
            String state = rs.getString(3);
            long n = rs.getLong(4);
            long units = rs.getLong(5);
            ItemSummary.Builder s = item.summary;
            s.putHoldsByState(state, s.getHoldsByStateOrDefault(state, 0) + n)
                    .putUnitsByState(state, s.getUnitsByStateOrDefault(state, 0) + units);
            if (state.equals("HELD")) {
                BucketFigures.Builder b = item.bucket(rs.getInt(2));
                b.setHeldUnits(b.getHeldUnits() + units);
            } else if (state.equals("SOLD")) {
                BucketFigures.Builder b = item.bucket(rs.getInt(2));
                b.setSoldUnits(b.getSoldUnits() + units);
            }
        });
    }

    private static void usage(Connection c, String tenant, SummaryPart part, long cut, Map<String, Item> items)
            throws SQLException {
        ChangedRows.Query q;
        if (part == SummaryPart.SUMMARY_PART_RECENT) {
            // The usage rows of the buyers of recent holds: the only ones that can have changed.
            q = new ChangedRows.Query().sql("SELECT k.item_id, sum(u.qty), count(*) FROM (");
            ChangedRows.recentBuyers(tenant, cut, q);
            q.sql(") k CROSS JOIN LATERAL (SELECT u.qty FROM buyer_usage u WHERE u.tenant_id = ?"
                    + " AND u.item_id = k.item_id AND u.buyer_id = k.buyer_id OFFSET 0) u GROUP BY k.item_id")
                    .param(tenant);
        } else {
            q = sql("SELECT item_id, sum(qty), count(*) FROM buyer_usage WHERE tenant_id = ? GROUP BY item_id", tenant);
        }
        each(c, q, items, (item, rs) -> item.summary.setUsageUnits(rs.getLong(2)).setUsageBuyers(rs.getLong(3)));
    }

    private static void transfers(Connection c, String tenant, SummaryPart part, long cut, Map<String, Item> items)
            throws SQLException {
        ChangedRows.Query q = new ChangedRows.Query().sql("""
                SELECT item_id, coalesce(sum(qty) FILTER (WHERE direction = 'IN'), 0),
                       coalesce(sum(qty) FILTER (WHERE direction = 'OUT'), 0), count(*) FILTER (WHERE state = 'PENDING')
                  FROM (""");
        switch (part) {
            case SUMMARY_PART_SETTLED -> q.sql("SELECT item_id, direction, qty, state FROM transfers WHERE tenant_id = ?"
                    + " AND done_at < " + ChangedRows.AT_MICROS).param(tenant).param(cut);
            case SUMMARY_PART_RECENT -> q.sql("SELECT item_id, direction, qty, state FROM transfers WHERE tenant_id = ?"
                    + " AND state = 'PENDING' UNION ALL SELECT item_id, direction, qty, state FROM transfers"
                    + " WHERE tenant_id = ? AND done_at >= " + ChangedRows.AT_MICROS).param(tenant).param(tenant)
                    .param(cut);
            default -> q.sql("SELECT item_id, direction, qty, state FROM transfers WHERE tenant_id = ?").param(tenant);
        }
        q.sql(") t GROUP BY item_id");
        each(c, q, items, (item, rs) -> item.summary.setTransferredIn(rs.getLong(2))
                .setTransferredOut(rs.getLong(3)).setTransfersPending(rs.getLong(4)));
    }

    /** The retired totals: sold units per bucket, units transferred out per item. */
    private static void retired(Connection c, String tenant, Map<String, Item> items) throws SQLException {
        each(c, sql("SELECT item_id, bucket_no, sold_qty FROM retired_hold_totals WHERE tenant_id = ?", tenant), items,
                (item, rs) -> {
                    BucketFigures.Builder b = item.bucket(rs.getInt(2));
                    b.setSoldUnits(b.getSoldUnits() + rs.getLong(3));
                });
        each(c, sql("SELECT item_id, out_qty FROM retired_transfer_totals WHERE tenant_id = ?", tenant), items,
                (item, rs) -> item.summary.setTransferredOut(item.summary.getTransferredOut() + rs.getLong(2)));
    }

    /**
     * A SEATED item's seat rows: how many, on sale, in a hold, and a digest of every row (a sum of
     * each row's hash, so the physical order does not count). Read whole: seats grow with the seat
     * map, not with the history, and a seat changes with a hold or a sale change of any age.
     */
    private static void seats(Connection c, String tenant, Map<String, Item> items) throws SQLException {
        each(c, sql("""
                SELECT item_id, count(*), count(*) FILTER (WHERE on_sale), count(hold_id),
                       (sum(hashtextextended(json_build_array(seat_no, seat_id, section_id, row_id, position, category,
                            rank, aisle_after, on_sale, hold_id)::text, 0)) % 9223372036854775807)::bigint
                  FROM seats WHERE tenant_id = ? GROUP BY item_id""", tenant), items,
                (item, rs) -> item.summary.setSeats(SeatFigures.newBuilder().setSeats(rs.getLong(2))
                        .setOnSale(rs.getLong(3)).setClaimed(rs.getLong(4)).setDigest(rs.getLong(5))));
    }

    private static void restocks(Connection c, String tenant, Map<String, Item> items) throws SQLException {
        each(c, sql("SELECT item_id, count(*), sum(qty) FROM restocks WHERE tenant_id = ? GROUP BY item_id", tenant),
                items, (item, rs) -> item.summary.setRestocks(rs.getLong(2)).setRestockedUnits(rs.getLong(3)));
    }
}
