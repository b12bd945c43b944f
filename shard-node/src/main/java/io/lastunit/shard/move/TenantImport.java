package io.lastunit.shard.move;

import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.store.ItemStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Writes rows another shard exported ({@link TenantExport}) into this shard, in one transaction:
 * each row is upserted by its primary key with every column, so importing the same rows again
 * changes nothing, and a later export's rows replace earlier ones. Items are written IMPORTING,
 * whatever state they had on the source, and serve nothing until the move activates them.
 *
 * <p>Refused with nothing written: a row of another tenant, or of another item than its
 * {@code item_id} says, or a row that does not fit its table ({@code INVALID_ARGUMENT}); an item
 * of the rows that this shard serves or is moving away (any state but IMPORTING and MOVED), or a
 * row of an item neither in the rows nor IMPORTING here, or a hold or transfer id recorded here for
 * another item ({@code FAILED_PRECONDITION} / {@code TENANT_NOT_IMPORTABLE}); a call of a mover
 * that a newer mover of the move superseded here ({@code FAILED_PRECONDITION} /
 * {@code MOVE_SUPERSEDED}, {@link MoveTokens}). A MOVED item's rows are overwritten: the tenant
 * comes back to a shard it left.
 *
 * <p>Each row's JSON is read as one record of its table ({@code json_populate_record} per array
 * element), so one row cannot carry several. Stateless and thread-safe; the caller owns the
 * connection (READ COMMITTED, autocommit off) and commits. The tenant's lock is held until then,
 * so no CreateItem and no state change of the tenant's items runs between the check and the
 * writes.
 */
public final class TenantImport {
    private static final String INTEGRITY = "23";
    private static final String DATA = "22";
    private static final String UNIQUE = "23505";
    private static final String CARDINALITY = "21000";

    private final ItemStore items = new ItemStore();
    private final MoveTokens tokens = new MoveTokens();

    /** What an import wrote: its rows by kind, and the items they are of. */
    public record Imported(MoveCounts counts, Set<String> items) {
    }

    /**
     * Imports {@code tables} (each table at most once, every row validated at the edge: table
     * names, item ids, the count) for the call's tenant; returns the rows written, by kind.
     *
     * @throws io.lastunit.common.Failure MOVE_SUPERSEDED (checked before anything else, nothing
     *         written) when a newer mover of the move has written here
     */
    public Imported importRows(Connection c, MoveCall call, String shardId, List<TenantRows> tables)
            throws SQLException {
        String tenant = call.tenant();
        Map<TenantTable, List<TenantRow>> byTable = new EnumMap<>(TenantTable.class);
        for (TenantRows rows : tables) {
            byTable.put(TenantTable.named(rows.getTable()).orElseThrow(), rows.getRowsList());
        }
        items.lockTenant(c, tenant, false);
        tokens.admit(c, call, "ImportTenant", shardId);
        for (Map.Entry<TenantTable, List<TenantRow>> e : byTable.entrySet()) {
            checkOwners(c, e.getKey(), tenant, e.getValue());
        }
        Set<String> items = checkItems(c, tenant, shardId, byTable);
        MoveCounts.Builder counts = MoveCounts.newBuilder();
        for (Map.Entry<TenantTable, List<TenantRow>> e : byTable.entrySet()) {
            TenantTable t = e.getKey();
            int written = upsert(c, t, tenant, e.getValue());
            if (written != e.getValue().size()) {
                c.rollback();
                throw Failure.of(Reason.TENANT_NOT_IMPORTABLE, "ImportTenant of tenant " + tenant + ": "
                        + (e.getValue().size() - written) + " of " + e.getValue().size() + " rows of " + t.table
                        + " have a " + String.join(", ", t.primaryKey) + " recorded on shard " + shardId
                        + " for another item; nothing was written");
            }
            t.count(counts, written);
        }
        return new Imported(counts.build(), items);
    }

    /** Every row of {@code t} belongs to the tenant and to the item its {@code item_id} names. */
    private static void checkOwners(Connection c, TenantTable t, String tenant, List<TenantRow> rows)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT j.ord, r.tenant_id, r.item_id
                  FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS j(item, js, ord),
                       LATERAL json_populate_record(null::%s, j.js::json) AS r
                 WHERE r.tenant_id IS DISTINCT FROM ? OR r.item_id IS DISTINCT FROM j.item
                 ORDER BY j.ord LIMIT 1""".formatted(t.table))) {
            ps.setArray(1, c.createArrayOf("text", rows.stream().map(TenantRow::getItemId).toArray()));
            ps.setArray(2, c.createArrayOf("text", rows.stream().map(TenantRow::getJson).toArray()));
            ps.setString(3, tenant);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    int row = rs.getInt(1) - 1;
                    c.rollback();
                    throw Failure.invalid("tables.rows.json", "row " + row + " of " + t.table + " is of tenant "
                            + rs.getString(2) + " and item " + rs.getString(3) + ", not of tenant " + tenant
                            + " and item " + rows.get(row).getItemId() + " as the request says; nothing was written");
                }
            }
        } catch (SQLException e) {
            throw refusal(c, e, t, tenant);
        }
    }

    /**
     * The items of the rows may be written here: an item row's item is absent, IMPORTING or MOVED
     * here; every other row's item is in the request's item rows or IMPORTING here. Returns them.
     */
    private Set<String> checkItems(Connection c, String tenant, String shardId, Map<TenantTable, List<TenantRow>> byTable)
            throws SQLException {
        Set<String> itemRows = byTable.getOrDefault(TenantTable.ITEMS, List.of()).stream()
                .map(TenantRow::getItemId).collect(Collectors.toSet());
        Set<String> all = new LinkedHashSet<>();
        byTable.values().forEach(rows -> rows.forEach(r -> all.add(r.getItemId())));
        Map<String, ItemState> here = lockItems(c, tenant, all);
        for (String item : all) {
            ItemState state = here.get(item);
            boolean writable = itemRows.contains(item)
                    ? state == null || state == ItemState.IMPORTING || state == ItemState.MOVED
                    : state == ItemState.IMPORTING;
            if (!writable) {
                c.rollback();
                throw Failure.of(Reason.TENANT_NOT_IMPORTABLE, "ImportTenant of tenant " + tenant + ": item " + tenant
                        + "/" + item + " is " + (state == null ? "not" : state.name()) + " on shard " + shardId
                        + (itemRows.contains(item) ? " (a move writes only items absent, IMPORTING or MOVED here)"
                        : " and its item row is not in the request (a move writes an item's row first)")
                        + "; nothing was written");
            }
        }
        return all;
    }

    /** The states of the tenant's items among {@code ids} that exist here, their rows locked. */
    private static Map<String, ItemState> lockItems(Connection c, String tenant, Set<String> ids) throws SQLException {
        Map<String, ItemState> states = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT item_id, state FROM items WHERE tenant_id = ? AND item_id = ANY (?::text[]) FOR UPDATE")) {
            ps.setString(1, tenant);
            ps.setArray(2, c.createArrayOf("text", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    states.put(rs.getString(1), ItemState.of(rs.getString(2)));
                }
            }
        }
        return states;
    }

    /** Upserts the rows of {@code t}; returns how many were inserted or updated. */
    private static int upsert(Connection c, TenantTable t, String tenant, List<TenantRow> rows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(upsertSql(t))) {
            ps.setArray(1, c.createArrayOf("text", rows.stream().map(TenantRow::getJson).toArray()));
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw refusal(c, e, t, tenant);
        }
    }

    /**
     * {@code INSERT … SELECT} the records, {@code ON CONFLICT (primary key) DO UPDATE SET} every other
     * column. An item is written IMPORTING, and only over an IMPORTING or MOVED row; a hold or a
     * transfer (whose key does not name the item) only over a row of the same item.
     */
    static String upsertSql(TenantTable t) {
        List<String> values = new ArrayList<>();
        List<String> set = new ArrayList<>();
        for (String col : t.columns) {
            values.add(t == TenantTable.ITEMS && col.equals("state") ? "'IMPORTING'" : "r." + col);
            if (!t.primaryKey.contains(col)) {
                set.add(col + " = EXCLUDED." + col);
            }
        }
        String where = "";
        if (t == TenantTable.ITEMS) {
            where = " WHERE items.state IN ('IMPORTING', 'MOVED')";
        } else if (t.keyOmitsItem()) {
            where = " WHERE " + t.table + ".tenant_id = EXCLUDED.tenant_id AND " + t.table + ".item_id = EXCLUDED.item_id";
        }
        return "INSERT INTO " + t.table + " (" + String.join(", ", t.columns) + ")"
                + " SELECT " + String.join(", ", values)
                + " FROM unnest(?::text[]) AS j(js), LATERAL json_populate_record(null::" + t.table + ", j.js::json) AS r"
                + " ON CONFLICT (" + String.join(", ", t.primaryKey) + ") DO UPDATE SET " + String.join(", ", set)
                + where;
    }

    /**
     * What a failed statement of the import says to the mover: rows that do not fit the table (bad
     * JSON, a missing or mistyped column, a constraint) are bad input; a unique key another row holds
     * here is a conflict with what this shard serves. Anything else is the store's failure. The
     * transaction is rolled back either way; PostgreSQL's text is not passed on (it may quote values).
     */
    private static SQLException refusal(Connection c, SQLException e, TenantTable t, String tenant)
            throws SQLException {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        if (state.equals(UNIQUE)) {
            c.rollback();
            throw Failure.of(Reason.TENANT_NOT_IMPORTABLE, "ImportTenant of tenant " + tenant + ": a row of " + t.table
                    + " has a unique key that another row holds on this shard (SQL state " + state
                    + "); nothing was written");
        }
        if (state.startsWith(INTEGRITY) || state.startsWith(DATA) || state.equals(CARDINALITY)) {
            c.rollback();
            throw Failure.invalid("tables.rows.json", "rows of " + t.table + " do not fit the table (SQL state "
                    + state + (state.equals(CARDINALITY) ? ": two rows with one primary key" : "")
                    + "); nothing was written");
        }
        return e;
    }
}
