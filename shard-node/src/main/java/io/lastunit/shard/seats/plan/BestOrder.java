package io.lastunit.shard.seats.plan;

import java.util.Arrays;

/**
 * For BEST {@code count} in one section (or the whole map): the segments long enough to hold
 * {@code count} seats, by the lowest rank sum any {@code count} adjacent seats of theirs could have
 * (all free, any category), then by layout order. That bound only grows as seats are taken, so a
 * search in this order stops at the first segment whose bound exceeds the best placement found.
 *
 * <p>Built in O(n + S log S) for the n seats and S segments of the section; depends on the layout
 * alone, so {@link SeatDecider} builds one per (count, section) on first use and keeps it.
 * Immutable and thread-safe.
 */
final class BestOrder {
    private final int[] segments;
    private final long[] bounds;

    private BestOrder(int[] segments, long[] bounds) {
        this.segments = segments;
        this.bounds = bounds;
    }

    static BestOrder of(SeatLayout layout, int section, int count) {
        int segFrom = layout.sectionSegmentFrom(section);
        int segTo = layout.sectionSegmentTo(section);
        int n = 0;
        Integer[] order = new Integer[segTo - segFrom];
        long[] boundOf = new long[segTo - segFrom];
        for (int seg = segFrom; seg < segTo; seg++) {
            int from = layout.segmentStart(seg);
            int to = layout.segmentStart(seg + 1);
            if (to - from < count) {
                continue;
            }
            long bound = Long.MAX_VALUE;
            for (int w = from; w + count <= to; w++) {
                bound = Math.min(bound, layout.rankSum(w, w + count));
            }
            boundOf[seg - segFrom] = bound;
            order[n++] = seg;
        }
        Arrays.sort(order, 0, n, (a, b) -> {
            int c = Long.compare(boundOf[a - segFrom], boundOf[b - segFrom]);
            return c != 0 ? c : Integer.compare(a, b);
        });
        int[] segments = new int[n];
        long[] bounds = new long[n];
        for (int k = 0; k < n; k++) {
            segments[k] = order[k];
            bounds[k] = boundOf[order[k] - segFrom];
        }
        return new BestOrder(segments, bounds);
    }

    int size() {
        return segments.length;
    }

    int segment(int k) {
        return segments[k];
    }

    /** No {@code count} adjacent seats of {@link #segment}(k) sum to less rank than this. */
    long bound(int k) {
        return bounds[k];
    }
}
