package io.lastunit.shard.lane;

import java.util.HashMap;
import java.util.Map;

/**
 * The units one batch of a lane holds against other lanes' borrows, in the buckets of items
 * with several buckets ({@link ItemRoute#promise}), across all the attempts at the batch. Each
 * accepted Reserve raises its bucket's registration at once ({@link #want}); when an attempt has
 * decided its Reserves, registrations above what it accepted drop to that
 * ({@link #attemptDecided}); when the batch ends, committed or not, all are released
 * ({@link #releaseAll}). So a redo keeps holding the units its Reserves are about to take again,
 * with no moment in between where a borrow could take them, and never holds them twice.
 * Lane-confined.
 */
final class Promises {
    private static final class Entry {
        final ItemRoute route;
        final int bucketNo;
        /** Units added to the route for this bucket and not yet released. */
        long registered;
        /** Units the current attempt accepted so far. */
        long wanted;

        Entry(ItemRoute route, int bucketNo) {
            this.route = route;
            this.bucketNo = bucketNo;
        }
    }

    private final Map<BucketKey, Entry> entries = new HashMap<>();

    /** The current attempt accepted a Reserve of {@code units} in bucket {@code k} of {@code route}. */
    void want(ItemRoute route, BucketKey k, long units) {
        Entry e = entries.computeIfAbsent(k, x -> new Entry(route, k.bucketNo()));
        e.wanted += units;
        if (e.wanted > e.registered) {
            e.route.promise(e.bucketNo, e.wanted - e.registered);
            e.registered = e.wanted;
        }
    }

    /** A new attempt begins: it has accepted nothing yet (what the last one registered stays). */
    void beginAttempt() {
        for (Entry e : entries.values()) {
            e.wanted = 0;
        }
    }

    /** The attempt decided every Reserve: hold no more than it accepted. */
    void attemptDecided() {
        for (Entry e : entries.values()) {
            if (e.registered > e.wanted) {
                e.route.promise(e.bucketNo, e.wanted - e.registered);
                e.registered = e.wanted;
            }
        }
    }

    /** The batch ended (after its commit, if it committed): release everything. */
    void releaseAll() {
        for (Entry e : entries.values()) {
            if (e.registered != 0) {
                e.route.promise(e.bucketNo, -e.registered);
                e.registered = 0;
            }
        }
        entries.clear();
    }

    /** Units held for bucket {@code k} (tests). */
    long registered(BucketKey k) {
        Entry e = entries.get(k);
        return e == null ? 0 : e.registered;
    }
}
