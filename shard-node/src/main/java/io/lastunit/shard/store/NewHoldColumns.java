package io.lastunit.shard.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * New HELD holds for one insert, a row at a time ({@link #add}), bound as the statement's ten
 * parameter arrays ({@link #bind}). Not thread-safe; built and used by one batch.
 */
public final class NewHoldColumns {
    private final List<UUID> ids = new ArrayList<>();
    private final List<String> tenants = new ArrayList<>();
    private final List<String> items = new ArrayList<>();
    private final List<Integer> buckets = new ArrayList<>();
    private final List<String> regions = new ArrayList<>();
    private final List<Integer> qtys = new ArrayList<>();
    private final List<String> buyers = new ArrayList<>();
    private final List<String> keys = new ArrayList<>();
    private final List<String> fingerprints = new ArrayList<>();
    private final List<Long> ttlMs = new ArrayList<>();

    public void add(UUID id, String tenant, String item, int bucketNo, String region, int qty, String buyer,
                    String idempotencyKey, String fingerprint, long holdTtlMs) {
        ids.add(id);
        tenants.add(tenant);
        items.add(item);
        buckets.add(bucketNo);
        regions.add(region);
        qtys.add(qty);
        buyers.add(buyer);
        keys.add(idempotencyKey);
        fingerprints.add(fingerprint);
        ttlMs.add(holdTtlMs);
    }

    public int size() {
        return ids.size();
    }

    /** The row {@code x} as a HELD hold created at {@code created}, as the insert wrote it. */
    public HoldRow row(int x, java.time.Instant created) {
        return new HoldRow(ids.get(x), tenants.get(x), items.get(x), buckets.get(x), regions.get(x), qtys.get(x),
                buyers.get(x), keys.get(x), fingerprints.get(x), io.lastunit.api.inventory.v1.HoldState.HELD,
                created, created.plusMillis(ttlMs.get(x)), false, null, false);
    }

    public int qty(int x) {
        return qtys.get(x);
    }

    public String key(int x) {
        return keys.get(x);
    }

    public long ttlMs(int x) {
        return ttlMs.get(x);
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
        ps.setArray(i++, c.createArrayOf("int8", ttlMs.toArray(Long[]::new)));
        return i;
    }
}
