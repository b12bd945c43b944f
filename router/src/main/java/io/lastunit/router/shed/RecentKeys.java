package io.lastunit.router.shed;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Idempotency keys this router recently sent to a shard, so that a retry of such a key skips
 * the {@link SoldOutCache} and reaches the shard, which returns the key's hold. Without it, a
 * buyer whose Reserve timed out after it was placed would be told SOLD_OUT on retry while its
 * unit sits held. A retry through another router within the sold-out TTL can still get the
 * cached answer: the cache is per router (docs/routing.md). Bounded by {@code keysMax}; when
 * full, expired keys are dropped and, if that is not enough, the oldest half is cleared (a
 * forgotten key only costs the cache hit, never correctness of stock). Thread-safe.
 */
public final class RecentKeys {
    private final ConcurrentHashMap<String, Long> expiries = new ConcurrentHashMap<>();
    private final long ttlNanos;
    private final int keysMax;
    private final LongSupplier nanoClock;

    public RecentKeys(long ttlNanos, int keysMax, LongSupplier nanoClock) {
        if (ttlNanos <= 0 || keysMax < 1) {
            throw new IllegalArgumentException("recent keys need ttl > 0 and keysMax >= 1");
        }
        this.ttlNanos = ttlNanos;
        this.keysMax = keysMax;
        this.nanoClock = nanoClock;
    }

    public void remember(String tenant, String key) {
        long now = nanoClock.getAsLong();
        if (expiries.size() >= keysMax) {
            expiries.entrySet().removeIf(e -> e.getValue() - now <= 0);
            if (expiries.size() >= keysMax) {
                long cutoff = now + ttlNanos / 2;
                expiries.entrySet().removeIf(e -> e.getValue() - cutoff <= 0);
            }
            if (expiries.size() >= keysMax) {
                expiries.clear();
            }
        }
        expiries.put(tenant + '\0' + key, now + ttlNanos);
    }

    public boolean seen(String tenant, String key) {
        Long until = expiries.get(tenant + '\0' + key);
        return until != null && until - nanoClock.getAsLong() > 0;
    }

    public int size() {
        return expiries.size();
    }
}
