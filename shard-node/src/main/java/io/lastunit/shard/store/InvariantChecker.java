package io.lastunit.shard.store;

import io.lastunit.api.shard.v1.Drift;
import io.lastunit.api.shard.v1.DriftKind;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.shard.decide.Slot;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Checks the invariants of DESIGN §1 that one shard can check alone, on committed data, in
 * one read-only REPEATABLE READ snapshot (so it is exact while sales go on):
 * <ul>
 *   <li>per bucket: counters not negative and {@code available + held + sold = allotment};</li>
 *   <li>per bucket: {@code held = Σ qty of HELD holds} and {@code sold = Σ qty of SOLD holds};</li>
 *   <li>per item: {@code total + in - out = Σ allotment} of its buckets;</li>
 *   <li>per buyer of a limited item: usage = Σ qty of the buyer's HELD and SOLD holds.</li>
 * </ul>
 * What retention deleted still counts (schema V11): a bucket's SOLD units include
 * {@code retired_hold_totals.sold_qty}, a buyer's units {@code retired_usage_totals.qty}, and the
 * units transferred out {@code retired_transfer_totals.out_qty}, each read in the same snapshot as
 * the rows, which a retention batch changes in the same statement as the totals.
 * Every drift is named with what was expected and what was found; at most
 * {@link #DRIFTS_MAX} are listed. Thread-safe; each call uses its own connection.
 */
public final class InvariantChecker {
    public static final int DRIFTS_MAX = 1_000;

    private final DataSource dataSource;
    private final String shardId;

    public InvariantChecker(DataSource dataSource, String shardId) {
        this.dataSource = dataSource;
        this.shardId = shardId;
    }

    /** Checks one tenant's items, one item, or everything (empty strings = no filter). */
    public InvariantReport check(String tenant, String item) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return check(c, tenant, item);
        }
    }

    /**
     * The same on a given connection, which must not be inside a transaction yet (autocommit
     * off, nothing run); the check ends its own transaction and restores the connection.
     */
    public InvariantReport check(Connection c, String tenant, String item) throws SQLException {
        InvariantReport.Builder report = InvariantReport.newBuilder().setShardId(shardId);
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        c.setReadOnly(true);
        try {
            Map<Slot, long[]> holdSums = holdSums(c, tenant, item, report);
            checkBuckets(c, tenant, item, holdSums, report);
            checkItems(c, tenant, item, report);
            checkUsage(c, tenant, item, report);
            checkSeats(c, tenant, item, report);
            c.commit();
        } finally {
            c.rollback();
            c.setReadOnly(false);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        return report.setOk(report.getDriftsCount() == 0).build();
    }

    private static String filter(String alias, String tenant, String item) {
        String f = " WHERE (? = '' OR " + alias + "tenant_id = ?) AND (? = '' OR " + alias + "item_id = ?)";
        return f;
    }

    private static void bindFilter(PreparedStatement ps, int from, String tenant, String item) throws SQLException {
        ps.setString(from, tenant);
        ps.setString(from + 1, tenant);
        ps.setString(from + 2, item);
        ps.setString(from + 3, item);
    }

    private static Slot key(String t, String i, int b) {
        return new Slot(t, i, b);
    }

    private Map<Slot, long[]> holdSums(Connection c, String tenant, String item, InvariantReport.Builder report)
            throws SQLException {
        Map<Slot, long[]> sums = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT tenant_id, item_id, bucket_no,"
                + " coalesce(sum(qty) FILTER (WHERE state = 'HELD'), 0),"
                + " coalesce(sum(qty) FILTER (WHERE state = 'SOLD'), 0), count(*) FROM holds"
                + filter("", tenant, item) + " GROUP BY tenant_id, item_id, bucket_no")) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                long holds = 0;
                while (rs.next()) {
                    sums.put(key(rs.getString(1), rs.getString(2), rs.getInt(3)),
                            new long[] {rs.getLong(4), rs.getLong(5), 0});
                    holds += rs.getLong(6);
                }
                report.setHoldsChecked(holds);
            }
        }
        // {HELD units, SOLD units of stored holds, SOLD units of retired holds}
        try (PreparedStatement ps = c.prepareStatement("SELECT tenant_id, item_id, bucket_no, sold_qty"
                + " FROM retired_hold_totals" + filter("", tenant, item))) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    sums.computeIfAbsent(key(rs.getString(1), rs.getString(2), rs.getInt(3)), k -> new long[3])[2] =
                            rs.getLong(4);
                }
            }
        }
        return sums;
    }

    private void checkBuckets(Connection c, String tenant, String item, Map<Slot, long[]> holdSums,
                              InvariantReport.Builder report) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT tenant_id, item_id, bucket_no, allotment, available,"
                + " held, sold FROM buckets" + filter("", tenant, item))) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                int n = 0;
                while (rs.next()) {
                    n++;
                    String t = rs.getString(1);
                    String i = rs.getString(2);
                    int b = rs.getInt(3);
                    long allotment = rs.getLong(4);
                    long available = rs.getLong(5);
                    long held = rs.getLong(6);
                    long sold = rs.getLong(7);
                    if (available < 0 || held < 0 || sold < 0) {
                        drift(report, DriftKind.NEGATIVE_COUNTER, t, i, b, "", 0, Math.min(available, Math.min(held, sold)),
                                "available=" + available + ", held=" + held + ", sold=" + sold);
                    }
                    if (available + held + sold != allotment) {
                        drift(report, DriftKind.BUCKET_SUM, t, i, b, "", allotment, available + held + sold,
                                "available=" + available + " + held=" + held + " + sold=" + sold + " != allotment=" + allotment);
                    }
                    long[] s = holdSums.getOrDefault(key(t, i, b), new long[3]);
                    if (held != s[0]) {
                        drift(report, DriftKind.HELD_MISMATCH, t, i, b, "", s[0], held,
                                "bucket.held=" + held + " but HELD holds sum to " + s[0]);
                    }
                    if (sold != s[1] + s[2]) {
                        drift(report, DriftKind.SOLD_MISMATCH, t, i, b, "", s[1] + s[2], sold,
                                "bucket.sold=" + sold + " but SOLD holds sum to " + s[1] + " and retired SOLD holds to "
                                        + s[2]);
                    }
                }
                report.setBucketsChecked(n);
            }
        }
    }

    private void checkItems(Connection c, String tenant, String item, InvariantReport.Builder report)
            throws SQLException {
        // The shard's ledger of an item: its base (quota + restocks here) plus units transferred
        // in, minus units transferred out (in any state, retired records included), is what its
        // buckets must hold.
        try (PreparedStatement ps = c.prepareStatement("SELECT i.tenant_id, i.item_id, i.total"
                + " + (SELECT coalesce(sum(CASE t.direction WHEN 'IN' THEN t.qty ELSE -t.qty END), 0)"
                + "      FROM transfers t WHERE t.tenant_id = i.tenant_id AND t.item_id = i.item_id)"
                + " - (SELECT coalesce(sum(r.out_qty), 0) FROM retired_transfer_totals r"
                + "      WHERE r.tenant_id = i.tenant_id AND r.item_id = i.item_id),"
                + " (SELECT coalesce(sum(b.allotment), 0) FROM buckets b"
                + "   WHERE b.tenant_id = i.tenant_id AND b.item_id = i.item_id),"
                + " i.total FROM items i" + filter("i.", tenant, item))) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                int n = 0;
                while (rs.next()) {
                    n++;
                    if (rs.getLong(3) != rs.getLong(4)) {
                        long expected = rs.getLong(3);
                        long actual = rs.getLong(4);
                        drift(report, DriftKind.ITEM_TOTAL, rs.getString(1), rs.getString(2), -1, "", expected, actual,
                                "item base " + rs.getLong(5) + " + transfers in - out (retired included) = " + expected
                                        + " but bucket allotments sum to " + actual);
                    }
                }
                report.setItemsChecked(n);
            }
        }
    }

    private void checkUsage(Connection c, String tenant, String item, InvariantReport.Builder report)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT x.tenant_id, x.item_id, x.buyer_id, x.used, x.holding FROM (
                    SELECT coalesce(u.tenant_id, h.tenant_id) AS tenant_id, coalesce(u.item_id, h.item_id) AS item_id,
                           coalesce(u.buyer_id, h.buyer_id) AS buyer_id, coalesce(u.qty, 0) AS used,
                           coalesce(h.q, 0) AS holding
                      FROM buyer_usage u
                      FULL JOIN (SELECT tenant_id, item_id, buyer_id, sum(qty) AS q FROM (
                                     SELECT tenant_id, item_id, buyer_id, qty FROM holds WHERE state IN ('HELD', 'SOLD')
                                     UNION ALL SELECT tenant_id, item_id, buyer_id, qty FROM retired_usage_totals
                                 ) a GROUP BY tenant_id, item_id, buyer_id) h
                        ON h.tenant_id = u.tenant_id AND h.item_id = u.item_id AND h.buyer_id = u.buyer_id
                ) x JOIN items i ON i.tenant_id = x.tenant_id AND i.item_id = x.item_id AND i.per_buyer_limit > 0
                """ + filter("x.", tenant, item) + " AND x.used <> x.holding")) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    drift(report, DriftKind.BUYER_USAGE, rs.getString(1), rs.getString(2), -1, rs.getString(3),
                            rs.getLong(5), rs.getLong(4), "buyer_usage.qty=" + rs.getLong(4)
                                    + " but the buyer's HELD and SOLD holds (retired included) sum to " + rs.getLong(5));
                }
            }
        }
    }

    /**
     * SEATED items (docs/seats.md): bucket 0's allotment is the number of seats on sale; every seat in
     * a hold is in a HELD or SOLD hold of its item that lists it, and every seat such a hold lists is
     * in it. With the bucket rules above (held and sold are the qty of the HELD and SOLD holds, and a
     * seated hold's qty is the number of its seats), available + held + sold = seats on sale, and no
     * seat is in two holds.
     */
    private void checkSeats(Connection c, String tenant, String item, InvariantReport.Builder report)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT b.tenant_id, b.item_id, b.allotment,"
                + " (SELECT count(*) FROM seats s WHERE s.tenant_id = b.tenant_id AND s.item_id = b.item_id AND s.on_sale)"
                + " FROM buckets b JOIN items i ON i.tenant_id = b.tenant_id AND i.item_id = b.item_id AND i.kind = 'SEATED'"
                + filter("b.", tenant, item) + " AND b.bucket_no = 0")) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getLong(3) != rs.getLong(4)) {
                        drift(report, DriftKind.SEAT_COUNT, rs.getString(1), rs.getString(2), 0, "", rs.getLong(4),
                                rs.getLong(3), "bucket 0 allotment=" + rs.getLong(3) + " but " + rs.getLong(4)
                                        + " seats are on sale");
                    }
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT s.tenant_id, s.item_id, count(*)"
                + " FROM seats s LEFT JOIN holds h ON h.hold_id = s.hold_id" + filter("s.", tenant, item)
                + " AND s.hold_id IS NOT NULL AND (h.hold_id IS NULL OR h.state NOT IN ('HELD', 'SOLD')"
                + " OR h.tenant_id <> s.tenant_id OR h.item_id <> s.item_id OR NOT (s.seat_no = ANY(h.seat_nos)))"
                + " GROUP BY s.tenant_id, s.item_id")) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    drift(report, DriftKind.SEAT_CLAIM, rs.getString(1), rs.getString(2), -1, "", 0, rs.getLong(3),
                            rs.getLong(3) + " seats are in a hold that is not a HELD or SOLD hold of the item listing them");
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT h.tenant_id, h.item_id, count(*)"
                + " FROM holds h CROSS JOIN LATERAL unnest(h.seat_nos) AS n(seat_no)"
                + " LEFT JOIN seats s ON s.tenant_id = h.tenant_id AND s.item_id = h.item_id AND s.seat_no = n.seat_no"
                + filter("h.", tenant, item) + " AND h.state IN ('HELD', 'SOLD') AND h.seat_nos IS NOT NULL"
                + " AND s.hold_id IS DISTINCT FROM h.hold_id GROUP BY h.tenant_id, h.item_id")) {
            bindFilter(ps, 1, tenant, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    drift(report, DriftKind.SEAT_CLAIM, rs.getString(1), rs.getString(2), -1, "", 0, rs.getLong(3),
                            rs.getLong(3) + " seats listed by HELD or SOLD holds are not in those holds");
                }
            }
        }
    }

    private static void drift(InvariantReport.Builder report, DriftKind kind, String tenant, String item, int bucket,
                              String buyer, long expected, long actual, String detail) {
        if (report.getDriftsCount() >= DRIFTS_MAX) {
            return;
        }
        report.addDrifts(Drift.newBuilder().setKind(kind).setTenantId(tenant).setItemId(item).setBucketNo(bucket)
                .setBuyerId(buyer).setExpected(expected).setActual(actual).setDetail(detail));
    }
}
