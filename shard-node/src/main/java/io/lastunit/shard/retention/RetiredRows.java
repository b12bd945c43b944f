package io.lastunit.shard.retention;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The statements of retention: which tenants have rows due, and one batch of one tenant's due rows
 * deleted and added to the retired totals (schema V11) in one statement, so the invariants count
 * the same units before and after. "Due" is judged by the database's clock ({@code now()} of the
 * batch's transaction), never the node's.
 *
 * <ul>
 *   <li>a hold is due when it ended ({@code ended_at}, any final state and the key records
 *       FORWARDED and CLAIMED) longer ago than {@code holdsAfter}; found through the partial index
 *       {@code holds_ended (tenant_id, ended_at)}, oldest first;</li>
 *   <li>a transfer record is due when it is a DONE OUT record completed longer ago than
 *       {@code transfersAfter}; found through {@code transfers_out_done (tenant_id, done_at)}. IN
 *       records are kept: a PENDING OUT's recovery repeats step 2 at the target, and only the IN
 *       record makes that repeat credit nothing, while the target cannot tell when the OUT is done.</li>
 * </ul>
 *
 * <p>Stateless and thread-safe; each method runs on the caller's connection and transaction
 * (READ COMMITTED, autocommit off), which the caller commits.
 */
public final class RetiredRows {
    /** The class of the tenants' advisory locks (ItemStore's "LUTM"), taken shared by each batch. */
    static final int TENANT_LOCK_CLASS = io.lastunit.shard.store.ItemStore.TENANT_LOCK_CLASS;
    /** Longest one statement of a batch may run: far above a batch's milliseconds, a bound on the odd one. */
    static final String STATEMENT_TIMEOUT = "30s";
    /** Longest a batch waits for a row lock: retention never waits on a writer for long. */
    static final String LOCK_TIMEOUT = "1s";

    private static final String AGO = "now() - ?::bigint * interval '1 millisecond'";

    /**
     * The tenants with a hold due, ascending, from {@code ?1} (inclusive) and below {@code ?2}
     * (null: no bound): a loose scan of {@code holds_ended}, one index descent per tenant with
     * ended holds, and one more per tenant to ask for its oldest. At most {@code ?4}.
     */
    static final String HOLDS_DUE_TENANTS = """
            WITH RECURSIVE t(id) AS (
                SELECT (SELECT min(h.tenant_id) FROM holds h WHERE h.ended_at IS NOT NULL AND h.tenant_id >= ?)
                UNION ALL
                SELECT (SELECT min(h.tenant_id) FROM holds h WHERE h.ended_at IS NOT NULL AND h.tenant_id > t.id)
                  FROM t WHERE t.id IS NOT NULL
            )
            SELECT t.id FROM t
             WHERE t.id IS NOT NULL AND (?::text IS NULL OR t.id < ?::text)
               AND EXISTS (SELECT 1 FROM holds h WHERE h.tenant_id = t.id AND h.ended_at IS NOT NULL
                              AND h.ended_at < %s AND NOT (h.state = 'SOLD' AND h.seat_nos IS NOT NULL))
             LIMIT ?""".formatted(AGO);

    /** As {@link #HOLDS_DUE_TENANTS}, for DONE OUT transfer records, through {@code transfers_out_done}. */
    static final String TRANSFERS_DUE_TENANTS = """
            WITH RECURSIVE t(id) AS (
                SELECT (SELECT min(x.tenant_id) FROM transfers x
                         WHERE x.direction = 'OUT' AND x.done_at IS NOT NULL AND x.tenant_id >= ?)
                UNION ALL
                SELECT (SELECT min(x.tenant_id) FROM transfers x
                         WHERE x.direction = 'OUT' AND x.done_at IS NOT NULL AND x.tenant_id > t.id)
                  FROM t WHERE t.id IS NOT NULL
            )
            SELECT t.id FROM t
             WHERE t.id IS NOT NULL AND (?::text IS NULL OR t.id < ?::text)
               AND EXISTS (SELECT 1 FROM transfers x WHERE x.tenant_id = t.id AND x.direction = 'OUT'
                              AND x.done_at IS NOT NULL AND x.done_at < %s)
             LIMIT ?""".formatted(AGO);

    /**
     * The first statement of a batch: the transaction's bounds, the tenant's lock (shared, as
     * CreateItem takes it; a tenant move's freeze, import, drop and export take it exclusive, so each
     * waits for this batch, and this batch sees what each committed), and whether a move fences one
     * of the tenant's items here (through {@code items_fenced}).
     */
    static final String GUARD = """
            SELECT set_config('statement_timeout', ?, true), set_config('lock_timeout', ?, true),
                   pg_try_advisory_xact_lock_shared(?, hashtext(?)),
                   EXISTS (SELECT 1 FROM items WHERE tenant_id = ? AND state IN ('FROZEN', 'IMPORTING', 'MOVED'))""";

    /**
     * At most {@code ?3} of the tenant's due holds, oldest first, deleted; per bucket their count and
     * the units of the SOLD ones added to {@code retired_hold_totals}; per buyer of a limited item the
     * units of its SOLD ones added to {@code retired_usage_totals}. Answers the holds deleted and the
     * sold units among them. A SOLD hold of a seated item stays: its seats name it for good.
     */
    static final String RETIRE_HOLDS = """
            WITH gone AS (
                DELETE FROM holds h
                 USING (SELECT hold_id FROM holds
                         WHERE tenant_id = ? AND ended_at IS NOT NULL AND ended_at < %s
                           AND NOT (state = 'SOLD' AND seat_nos IS NOT NULL)
                         ORDER BY ended_at LIMIT ?) d
                 WHERE h.hold_id = d.hold_id AND h.state <> 'HELD'
                RETURNING h.tenant_id, h.item_id, h.bucket_no, h.state, h.qty, h.buyer_id
            ), by_bucket AS (
                INSERT INTO retired_hold_totals AS r (tenant_id, item_id, bucket_no, holds, sold_qty)
                SELECT tenant_id, item_id, bucket_no, count(*), coalesce(sum(qty) FILTER (WHERE state = 'SOLD'), 0)
                  FROM gone GROUP BY tenant_id, item_id, bucket_no
                ON CONFLICT (tenant_id, item_id, bucket_no)
                DO UPDATE SET holds = r.holds + EXCLUDED.holds, sold_qty = r.sold_qty + EXCLUDED.sold_qty
            ), by_buyer AS (
                INSERT INTO retired_usage_totals AS r (tenant_id, item_id, buyer_id, qty)
                SELECT g.tenant_id, g.item_id, g.buyer_id, sum(g.qty) FROM gone g
                  JOIN items i ON i.tenant_id = g.tenant_id AND i.item_id = g.item_id AND i.per_buyer_limit > 0
                 WHERE g.state = 'SOLD'
                 GROUP BY g.tenant_id, g.item_id, g.buyer_id
                ON CONFLICT (tenant_id, item_id, buyer_id) DO UPDATE SET qty = r.qty + EXCLUDED.qty
            )
            SELECT count(*), coalesce(sum(qty) FILTER (WHERE state = 'SOLD'), 0) FROM gone""".formatted(AGO);

    /**
     * At most {@code ?3} of the tenant's due DONE OUT records, oldest first, deleted; per item their
     * count and units added to {@code retired_transfer_totals}. Answers the records deleted and their units.
     */
    static final String RETIRE_TRANSFERS = """
            WITH gone AS (
                DELETE FROM transfers t
                 USING (SELECT transfer_id FROM transfers
                         WHERE tenant_id = ? AND direction = 'OUT' AND done_at IS NOT NULL AND done_at < %s
                         ORDER BY done_at LIMIT ?) d
                 WHERE t.transfer_id = d.transfer_id AND t.direction = 'OUT' AND t.state = 'DONE'
                RETURNING t.tenant_id, t.item_id, t.qty
            ), by_item AS (
                INSERT INTO retired_transfer_totals AS r (tenant_id, item_id, out_records, out_qty)
                SELECT tenant_id, item_id, count(*), sum(qty) FROM gone GROUP BY tenant_id, item_id
                ON CONFLICT (tenant_id, item_id)
                DO UPDATE SET out_records = r.out_records + EXCLUDED.out_records, out_qty = r.out_qty + EXCLUDED.out_qty
            )
            SELECT count(*), coalesce(sum(qty), 0) FROM gone""".formatted(AGO);

    /** The two kinds of rows retention deletes. */
    public enum Kind {
        HOLDS(HOLDS_DUE_TENANTS, RETIRE_HOLDS),
        TRANSFERS(TRANSFERS_DUE_TENANTS, RETIRE_TRANSFERS);

        final String dueTenants;
        final String retire;

        Kind(String dueTenants, String retire) {
            this.dueTenants = dueTenants;
            this.retire = retire;
        }
    }

    /** What the first statement of a batch found. */
    enum Guard {
        /** The tenant's lock is held (shared) and none of its items is fenced: the batch may delete. */
        CLEAR,
        /** A move's freeze, import, drop or export holds the tenant's lock: left for a later pass. */
        LOCKED,
        /** A move fences one of the tenant's items here (FROZEN, IMPORTING, MOVED). */
        FENCED
    }

    /** One batch's deletions: rows, and units (sold units of the holds, units of the transfer records). */
    record Batch(int rows, long units) {
    }

    /** Tenants with rows of {@code kind} due, ascending, in {@code [from, below)} ({@code below} null: no bound). */
    List<String> dueTenants(Connection c, Kind kind, String from, String below, Duration after, int max)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(kind.dueTenants)) {
            ps.setString(1, from);
            ps.setString(2, below);
            ps.setString(3, below);
            ps.setLong(4, after.toMillis());
            ps.setInt(5, max);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
            return out;
        }
    }

    /** The batch's first statement ({@link #GUARD}). */
    Guard guard(Connection c, String tenant) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(GUARD)) {
            ps.setString(1, STATEMENT_TIMEOUT);
            ps.setString(2, LOCK_TIMEOUT);
            ps.setInt(3, TENANT_LOCK_CLASS);
            ps.setString(4, tenant);
            ps.setString(5, tenant);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(3)) {
                    return Guard.LOCKED;
                }
                return rs.getBoolean(4) ? Guard.FENCED : Guard.CLEAR;
            }
        }
    }

    /** Deletes at most {@code max} of the tenant's due rows of {@code kind} and adds them to the retired totals. */
    Batch retire(Connection c, Kind kind, String tenant, Duration after, int max) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(kind.retire)) {
            ps.setString(1, tenant);
            ps.setLong(2, after.toMillis());
            ps.setInt(3, max);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Batch(rs.getInt(1), rs.getLong(2));
            }
        }
    }
}
