package io.lastunit.shard.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Counter changes of buckets for one conditional bucket update, a bucket at a time
 * ({@link #add}), bound as the update's eight parameter arrays ({@link #bind}). Not thread-safe.
 */
public final class BucketDeltaColumns {
    private final List<String> tenants = new ArrayList<>();
    private final List<String> items = new ArrayList<>();
    private final List<Integer> buckets = new ArrayList<>();
    private final List<Long> allotment = new ArrayList<>();
    private final List<Long> available = new ArrayList<>();
    private final List<Long> held = new ArrayList<>();
    private final List<Long> sold = new ArrayList<>();
    private final List<Long> taken = new ArrayList<>();

    /**
     * One bucket's deltas; {@code takenUnits} are units Reserves took (the bucket must then be
     * open).
     */
    public void add(String tenant, String item, int bucketNo, long dAllotment, long dAvailable, long dHeld, long dSold,
                    long takenUnits) {
        tenants.add(tenant);
        items.add(item);
        buckets.add(bucketNo);
        allotment.add(dAllotment);
        available.add(dAvailable);
        held.add(dHeld);
        sold.add(dSold);
        taken.add(takenUnits);
    }

    public int size() {
        return tenants.size();
    }

    /** Binds the eight arrays from parameter {@code first} on; returns the next parameter. */
    int bind(PreparedStatement ps, int first) throws SQLException {
        Connection c = ps.getConnection();
        int i = first;
        ps.setArray(i++, c.createArrayOf("text", tenants.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", items.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("int4", buckets.toArray(Integer[]::new)));
        ps.setArray(i++, c.createArrayOf("int8", allotment.toArray(Long[]::new)));
        ps.setArray(i++, c.createArrayOf("int8", available.toArray(Long[]::new)));
        ps.setArray(i++, c.createArrayOf("int8", held.toArray(Long[]::new)));
        ps.setArray(i++, c.createArrayOf("int8", sold.toArray(Long[]::new)));
        ps.setArray(i++, c.createArrayOf("int8", taken.toArray(Long[]::new)));
        return i;
    }
}
