package io.lastunit.shard.seats.plan;

import java.util.BitSet;

/**
 * The BEST rule: among all runs of {@code count} candidates (free, matching, adjacent), the one with
 * the lowest sum of ranks; among equal sums one that leaves no new orphan; then the earliest in
 * layout order.
 *
 * <p>An <b>orphan</b> is a free seat (of any category) whose neighbours within its segment are both
 * not free or the segment's edge. Placing {@code [w, w + count)} inside the free stretch
 * {@code [a, b)} of its segment can only orphan the seats just outside it, and they were not
 * orphans before (each had a free neighbour inside the placement): it orphans one iff
 * {@code w - a == 1} or {@code b - (w + count) == 1}.
 *
 * <p>Two searches, one answer. While good seats are free, segments are visited in
 * {@link BestOrder}, each through a slice of the free set bounded by the segment, every window
 * evaluated in O(1) by the layout's rank prefix sums; the search stops at the first segment whose
 * bound is above the best sum so far (or equal to it when the best leaves no orphan and comes
 * earlier): no later segment can win. That is a few segments typically. When the good seats are
 * gone, many segments pass that test: once the search has visited more than {@link #VISITS_MIN}
 * segments and more seats than the map has free, one scan over the free runs in layout order finds
 * the same placement for less, in O(W + R + windows). The switch sets speed only, never the
 * answer. Stateless.
 */
final class BestPlacement {
    /** Segments always visited in bound order before a scan in layout order is considered. */
    static final int VISITS_MIN = 32;

    private BestPlacement() {
    }

    /**
     * The first seat of the BEST placement of {@code count}, or -1 when no run of {@code count}
     * candidates is free. No window of {@code count} candidates may begin before {@code from}.
     * {@code known}, in a batch, holds per position of {@code order} a lower bound of that segment's
     * best sum found by an earlier search of the batch (0 = none yet; sums only grow while seats
     * are taken), or is null.
     * {@code visitsMin} is {@link #VISITS_MIN} but in tests, where -1 makes it scan at once.
     */
    static int pick(SeatLayout layout, BitSet free, SeatFilter f, int count, BestOrder order, int from,
            long[] known, int visitsMin) {
        if (visitsMin < 0) {
            return scan(layout, free, f, count, from);
        }
        Best best = new Best();
        int visits = 0;
        long visited = 0;
        long freeSeats = -1;
        for (int k = 0; k < order.size(); k++) {
            int seg = order.segment(k);
            int segFrom = layout.segmentStart(seg);
            int segTo = layout.segmentStart(seg + 1);
            if (best.beatsEverything(order.bound(k), segFrom)) {
                break;
            }
            if (segTo <= from || known != null && (known[k] == Long.MAX_VALUE || best.beats(known[k]))) {
                continue;
            }
            visited += segTo - segFrom;
            if (++visits > visitsMin) {
                if (freeSeats < 0) {
                    freeSeats = free.cardinality();
                }
                if (visited > freeSeats) {
                    return scan(layout, free, f, count, from);
                }
            }
            long lowest = visit(layout, free, f, count, segFrom, segTo, best);
            if (known != null) {
                known[k] = lowest;
            }
        }
        return best.start;
    }

    /**
     * Every window of one segment, through slices of the free set and mask that stop at its edges.
     * Returns the lowest sum among them, or Long.MAX_VALUE when the segment has none.
     */
    private static long visit(SeatLayout layout, BitSet free, SeatFilter f, int count, int segFrom, int segTo,
            Best best) {
        if (SeatFilter.firstSet(free, segFrom, segTo) > segTo - count) {
            return Long.MAX_VALUE; // no free seat early enough for a window: no slice needed
        }
        BitSet open = free.get(segFrom, segTo); // bit j: seat segFrom + j
        if (open.cardinality() < count) {
            return Long.MAX_VALUE;
        }
        BitSet candidates = open;
        if (f.hasCategory()) {
            candidates = (BitSet) open.clone();
            candidates.and(f.maskSlice(segFrom, segTo));
        }
        long lowest = Long.MAX_VALUE;
        for (int s = candidates.nextSetBit(0); s >= 0; ) {
            int e = candidates.nextClearBit(s);
            if (e - s >= count) {
                int a = open.previousClearBit(s) + 1;
                int b = open.nextClearBit(e);
                long sum = windows(layout, count, segFrom + a, segFrom + s, segFrom + e, segFrom + b, best);
                lowest = Math.min(lowest, sum);
            }
            s = candidates.nextSetBit(e);
        }
        return lowest;
    }

    /** One pass over the runs in layout order, from {@code from}. */
    private static int scan(SeatLayout layout, BitSet free, SeatFilter f, int count, int from) {
        Best best = new Best();
        RunScan scan = f.scan(free.toLongArray(), from);
        for (long run = scan.next(); run >= 0; run = scan.next()) {
            int s = RunScan.start(run);
            int e = RunScan.end(run);
            if (e - s >= count) {
                windows(layout, count, f.freeStart(free, s), s, e, f.freeEnd(free, s, e), best);
            }
        }
        return best.start;
    }

    /**
     * The windows of the run {@code [s, e)} of candidates inside the free stretch {@code [a, b)} of
     * its segment, offered to {@code best}; returns their lowest sum.
     */
    private static long windows(SeatLayout layout, int count, int a, int s, int e, int b, Best best) {
        long lowest = Long.MAX_VALUE;
        for (int w = s; w + count <= e; w++) {
            long sum = layout.rankSum(w, w + count);
            lowest = Math.min(lowest, sum);
            best.offer(sum, w - a == 1 || b - (w + count) == 1, w);
        }
        return lowest;
    }

    /** The best placement so far: lowest sum, then no new orphan, then earliest. */
    private static final class Best {
        long sum;
        boolean orphans;
        int start = -1;

        void offer(long sum, boolean orphans, int start) {
            if (this.start < 0 || sum < this.sum
                    || sum == this.sum && (this.orphans && !orphans || this.orphans == orphans && start < this.start)) {
                this.sum = sum;
                this.orphans = orphans;
                this.start = start;
            }
        }

        /** A segment whose sums are all at least {@code lowest} cannot win. */
        boolean beats(long lowest) {
            return start >= 0 && lowest > sum;
        }

        /** No placement in a segment from {@code segFrom} with this bound (nor any after it in bound order) can win. */
        boolean beatsEverything(long bound, int segFrom) {
            return start >= 0 && (bound > sum || bound == sum && !orphans && segFrom > start);
        }
    }
}
