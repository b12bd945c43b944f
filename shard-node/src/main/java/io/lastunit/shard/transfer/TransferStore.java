package io.lastunit.shard.transfer;

import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferState;
import io.lastunit.shard.store.LaneStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The demarcation protocol's statements on one shard (DESIGN §7) and the level reads behind
 * ListLevels. Step 1 (OUT) and step 2 (IN) each run in one transaction owned by the caller;
 * every step is idempotent by transfer id. Step 1 locks the item's rows with
 * {@code ItemStore.lockBuckets}, in bucket order as a collapse and a borrow do. Stateless and
 * thread-safe.
 */
public final class TransferStore {

    private static final String COLUMNS =
            "transfer_id, direction, tenant_id, item_id, peer, qty, state, collapse, created_at";

    /** The record of one transfer in one direction on this shard, or null. */
    public Transfer read(Connection c, String transferId, TransferDirection direction) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT " + COLUMNS + " FROM transfers WHERE transfer_id = ? AND direction = ?")) {
            ps.setString(1, transferId);
            ps.setString(2, direction.name());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? transfer(rs) : null;
            }
        }
    }

    /** Marks the item collapsed to its home region. False if the item is missing. */
    public boolean markCollapsed(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE items SET collapsed = true WHERE tenant_id = ? AND item_id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            return ps.executeUpdate() == 1;
        }
    }

    /** Units to take out of one bucket in step 1. */
    public record Take(int bucketNo, long units) {
    }

    /**
     * Takes each {@link Take}'s units from its bucket (available and allotment), each conditional
     * on the units being there. Returns the rows after; fewer rows than buckets means a condition
     * failed and the caller must roll back.
     */
    public List<LaneStore.BucketRow> takeOut(Connection c, String tenant, String item, List<Take> takes)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE buckets b SET available = b.available - d.k, allotment = b.allotment - d.k
                  FROM unnest(?::int4[], ?::int8[]) AS d(n, k)
                 WHERE b.tenant_id = ? AND b.item_id = ? AND b.bucket_no = d.n AND b.available >= d.k
                RETURNING b.tenant_id, b.item_id, b.bucket_no, b.allotment, b.available, b.held, b.sold""")) {
            ps.setArray(1, c.createArrayOf("int4", takes.stream().map(Take::bucketNo).toArray(Integer[]::new)));
            ps.setArray(2, c.createArrayOf("int8", takes.stream().map(Take::units).toArray(Long[]::new)));
            ps.setString(3, tenant);
            ps.setString(4, item);
            return bucketRows(ps);
        }
    }

    /** Inserts the OUT record (PENDING) and its outbox event. */
    public Transfer recordOut(Connection c, String transferId, String tenant, String item, String peer, long qty,
                              boolean collapse) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                WITH t AS (
                    INSERT INTO transfers (transfer_id, direction, tenant_id, item_id, peer, qty, state, collapse)
                    VALUES (?, 'OUT', ?, ?, ?, ?, 'PENDING', ?)
                    RETURNING %s
                ), ob AS (
                    INSERT INTO outbox (tenant_id, item_id, kind, qty) SELECT tenant_id, item_id, 'TRANSFERRED', -qty FROM t
                )
                SELECT * FROM t""".formatted(COLUMNS))) {
            ps.setString(1, transferId);
            ps.setString(2, tenant);
            ps.setString(3, item);
            ps.setString(4, peer);
            ps.setLong(5, qty);
            ps.setBoolean(6, collapse);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return transfer(rs);
            }
        }
    }

    /**
     * Step 2: inserts the IN record (DONE) unless it exists and, only if inserted, credits bucket 0
     * with the units. Returns bucket 0 after a credit, or null when the record already existed.
     */
    public LaneStore.BucketRow recordInAndCredit(Connection c, String transferId, String tenant, String item,
                                                 String peer, long qty) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                WITH t AS (
                    INSERT INTO transfers (transfer_id, direction, tenant_id, item_id, peer, qty, state, done_at)
                    VALUES (?, 'IN', ?, ?, ?, ?, 'DONE', now())
                    ON CONFLICT DO NOTHING
                    RETURNING tenant_id, item_id, qty
                ), ob AS (
                    INSERT INTO outbox (tenant_id, item_id, kind, qty) SELECT tenant_id, item_id, 'TRANSFERRED', qty FROM t
                )
                UPDATE buckets b SET available = b.available + t.qty, allotment = b.allotment + t.qty
                  FROM t
                 WHERE b.tenant_id = t.tenant_id AND b.item_id = t.item_id AND b.bucket_no = 0
                RETURNING b.tenant_id, b.item_id, b.bucket_no, b.allotment, b.available, b.held, b.sold""")) {
            ps.setString(1, transferId);
            ps.setString(2, tenant);
            ps.setString(3, item);
            ps.setString(4, peer);
            ps.setLong(5, qty);
            List<LaneStore.BucketRow> rows = bucketRows(ps);
            return rows.isEmpty() ? null : rows.get(0);
        }
    }

    /** Step 3: marks the OUT record DONE. Returns the record (any state), or null if there is none. */
    public Transfer complete(Connection c, String transferId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE transfers SET state = 'DONE', done_at = coalesce(done_at, now())"
                        + " WHERE transfer_id = ? AND direction = 'OUT' RETURNING " + COLUMNS)) {
            ps.setString(1, transferId);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? transfer(rs) : null;
            }
        }
    }

    /** Every PENDING record (oldest first, at most {@code max}), or the records with the given ids. */
    public List<Transfer> list(Connection c, List<String> ids, int max) throws SQLException {
        String sql = ids.isEmpty()
                ? "SELECT " + COLUMNS + " FROM transfers WHERE state = 'PENDING' ORDER BY created_at LIMIT ?"
                : "SELECT " + COLUMNS + " FROM transfers WHERE transfer_id = ANY (?) ORDER BY created_at";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            if (ids.isEmpty()) {
                ps.setInt(1, max);
            } else {
                ps.setArray(1, c.createArrayOf("text", ids.toArray()));
            }
            List<Transfer> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(transfer(rs));
                }
            }
            return out;
        }
    }

    /**
     * What ListLevels answers, all from one snapshot: the levels and, when {@code windowMs > 0},
     * the transfer records the cross-shard check matches (every PENDING record and every record
     * created or completed at or after {@code sinceMs}, oldest first, at most {@code max}).
     */
    public record Snapshot(List<ItemLevel.Builder> levels, List<Transfer> transfers, long sinceMs, boolean truncated) {
    }

    /**
     * The levels and, when {@code windowMs > 0}, the transfer records of the last {@code windowMs}
     * (by this database's clock), read in one REPEATABLE READ snapshot so that a record and the
     * allotment it changed are seen together or not at all. The window's start is cut to whole
     * milliseconds, so a record created before it has {@code created_at_ms < sinceMs}.
     */
    public Snapshot snapshot(Connection c, String tenant, String item, long windowMs, int max) throws SQLException {
        if (windowMs <= 0) {
            return new Snapshot(levels(c, tenant, item), List.of(), 0, false);
        }
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        String since = "date_trunc('milliseconds', now()) - ? * interval '1 millisecond'";
        long sinceMs;
        try (PreparedStatement ps = c.prepareStatement("SELECT (extract(epoch FROM " + since + ") * 1000)::bigint")) {
            ps.setLong(1, windowMs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                sinceMs = rs.getLong(1);
            }
        }
        List<ItemLevel.Builder> levels = levels(c, tenant, item);
        StringBuilder sql = new StringBuilder("SELECT " + COLUMNS + " FROM transfers WHERE (state = 'PENDING' OR created_at >= "
                + since + " OR done_at >= " + since + ")");
        if (!tenant.isEmpty()) {
            sql.append(" AND tenant_id = ?");
            if (!item.isEmpty()) {
                sql.append(" AND item_id = ?");
            }
        }
        sql.append(" ORDER BY created_at, transfer_id, direction LIMIT ?");
        List<Transfer> records = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            int i = 1;
            ps.setLong(i++, windowMs);
            ps.setLong(i++, windowMs);
            if (!tenant.isEmpty()) {
                ps.setString(i++, tenant);
                if (!item.isEmpty()) {
                    ps.setString(i++, item);
                }
            }
            ps.setInt(i, max + 1);
            ps.setFetchSize(1_000);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    records.add(transfer(rs));
                }
            }
        }
        boolean truncated = records.size() > max;
        return new Snapshot(levels, truncated ? records.subList(0, max) : records, sinceMs, truncated);
    }

    /**
     * Committed levels of the items on this shard (counters filled in by the caller). Units
     * transferred out include those of the OUT records retention deleted (retired_transfer_totals).
     */
    public List<ItemLevel.Builder> levels(Connection c, String tenant, String item) throws SQLException {
        StringBuilder sql = new StringBuilder("""
                SELECT i.tenant_id, i.item_id, i.home_region, i.regions, i.total, i.bucket_count, i.collapsed, i.state,
                       coalesce(sum(b.allotment), 0), coalesce(sum(b.available), 0), coalesce(sum(b.held), 0),
                       coalesce(sum(b.sold), 0), count(*) FILTER (WHERE b.open),
                       (SELECT coalesce(sum(t.qty), 0) FROM transfers t
                         WHERE t.tenant_id = i.tenant_id AND t.item_id = i.item_id AND t.direction = 'IN'),
                       (SELECT coalesce(sum(t.qty), 0) FROM transfers t
                         WHERE t.tenant_id = i.tenant_id AND t.item_id = i.item_id AND t.direction = 'OUT')
                       + (SELECT coalesce(sum(r.out_qty), 0) FROM retired_transfer_totals r
                           WHERE r.tenant_id = i.tenant_id AND r.item_id = i.item_id)
                  FROM items i LEFT JOIN buckets b ON b.tenant_id = i.tenant_id AND b.item_id = i.item_id""");
        if (!tenant.isEmpty()) {
            sql.append(" WHERE i.tenant_id = ?");
            if (!item.isEmpty()) {
                sql.append(" AND i.item_id = ?");
            }
        }
        sql.append(" GROUP BY i.tenant_id, i.item_id ORDER BY i.tenant_id, i.item_id");
        try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            if (!tenant.isEmpty()) {
                ps.setString(1, tenant);
                if (!item.isEmpty()) {
                    ps.setString(2, item);
                }
            }
            ps.setFetchSize(1_000);
            List<ItemLevel.Builder> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String[] regions = (String[]) rs.getArray(4).getArray();
                    ItemLevel.Builder b = ItemLevel.newBuilder()
                            .setTenantId(rs.getString(1))
                            .setItemId(rs.getString(2))
                            .setHomeRegion(rs.getString(3))
                            .addAllRegions(regions.length == 0 ? List.of(rs.getString(3)) : List.of(regions))
                            .setBase(rs.getLong(5))
                            .setBucketCount(rs.getInt(6))
                            .setCollapsed(rs.getBoolean(7))
                            .setState(rs.getString(8))
                            .setAllotment(rs.getLong(9))
                            .setAvailable(rs.getLong(10))
                            .setHeld(rs.getLong(11))
                            .setSold(rs.getLong(12))
                            .setOpenBuckets(rs.getInt(13))
                            .setTransferredIn(rs.getLong(14))
                            .setTransferredOut(rs.getLong(15));
                    out.add(b);
                }
            }
            return out;
        }
    }

    private static List<LaneStore.BucketRow> bucketRows(PreparedStatement ps) throws SQLException {
        List<LaneStore.BucketRow> rows = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows.add(new LaneStore.BucketRow(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getLong(4),
                        rs.getLong(5), rs.getLong(6), rs.getLong(7)));
            }
        }
        return rows;
    }

    private static Transfer transfer(ResultSet rs) throws SQLException {
        return Transfer.newBuilder()
                .setTransferId(rs.getString(1))
                .setDirection(TransferDirection.valueOf(rs.getString(2)))
                .setTenantId(rs.getString(3))
                .setItemId(rs.getString(4))
                .setPeerShardId(rs.getString(5))
                .setQuantity(rs.getLong(6))
                .setState("DONE".equals(rs.getString(7)) ? TransferState.DONE : TransferState.PENDING)
                .setCollapse(rs.getBoolean(8))
                .setCreatedAtMs(rs.getTimestamp(9).getTime())
                .build();
    }
}
