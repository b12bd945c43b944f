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
 * <p>Visits segments in {@link BestOrder}, evaluating every window of each (O(1) each, by the
 * layout's rank prefix sums), and stops at the first segment whose bound is above the best sum so
 * far (or equal to it when the best leaves no orphan and comes earlier in layout order): no later
 * segment can win. Typically a few segments; O(n) of the section at worst (every good seat taken).
 * Stateless.
 */
final class BestPlacement {
    private BestPlacement() {
    }

    /** The first seat of the BEST placement of {@code count}, or -1 when no run of {@code count} candidates is free. */
    static int pick(SeatLayout layout, BitSet free, SeatFilter f, int count, BestOrder order) {
        long bestSum = Long.MAX_VALUE;
        boolean bestOrphans = true;
        int best = -1;
        for (int k = 0; k < order.size(); k++) {
            int seg = order.segment(k);
            int from = layout.segmentStart(seg);
            int to = layout.segmentStart(seg + 1);
            long bound = order.bound(k);
            if (best >= 0 && (bound > bestSum || (bound == bestSum && !bestOrphans && from > best))) {
                break;
            }
            int s = f.nextCandidate(free, from);
            while (s >= 0 && s < to) {
                int e = f.runEnd(free, s);
                if (e - s >= count) {
                    int a = f.hasCategory() ? Math.max(from, free.previousClearBit(s) + 1) : s;
                    int b = f.hasCategory() ? Math.min(to, free.nextClearBit(e)) : e;
                    for (int w = s; w + count <= e; w++) {
                        long sum = layout.rankSum(w, w + count);
                        boolean orphans = w - a == 1 || b - (w + count) == 1;
                        if (best < 0 || sum < bestSum || (sum == bestSum
                                && (bestOrphans && !orphans || bestOrphans == orphans && w < best))) {
                            best = w;
                            bestSum = sum;
                            bestOrphans = orphans;
                        }
                    }
                }
                s = f.nextCandidate(free, e);
            }
        }
        return best;
    }
}
