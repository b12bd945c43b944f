package io.lastunit.balancer.plan;

import io.lastunit.common.invariant.ItemKey;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Demand per item and region: the rate of the shard's monotonic {@code reserves} counter over a
 * sliding window, from the samples the balancing loop takes each interval. Time comes in as
 * nanoTime readings from the caller (no clock of its own).
 *
 * <p>Bounds: at most {@code samplesMax} samples per region of an item, and only items seen in the
 * latest poll ({@link #retain}). A counter that goes down (the shard node restarted) or comes from
 * another shard restarts that region's series.
 *
 * <p>Thread-safe (synchronized): the loop writes, pulls read.
 */
public final class DemandTracker {
    private record Key(ItemKey item, String region) {
    }

    private static final class Series {
        final String shardId;
        final ArrayDeque<long[]> samples = new ArrayDeque<>(); // {nanos, reserves}

        Series(String shardId) {
            this.shardId = shardId;
        }
    }

    private final long windowNanos;
    private final int samplesMax;
    private final Map<Key, Series> series = new HashMap<>();

    public DemandTracker(Duration window, int samplesMax) {
        if (window.isNegative() || window.isZero() || samplesMax < 2) {
            throw new IllegalArgumentException("window=" + window + " must be positive and samplesMax=" + samplesMax
                    + " at least 2");
        }
        this.windowNanos = window.toNanos();
        this.samplesMax = samplesMax;
    }

    /** Records each region's reserves counter of the item as read at {@code nowNanos}. */
    public synchronized void observe(ItemView v, long nowNanos) {
        for (RegionLevel r : v.regions()) {
            Key k = new Key(v.item(), r.region());
            Series s = series.get(k);
            if (s == null || !s.shardId.equals(r.shardId())
                    || (!s.samples.isEmpty() && s.samples.peekLast()[1] > r.reserves())) {
                s = new Series(r.shardId());
                series.put(k, s);
            }
            s.samples.addLast(new long[] {nowNanos, r.reserves()});
            while (s.samples.size() > samplesMax
                    || (s.samples.size() > 2 && nowNanos - s.samples.peekFirst()[0] > windowNanos)) {
                s.samples.removeFirst();
            }
        }
    }

    /** Reserves per second by region over the window; regions with fewer than two samples are absent. */
    public synchronized Map<String, Double> rates(ItemKey item) {
        Map<String, Double> out = new TreeMap<>();
        series.forEach((k, s) -> {
            if (k.item().equals(item) && s.samples.size() >= 2) {
                long[] first = s.samples.peekFirst();
                long[] last = s.samples.peekLast();
                long dt = last[0] - first[0];
                out.put(k.region(), dt <= 0 ? 0.0 : (last[1] - first[1]) * 1e9 / dt);
            }
        });
        return out;
    }

    /** Forgets every item not in {@code items} (gone, moved, or no longer multi-region). */
    public synchronized void retain(Set<ItemKey> items) {
        series.keySet().removeIf(k -> !items.contains(k.item()));
    }

    /** Item regions tracked now. */
    public synchronized int tracked() {
        return series.size();
    }
}
