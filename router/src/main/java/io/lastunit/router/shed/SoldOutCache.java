package io.lastunit.router.shed;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Remembers for a short time that an item was sold out in a region, so the router answers the
 * many late buyers itself, with no call to a shard. The time-to-live bounds the staleness: a
 * unit released after a sell-out is offered again at most {@code ttlNanos} later (sooner when
 * the Release passes through this router, which forgets the entry). Bounded by
 * {@code entriesMax}; when full, expired entries are dropped and, if that is not enough, the
 * new entry is simply not remembered (the shard answers instead). Thread-safe.
 */
public final class SoldOutCache {
    private final ConcurrentHashMap<String, Long> expiries = new ConcurrentHashMap<>();
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

    public static String key(String tenant, String item, String region) {
        return tenant + '\0' + item + '\0' + region;
    }

    public boolean isSoldOut(String key) {
        Long until = expiries.get(key);
        if (until == null) {
            return false;
        }
        if (until - nanoClock.getAsLong() > 0) {
            return true;
        }
        expiries.remove(key, until);
        return false;
    }

    public void markSoldOut(String key) {
        if (ttlNanos == 0) {
            return;
        }
        if (expiries.size() >= entriesMax) {
            long now = nanoClock.getAsLong();
            expiries.entrySet().removeIf(e -> e.getValue() - now <= 0);
            if (expiries.size() >= entriesMax) {
                return;
            }
        }
        expiries.put(key, nanoClock.getAsLong() + ttlNanos);
    }

    public void forget(String key) {
        expiries.remove(key);
    }

    public int size() {
        return expiries.size();
    }
}
