package io.lastunit.shard.store;

import io.lastunit.api.inventory.v1.HoldState;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;

/**
 * New HELD holds for one insert, a row at a time ({@link #add}), bound as the statement's ten
 * parameter arrays ({@link #bind}). Sized for the batch when it is made: a lane's hot path fills
 * it with one write per column and binds the arrays as they are. Not thread-safe; built and used
 * by one batch.
 */
public final class NewHoldColumns {
    private final UUID[] ids;
    private final String[] tenants;
    private final String[] items;
    private final Integer[] buckets;
    private final String[] regions;
    private final Integer[] qtys;
    private final String[] buyers;
    private final String[] keys;
    private final String[] fingerprints;
    private final Long[] ttlMs;
    private int size;

    /** Room for {@code capacity} holds; {@link #add} past it fails. */
    public NewHoldColumns(int capacity) {
        ids = new UUID[capacity];
        tenants = new String[capacity];
        items = new String[capacity];
        buckets = new Integer[capacity];
        regions = new String[capacity];
        qtys = new Integer[capacity];
        buyers = new String[capacity];
        keys = new String[capacity];
        fingerprints = new String[capacity];
        ttlMs = new Long[capacity];
    }

    public void add(UUID id, String tenant, String item, int bucketNo, String region, int qty, String buyer,
                    String idempotencyKey, String fingerprint, long holdTtlMs) {
        if (size == ids.length) {
            throw new IllegalStateException("new-hold columns are full at " + size);
        }
        int x = size++;
        ids[x] = id;
        tenants[x] = tenant;
        items[x] = item;
        buckets[x] = bucketNo;
        regions[x] = region;
        qtys[x] = qty;
        buyers[x] = buyer;
        keys[x] = idempotencyKey;
        fingerprints[x] = fingerprint;
        ttlMs[x] = holdTtlMs;
    }

    public int size() {
        return size;
    }

    /** The row {@code x} as a HELD hold created at {@code created}, as the insert wrote it. */
    public HoldRow row(int x, Instant created) {
        return new HoldRow(ids[x], tenants[x], items[x], buckets[x], regions[x], qtys[x], buyers[x], keys[x],
                fingerprints[x], HoldState.HELD, created, created.plusMillis(ttlMs[x]), false, null, false);
    }

    public int qty(int x) {
        return qtys[x];
    }

    public String key(int x) {
        return keys[x];
    }

    public long ttlMs(int x) {
        return ttlMs[x];
    }

    /** Binds the ten arrays from parameter {@code first} on; returns the next parameter. */
    int bind(PreparedStatement ps, int first) throws SQLException {
        Connection c = ps.getConnection();
        int i = first;
        ps.setArray(i++, c.createArrayOf("uuid", fit(ids)));
        ps.setArray(i++, c.createArrayOf("text", fit(tenants)));
        ps.setArray(i++, c.createArrayOf("text", fit(items)));
        ps.setArray(i++, c.createArrayOf("int4", fit(buckets)));
        ps.setArray(i++, c.createArrayOf("text", fit(regions)));
        ps.setArray(i++, c.createArrayOf("int4", fit(qtys)));
        ps.setArray(i++, c.createArrayOf("text", fit(buyers)));
        ps.setArray(i++, c.createArrayOf("text", fit(keys)));
        ps.setArray(i++, c.createArrayOf("text", fit(fingerprints)));
        ps.setArray(i++, c.createArrayOf("int8", fit(ttlMs)));
        return i;
    }

    /** The filled part: the array itself when full (the lane sizes it exactly), else a copy. */
    private <T> T[] fit(T[] column) {
        return size == column.length ? column : Arrays.copyOf(column, size);
    }
}
