package io.lastunit.router.shed;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Caps the requests in flight per item through this router — a light waiting room in front
 * of a hot item. Over the cap the router answers RESOURCE_EXHAUSTED (ITEM_BUSY) at once.
 * Entries are removed when their count drops to zero, so the map holds only items with calls
 * in flight. Thread-safe.
 */
public final class InFlightLimiter {
    private final ConcurrentHashMap<ItemKey, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final int perItemMax;

    public InFlightLimiter(int perItemMax) {
        if (perItemMax < 1) {
            throw new IllegalArgumentException("perItemMax must be >= 1, got " + perItemMax);
        }
        this.perItemMax = perItemMax;
    }

    public boolean tryAcquire(ItemKey itemKey) {
        boolean[] ok = {false};
        inFlight.compute(itemKey, (k, n) -> {
            AtomicInteger c = n == null ? new AtomicInteger() : n;
            if (c.get() < perItemMax) {
                c.incrementAndGet();
                ok[0] = true;
            }
            return c.get() == 0 ? null : c;
        });
        return ok[0];
    }

    public void release(ItemKey itemKey) {
        inFlight.computeIfPresent(itemKey, (k, c) -> c.decrementAndGet() <= 0 ? null : c);
    }

    public int inFlight(ItemKey itemKey) {
        AtomicInteger c = inFlight.get(itemKey);
        return c == null ? 0 : c.get();
    }
}
