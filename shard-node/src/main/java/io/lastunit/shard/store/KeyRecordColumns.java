package io.lastunit.shard.store;

import io.lastunit.api.inventory.v1.HoldState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Records of keys that hold no units (FORWARDED, CLAIMED) for one insert, a record at a time
 * ({@link #add}), bound as the insert's ten parameter arrays ({@link #bind}). Not thread-safe.
 */
public final class KeyRecordColumns {
    private final List<UUID> ids = new ArrayList<>();
    private final List<String> tenants = new ArrayList<>();
    private final List<String> items = new ArrayList<>();
    private final List<Integer> buckets = new ArrayList<>();
    private final List<String> regions = new ArrayList<>();
    private final List<Integer> qtys = new ArrayList<>();
    private final List<String> buyers = new ArrayList<>();
    private final List<String> keys = new ArrayList<>();
    private final List<String> fingerprints = new ArrayList<>();
    private final List<String> states = new ArrayList<>();

    public void add(UUID id, String tenant, String item, int bucketNo, String region, int qty, String buyer,
                    String idempotencyKey, String fingerprint, HoldState state) {
        ids.add(id);
        tenants.add(tenant);
        items.add(item);
        buckets.add(bucketNo);
        regions.add(region);
        qtys.add(qty);
        buyers.add(buyer);
        keys.add(idempotencyKey);
        fingerprints.add(fingerprint);
        states.add(state.name());
    }

    public int size() {
        return ids.size();
    }

    /** Binds the ten arrays from parameter {@code first} on; returns the next parameter. */
    int bind(PreparedStatement ps, int first) throws SQLException {
        Connection c = ps.getConnection();
        int i = first;
        ps.setArray(i++, c.createArrayOf("uuid", ids.toArray(UUID[]::new)));
        ps.setArray(i++, c.createArrayOf("text", tenants.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", items.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("int4", buckets.toArray(Integer[]::new)));
        ps.setArray(i++, c.createArrayOf("text", regions.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("int4", qtys.toArray(Integer[]::new)));
        ps.setArray(i++, c.createArrayOf("text", buyers.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", keys.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", fingerprints.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", states.toArray(String[]::new)));
        return i;
    }
}
