package io.lastunit.router.shed;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Remembers for a short time that an item was sold out in a region, so the router answers the
 * many late buyers itself, with no call to a shard.
 *
 * <p><b>Fresh, then one probe.</b> For {@code ttlNanos} after a SOLD_OUT is marked, every Reserve
 * of the key is answered SOLD_OUT here ({@link Verdict#SOLD_OUT}). After that, the first Reserve
 * to ask is sent to the shard as the key's <i>probe</i> ({@link Verdict#PROBE}), and the others
 * are still answered SOLD_OUT while it is out, for at most one more {@code ttlNanos}. The probe's
 * answer decides: a final SOLD_OUT marks the key again ({@link #markSoldOut}); anything else
 * ({@link #forget}) lets every Reserve through to the shard. Without the probe, every Reserve that
 * arrived between the expiry and the first answer went to the shard: in a sale answered by 512
 * callers, hundreds per expiry, and in a sale over several regions each of them also asked the
 * balancer for stock.
 *
 * <p><b>Staleness.</b> An answer given here comes from a SOLD_OUT at most {@code 2 × ttlNanos}
 * old: a unit released after a sell-out is offered again at most that much later (sooner when
 * the Release passes through this router, which forgets the entry). A probe that does not come
 * back within the second {@code ttlNanos} leaves the key to the shard again
 * ({@link Verdict#ASK_SHARD}).
 *
 * <p>Bounded by {@code entriesMax}; when full, expired entries are dropped and, if that is not
 * enough, the new entry is simply not remembered (the shard answers instead). Thread-safe: the
 * probe is handed out once per expiry by a compare-and-set on the entry.
 */
public final class SoldOutCache {

    /** What the router does with a Reserve, by its key's entry. */
    public enum Verdict {
        /** No entry, or its answer is too old: send the Reserve to the shard. */
        ASK_SHARD,
        /** Answer SOLD_OUT here, without a call. */
        SOLD_OUT,
        /**
         * The entry has expired and this Reserve is its probe: send it to the shard, then either
         * {@link #markSoldOut} (a final SOLD_OUT) or {@link #forget} the key.
         */
        PROBE
    }

    /** Sold out until {@code until}; {@code probing} once a probe is out for this expiry. */
    private record Entry(long until, boolean probing) {
    }

    private final ConcurrentHashMap<ItemKey, Entry> entries = new ConcurrentHashMap<>();
    private final long ttlNanos;
    private final int entriesMax;
    private final LongSupplier nanoClock;

    public SoldOutCache(long ttlNanos, int entriesMax, LongSupplier nanoClock) {
        if (ttlNanos < 0 || entriesMax < 1) {
            throw new IllegalArgumentException("sold-out cache needs ttl >= 0 and entriesMax >= 1");
        }
        this.ttlNanos = ttlNanos;
        this.entriesMax = entriesMax;
        this.nanoClock = nanoClock;
    }

    public static ItemKey key(String tenant, String item, String region) {
        return new ItemKey(tenant, item, region);
    }

    /** What to do with a Reserve of {@code key} now (see the class comment). */
    public Verdict check(ItemKey key) {
        while (true) {
            Entry e = entries.get(key);
            if (e == null) {
                return Verdict.ASK_SHARD;
            }
            long now = nanoClock.getAsLong();
            if (e.until - now > 0) {
                return Verdict.SOLD_OUT;
            }
            if (now - e.until >= ttlNanos) {
                entries.remove(key, e); // too old to answer from, probe or not
                return Verdict.ASK_SHARD;
            }
            if (e.probing) {
                return Verdict.SOLD_OUT;
            }
            if (entries.replace(key, e, new Entry(e.until, true))) {
                return Verdict.PROBE;
            }
            // Another caller changed the entry (took the probe, marked or forgot it): look again.
        }
    }

    /**
     * Whether a Reserve of {@code key} would be answered SOLD_OUT here now, without taking the
     * probe ({@link #check} is what the router asks). For tests.
     */
    boolean isSoldOut(ItemKey key) {
        Entry e = entries.get(key);
        if (e == null) {
            return false;
        }
        long now = nanoClock.getAsLong();
        return e.until - now > 0 || (e.probing && now - e.until < ttlNanos);
    }

    public void markSoldOut(ItemKey key) {
        if (ttlNanos == 0) {
            return;
        }
        if (entries.size() >= entriesMax && !entries.containsKey(key)) {
            long now = nanoClock.getAsLong();
            entries.entrySet().removeIf(x -> x.getValue().until - now <= 0);
            if (entries.size() >= entriesMax) {
                return;
            }
        }
        entries.put(key, new Entry(nanoClock.getAsLong() + ttlNanos, false));
    }

    public void forget(ItemKey key) {
        entries.remove(key);
    }

    public int size() {
        return entries.size();
    }
}
