package io.lastunit.shard.move;

import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.store.ItemStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The state changes a tenant move makes to the tenant's items on this shard, and the drop of a
 * copy it no longer needs. Each is one statement per table under the tenant's lock, admitted first
 * by the mover's token ({@link MoveTokens}) in the same transaction, idempotent: it
 * changes the items in the state it starts from and no other, so a repeat changes nothing. The
 * lanes' cached state is the caller's to drop afterwards ({@code TenantMoves}). Stateless and
 * thread-safe; the caller owns the connection (READ COMMITTED, autocommit off) and commits.
 */
public final class TenantStates {
    /** A change of state, from one state to another. */
    public enum Change {
        /** The source at the move's fence. */
        FREEZE(ItemState.ACTIVE, ItemState.FROZEN, "FreezeTenant"),
        /** The source again, when the move rolls back before its flip. */
        UNFREEZE(ItemState.FROZEN, ItemState.ACTIVE, "UnfreezeTenant"),
        /** The target after the flip. */
        ACTIVATE(ItemState.IMPORTING, ItemState.ACTIVE, "ActivateTenant"),
        /** The source after the flip. */
        RETIRE(ItemState.FROZEN, ItemState.MOVED, "RetireTenant");

        public final ItemState from;
        public final ItemState to;
        /** The RPC that asks for it, for messages. */
        public final String rpc;

        Change(ItemState from, ItemState to, String rpc) {
            this.from = from;
            this.to = to;
            this.rpc = rpc;
        }
    }

    /**
     * What a change or a drop did: how many items it changed (rows it deleted, for a drop), the
     * database's clock then, and the items it changed (or deleted).
     */
    public record Changed(long count, long committedAtMicros, List<String> items) {
    }

    /** The tables of an item's rows, deleted in this order by {@link #drop} (its item row last). */
    private static final List<String> ITEM_ROWS = List.of("holds", "buyer_usage", "transfers", "restocks", "seats", "buckets",
            "outbox", "retired_hold_totals", "retired_usage_totals", "retired_transfer_totals");

    private final ItemStore items = new ItemStore();
    private final MoveTokens tokens = new MoveTokens();

    /**
     * Changes the call's tenant's items in {@code change.from} to {@code change.to}.
     *
     * @throws io.lastunit.common.Failure MOVE_SUPERSEDED (nothing changed) when a newer mover of
     *         the move has written here
     */
    public Changed change(Connection c, MoveCall call, Change change, String shardId) throws SQLException {
        String tenant = call.tenant();
        items.lockTenant(c, tenant, false);
        tokens.admit(c, call, change.rpc, shardId);
        List<String> changed = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE items SET state = ? WHERE tenant_id = ? AND state = ? RETURNING item_id")) {
            ps.setString(1, change.to.name());
            ps.setString(2, tenant);
            ps.setString(3, change.from.name());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    changed.add(rs.getString(1));
                }
            }
        }
        return new Changed(changed.size(), clockMicros(c), changed);
    }

    /**
     * Deletes every row of the call's tenant's items that are in {@code state} (IMPORTING: a copy a
     * move discards; MOVED: the source of a finished move), their outbox rows included, and the
     * items. Items in any other state are not touched. A drop of MOVED items also deletes the
     * tenant's tokens of every other move ({@link MoveTokens#forgetOtherMoves}): a tenant is in one
     * move at a time, so those have finished. The call's own token is kept, so its move's stale
     * movers stay fenced here.
     *
     * @throws io.lastunit.common.Failure MOVE_SUPERSEDED (nothing deleted) when a newer mover of
     *         the move has written here
     */
    public Changed drop(Connection c, MoveCall call, ItemState state, String shardId) throws SQLException {
        if (state != ItemState.IMPORTING && state != ItemState.MOVED) {
            throw new IllegalArgumentException("a drop deletes IMPORTING or MOVED items, not " + state);
        }
        String tenant = call.tenant();
        items.lockTenant(c, tenant, false);
        tokens.admit(c, call, "DropTenant " + state, shardId);
        if (state == ItemState.MOVED) {
            tokens.forgetOtherMoves(c, tenant, call.moveId());
        }
        String[] ids = itemsIn(c, tenant, state);
        long deleted = 0;
        if (ids.length > 0) {
            for (String table : ITEM_ROWS) {
                deleted += delete(c, "DELETE FROM " + table + " WHERE tenant_id = ? AND item_id = ANY (?::text[])",
                        tenant, ids, null);
            }
            deleted += delete(c, "DELETE FROM items WHERE tenant_id = ? AND item_id = ANY (?::text[]) AND state = ?",
                    tenant, ids, state);
        }
        return new Changed(deleted, clockMicros(c), List.of(ids));
    }

    /** The tenant's items in {@code state}, locked. */
    private static String[] itemsIn(Connection c, String tenant, ItemState state) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT item_id FROM items WHERE tenant_id = ? AND state = ? FOR UPDATE")) {
            ps.setString(1, tenant);
            ps.setString(2, state.name());
            List<String> ids = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getString(1));
                }
            }
            return ids.toArray(new String[0]);
        }
    }

    private static long delete(Connection c, String sql, String tenant, String[] ids, ItemState state)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, tenant);
            ps.setArray(2, c.createArrayOf("text", ids));
            if (state != null) {
                ps.setString(3, state.name());
            }
            return ps.executeUpdate();
        }
    }

    /** The database's clock now, at the end of the change (it commits next), in epoch microseconds. */
    private static long clockMicros(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
