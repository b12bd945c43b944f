package io.lastunit.shard.seats.plan;

import java.util.BitSet;

/**
 * The seats a filtered request may take, and the runs of them that are free. A <b>candidate</b>
 * is a free seat that matches: inside the section's index range (the whole map when the request
 * names no section) and, when the request names a category, of that category. A <b>run</b> is a
 * maximal stretch of candidates that are pairwise adjacent: consecutive indexes inside one segment.
 *
 * <p>Every method works on the words of the bit sets ({@link BitSet#nextSetBit},
 * {@link BitSet#nextClearBit}), so skipping taken seats costs one step per 64 of them; a category
 * filter leapfrogs the free set and the category mask.
 *
 * <p>Immutable; reads but never changes the free set it is given. Thread-safe as long as nobody
 * changes that free set meanwhile.
 */
final class SeatFilter {
    /** Section number, -1 = any. */
    final int section;
    /** Category number, -1 = any. */
    final int category;
    /** The candidates lie in {@code [from, to)}: the section's seats, or all seats. */
    final int from;
    final int to;
    private final BitSet mask;
    private final BitSet lastInSegment;

    SeatFilter(int section, int category, int from, int to, BitSet mask, BitSet lastInSegment) {
        this.section = section;
        this.category = category;
        this.from = from;
        this.to = to;
        this.mask = mask;
        this.lastInSegment = lastInSegment;
    }

    /** A category mask applies: a free seat next to a candidate may still be no candidate. */
    boolean hasCategory() {
        return mask != null;
    }

    /** Seat {@code i} and seat {@code i + 1} are adjacent: same segment. */
    boolean adjacentToNext(int i) {
        return !lastInSegment.get(i);
    }

    boolean matches(int i) {
        return i >= from && i < to && (mask == null || mask.get(i));
    }

    boolean isCandidate(BitSet free, int i) {
        return free.get(i) && matches(i);
    }

    /** The first candidate at or after {@code i}, or -1. */
    int nextCandidate(BitSet free, int i) {
        int s = free.nextSetBit(Math.max(i, from));
        while (s >= 0 && s < to) {
            if (mask == null) {
                return s;
            }
            int m = mask.nextSetBit(s);
            if (m < 0 || m >= to) {
                return -1;
            }
            if (m == s) {
                return s;
            }
            s = free.nextSetBit(m);
        }
        return -1;
    }

    /** Index just past the run that goes on from candidate {@code start}. Never past the segment or {@link #to}. */
    int runEnd(BitSet free, int start) {
        int e = Math.min(free.nextClearBit(start), lastInSegment.nextSetBit(start) + 1);
        if (mask != null) {
            e = Math.min(e, mask.nextClearBit(start));
        }
        return Math.min(e, to);
    }

    /** First index of the run that holds candidate {@code i}. */
    int runStart(BitSet free, int i) {
        int s = Math.max(free.previousClearBit(i) + 1, lastInSegment.previousSetBit(i - 1) + 1);
        if (mask != null) {
            s = Math.max(s, mask.previousClearBit(i) + 1);
        }
        return Math.max(s, from);
    }

    /** Candidate {@code start} begins a run of exactly {@code length} candidates. */
    boolean isRun(BitSet free, int start, int length) {
        return isCandidate(free, start) && runStart(free, start) == start && runEnd(free, start) == start + length;
    }

    @Override
    public String toString() {
        return "SeatFilter[section=" + section + ", category=" + category + ", seats=[" + from + ", " + to + ")]";
    }
}
