package io.lastunit.shard.store;

import io.lastunit.common.HoldId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The hold ids one hold statement (confirm, release, extend) matches on, a hold at a time
 * ({@link #add}), bound as its first five parameter arrays: every part of an id must agree with
 * the row. Not thread-safe.
 */
public final class HoldRefColumns {
    private final List<UUID> ids = new ArrayList<>();
    private final List<String> tenants = new ArrayList<>();
    private final List<String> items = new ArrayList<>();
    private final List<Integer> buckets = new ArrayList<>();
    private final List<String> regions = new ArrayList<>();

    public void add(HoldId id) {
        ids.add(id.uuid());
        tenants.add(id.tenantId());
        items.add(id.itemId());
        buckets.add(id.bucketNo());
        regions.add(id.region());
    }

    public int size() {
        return ids.size();
    }

    /** Binds the five arrays from parameter {@code first} on; returns the next parameter. */
    int bind(PreparedStatement ps, int first) throws SQLException {
        Connection c = ps.getConnection();
        int i = first;
        ps.setArray(i++, c.createArrayOf("uuid", ids.toArray(UUID[]::new)));
        ps.setArray(i++, c.createArrayOf("text", tenants.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", items.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("int4", buckets.toArray(Integer[]::new)));
        ps.setArray(i++, c.createArrayOf("text", regions.toArray(String[]::new)));
        return i;
    }
}
