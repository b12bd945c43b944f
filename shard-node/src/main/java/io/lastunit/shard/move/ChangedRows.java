package io.lastunit.shard.move;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which of a tenant's rows can still change, found by index, so that a move's last delta and its
 * fenced verification read what is live and recent instead of the tenant's whole history
 * (docs/moves.md, "A pause that does not grow with history").
 *
 * <p>The rule (schema V10): a hold changes only while it is HELD, and the transaction that ends it
 * sets {@code ended_at} to its {@code now()}; a transfer changes only while it is PENDING, and the
 * one that completes it sets {@code done_at}; a buyer's usage changes only in a transaction that
 * places or ends one of that buyer's holds of the item. The <b>cut</b> of an export is a time by
 * the database's clock at or before the start of every transaction that commits after its
 * snapshot. So the rows written after that snapshot are among: the HELD holds, the holds ended at
 * or after the cut, the usage of their buyers, and the transfers PENDING or done at or after the
 * cut. Rows ended before the cut were committed before the snapshot and never change again: the
 * <b>settled</b> rows; the rest are <b>recent</b>.
 *
 * <p>Live holds are read through {@code holds_live}, ended ones through {@code holds_ended}, usage by
 * its primary key for the buyers of those holds of limited items (only those items keep usage).
 * Stateless; the statements run on the caller's connection and transaction.
 *
 * <p>Hazard: the cut comes from {@code pg_stat_activity}, which shows the start of the transactions
 * of the shard's own role (other roles' are hidden and must not write the shard's tables), less
 * {@link #CUT_MARGIN_MICROS} for a writer between taking its start time and showing it, and for a
 * small step back of the database's clock.
 */
public final class ChangedRows {
    /** Taken off the earliest start seen: covers the instant between a transaction's start and its report. */
    public static final long CUT_MARGIN_MICROS = 2_000_000;

    private ChangedRows() {
    }

    /**
     * The cut for a snapshot taken after this call: the earliest start of a transaction running now
     * (this database's clock), or now, less {@link #CUT_MARGIN_MICROS}. Microseconds since the epoch.
     */
    public static long cut(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT (extract(epoch FROM least(statement_timestamp(), min(a.xact_start))) * 1000000)::bigint
                  FROM pg_stat_activity a WHERE a.datname = current_database()""");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1) - CUT_MARGIN_MICROS;
        }
    }

    /** A time in microseconds since the epoch, as SQL, bound to the next parameter. */
    static final String AT_MICROS = "(timestamptz 'epoch' + ?::float8 * interval '1 microsecond')";

    /** The tables whose changeable rows are found by index; the others are read whole (they grow with items). */
    static boolean indexed(TenantTable t) {
        return t == TenantTable.HOLDS || t == TenantTable.BUYER_USAGE || t == TenantTable.TRANSFERS;
    }

    /** A condition added to a row's query, on the row of the given alias ("" for none). */
    @FunctionalInterface
    interface RowFilter {
        RowFilter NONE = (alias, into) -> { };

        void append(String alias, Query into);
    }

    /**
     * The export's statement for table {@code t}: its recent rows ({@code item_id} and the row as
     * {@code row_to_json}), each also passing {@code written}.
     */
    static void rowsOf(TenantTable t, String tenant, long cut, RowFilter written, Query q) {
        switch (t) {
            case HOLDS -> {
                q.sql("SELECT t.item_id, row_to_json(t)::text FROM holds t WHERE t.tenant_id = ? AND t.state = 'HELD'")
                        .param(tenant);
                written.append("t", q);
                q.sql(" UNION ALL SELECT t.item_id, row_to_json(t)::text FROM holds t WHERE t.tenant_id = ?"
                        + " AND t.ended_at >= " + AT_MICROS).param(tenant).param(cut);
                written.append("t", q);
            }
            case BUYER_USAGE -> {
                q.sql("SELECT t.item_id, row_to_json(t)::text FROM (");
                recentBuyers(tenant, cut, q);
                q.sql(") k CROSS JOIN LATERAL (SELECT u.* FROM buyer_usage u WHERE u.tenant_id = ?"
                        + " AND u.item_id = k.item_id AND u.buyer_id = k.buyer_id").param(tenant);
                written.append("u", q);
                q.sql(" OFFSET 0) t");
            }
            case TRANSFERS -> {
                q.sql("SELECT t.item_id, row_to_json(t)::text FROM transfers t WHERE t.tenant_id = ?"
                        + " AND t.state = 'PENDING'").param(tenant);
                written.append("t", q);
                q.sql(" UNION ALL SELECT t.item_id, row_to_json(t)::text FROM transfers t WHERE t.tenant_id = ?"
                        + " AND t.done_at >= " + AT_MICROS).param(tenant).param(cut);
                written.append("t", q);
            }
            default -> throw new IllegalArgumentException(t + " is read whole");
        }
    }

    /**
     * The tenant's recent holds (HELD, or ended at or after the cut) as a subquery's rows with the
     * given columns of alias {@code h}.
     */
    static void recentHolds(String columns, String tenant, long cut, Query q) {
        q.sql("SELECT " + columns + " FROM holds h WHERE h.tenant_id = ? AND h.state = 'HELD'").param(tenant);
        q.sql(" UNION ALL SELECT " + columns + " FROM holds h WHERE h.tenant_id = ? AND h.ended_at >= " + AT_MICROS)
                .param(tenant).param(cut);
    }

    /**
     * The (item_id, buyer_id) pairs of the tenant's recent holds of limited items, each once, as a
     * subquery's rows: the buyers whose usage rows can have changed.
     */
    static void recentBuyers(String tenant, long cut, Query q) {
        q.sql("SELECT DISTINCT r.item_id, r.buyer_id FROM (");
        recentHolds("h.item_id, h.buyer_id", tenant, cut, q);
        q.sql(") r JOIN items i ON i.tenant_id = ? AND i.item_id = r.item_id AND i.per_buyer_limit > 0").param(tenant);
    }

    /** A statement built in text order with its parameters (String, Long or Integer). Confined to one thread. */
    static final class Query {
        private final StringBuilder sql = new StringBuilder();
        private final List<Object> params = new ArrayList<>();

        Query sql(String text) {
            sql.append(text);
            return this;
        }

        Query param(Object value) {
            if (!(value instanceof String || value instanceof Long || value instanceof Integer)) {
                throw new IllegalArgumentException("a parameter is a String, Long or Integer, not " + value);
            }
            params.add(value);
            return this;
        }

        String text() {
            return sql.toString();
        }

        PreparedStatement prepare(Connection c) throws SQLException {
            PreparedStatement ps = c.prepareStatement(sql.toString());
            try {
                for (int i = 0; i < params.size(); i++) {
                    Object v = params.get(i);
                    if (v instanceof String s) {
                        ps.setString(i + 1, s);
                    } else if (v instanceof Long l) {
                        ps.setLong(i + 1, l);
                    } else {
                        ps.setInt(i + 1, (Integer) v);
                    }
                }
                return ps;
            } catch (SQLException | RuntimeException e) {
                ps.close();
                throw e;
            }
        }
    }
}
