package io.lastunit.shard.lane;

import java.util.HashSet;
import java.util.Set;

/**
 * A lane's cached copy of one bucket row, plus what the lane knows about the bucket's holds:
 * the idempotency keys placed in it (so a retry is recognised and SOLD_OUT is decided with
 * no database round trip) and a lower bound of the earliest expiry among its HELD holds (so
 * the lane sweeps before it answers SOLD_OUT).
 *
 * <p>Confined to its lane's thread; not thread-safe. The database stays the arbiter: the
 * counters are a cache that the conditional bucket update checks on every batch. The key set
 * is bounded by {@code keyIndexMax}; past it {@link #keysComplete} turns false and a negative
 * lookup must be confirmed against the database.
 */
final class BucketState {
    final BucketKey key;
    ItemConfig item;
    long allotment;
    long available;
    long held;
    long sold;
    /** Lower bound of expires_at (epoch micros, database clock) of the bucket's HELD holds. */
    long earliestDueMicros = Long.MAX_VALUE;
    /** A redo found the counters stale: reload them (not the keys) before the next use. */
    boolean stale;
    private final Set<String> keys = new HashSet<>();
    private final int keyIndexMax;
    private boolean keysComplete = true;

    BucketState(BucketKey key, ItemConfig item, int keyIndexMax) {
        this.key = key;
        this.item = item;
        this.keyIndexMax = keyIndexMax;
    }

    void setCounters(long allotment, long available, long held, long sold) {
        this.allotment = allotment;
        this.available = available;
        this.held = held;
        this.sold = sold;
        assertBalanced();
    }

    /** Invariant of DESIGN §1, checked whenever the counters change (both sides of a commit). */
    void assertBalanced() {
        if (available < 0 || held < 0 || sold < 0 || available + held + sold != allotment) {
            throw new IllegalStateException("bucket " + key + " out of balance: allotment=" + allotment
                    + ", available=" + available + ", held=" + held + ", sold=" + sold);
        }
    }

    void addKey(String idempotencyKey) {
        if (keys.size() >= keyIndexMax) {
            keysComplete = false;
            return;
        }
        keys.add(idempotencyKey);
    }

    boolean knowsKey(String idempotencyKey) {
        return keys.contains(idempotencyKey);
    }

    /** True when every idempotency key placed in this bucket is in the key set. */
    boolean keysComplete() {
        return keysComplete;
    }

    void markKeysIncomplete() {
        keysComplete = false;
    }

    int keyCount() {
        return keys.size();
    }
}
