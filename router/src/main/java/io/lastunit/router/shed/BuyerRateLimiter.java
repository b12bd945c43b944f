package io.lastunit.router.shed;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * A token bucket per (tenant, buyer): {@code ratePerSecond} refill, {@code burst} capacity. A
 * buyer over its rate is refused at the router (RESOURCE_EXHAUSTED, RATE_LIMITED) before any
 * shard sees the request. Bounded by {@code buyersMax}: when full, buckets that have refilled
 * completely (idle buyers) are dropped; if still full, the request is allowed untracked rather
 * than refused (a limiter must not turn into an outage). Thread-safe.
 */
public final class BuyerRateLimiter {
    private static final class Bucket {
        double tokens;
        long lastNanos;

        Bucket(double tokens, long lastNanos) {
            this.tokens = tokens;
            this.lastNanos = lastNanos;
        }
    }

    private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
    private final double ratePerNano;
    private final double burst;
    private final int buyersMax;
    private final LongSupplier nanoClock;

    public BuyerRateLimiter(double ratePerSecond, int burst, int buyersMax, LongSupplier nanoClock) {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond) || burst < 1 || buyersMax < 1) {
            throw new IllegalArgumentException("rate limiter needs ratePerSecond > 0, burst >= 1, buyersMax >= 1; got "
                    + ratePerSecond + ", " + burst + ", " + buyersMax);
        }
        this.ratePerNano = ratePerSecond / 1e9;
        this.burst = burst;
        this.buyersMax = buyersMax;
        this.nanoClock = nanoClock;
    }

    public boolean tryAcquire(String tenant, String buyer) {
        long now = nanoClock.getAsLong();
        String key = tenant + '\0' + buyer;
        Bucket b = buckets.get(key);
        if (b == null) {
            if (buckets.size() >= buyersMax && !evictIdle(now)) {
                return true;
            }
            b = buckets.computeIfAbsent(key, k -> new Bucket(burst, now));
        }
        synchronized (b) {
            b.tokens = Math.min(burst, b.tokens + (now - b.lastNanos) * ratePerNano);
            b.lastNanos = now;
            // The epsilon absorbs floating-point drift of many small refills (ten 10 ms steps at 10/s = 1 token).
            if (b.tokens >= 1 - 1e-12) {
                b.tokens = Math.max(0, b.tokens - 1);
                return true;
            }
            return false;
        }
    }

    private boolean evictIdle(long now) {
        buckets.entrySet().removeIf(e -> {
            Bucket b = e.getValue();
            synchronized (b) {
                return b.tokens + (now - b.lastNanos) * ratePerNano >= burst;
            }
        });
        return buckets.size() < buyersMax;
    }

    public int tracked() {
        return buckets.size();
    }
}
