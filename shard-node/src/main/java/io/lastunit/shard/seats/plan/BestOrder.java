package io.lastunit.shard.seats.plan;

import java.util.Arrays;

/**
 * For BEST {@code count} under one filter (section and category, each or both "any"): the segments
 * that hold {@code count} adjacent matching seats, by the lowest rank sum such seats could have
 * (were they all free), then by layout order. That bound only grows as seats are taken, so a
 * search in this order stops at the first segment whose bound exceeds the best placement found.
 *
 * <p>Built in O(n + S log S) for the n seats and S segments of the section; depends on the layout
 * alone, so {@link SeatDecider} builds one per (count, section, category) on first use and keeps
 * it. Immutable and thread-safe.
 */
final class BestOrder {
    private final int[] segments;
    private final long[] bounds;

    private BestOrder(int[] segments, long[] bounds) {
        this.segments = segments;
        this.bounds = bounds;
    }

    static BestOrder of(SeatLayout layout, SeatFilter f, int count) {
        int segFrom = layout.sectionSegmentFrom(f.section);
        int segTo = layout.sectionSegmentTo(f.section);
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
            int matching = 0; // matching seats in a row ending at w + count - 1
            for (int i = from; i < to; i++) {
                matching = f.matches(i) ? matching + 1 : 0;
                if (matching >= count) {
                    bound = Math.min(bound, layout.rankSum(i + 1 - count, i + 1));
                }
            }
            if (bound == Long.MAX_VALUE) {
                continue;
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
