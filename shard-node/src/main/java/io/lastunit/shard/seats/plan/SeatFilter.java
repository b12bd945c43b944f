package io.lastunit.shard.seats.plan;

import java.util.BitSet;

/**
 * The seats a filtered request may take, and the runs of them that are free. A <b>candidate</b>
 * is a free seat that matches: inside the section's index range (the whole map when the request
 * names no section) and, when the request names a category, of that category. A <b>run</b> is a
 * maximal stretch of candidates that are pairwise adjacent: consecutive indexes inside one segment.
 *
 * <p>A whole pass over the runs is a {@link RunScan}, a word at a time. Skipping ahead
 * ({@link #nextCandidate}) works on the words of the bit sets too, one step per 64 seats,
 * leapfrogging the free set and the category mask. Finding the edges of one run never looks past
 * its segment: {@link BitSet} has no bounded {@code nextClearBit}, and on a free map an unbounded
 * one walks to the end of the map for every run. So edges are found bit by bit for up to
 * {@link #BITWISE_MAX} seats, then through a slice of the segment.
 *
 * <p>Immutable; reads but never changes the free set it is given. Thread-safe as long as nobody
 * changes that free set meanwhile.
 */
final class SeatFilter {
    /** Seats tested one by one before a scan takes a slice of the segment. */
    static final int BITWISE_MAX = 64;

    /** Section number, -1 = any. */
    final int section;
    /** Category number, -1 = any. */
    final int category;
    /** The candidates lie in {@code [from, to)}: the section's seats, or all seats. */
    final int from;
    final int to;
    private final BitSet mask;
    private final BitSet lastInSegment;
    /** The same two as words, for {@link RunScan}; never mutated. */
    private final long[] maskWords;
    private final long[] lastInSegmentWords;

    SeatFilter(int section, int category, int from, int to, BitSet mask, long[] maskWords, BitSet lastInSegment,
            long[] lastInSegmentWords) {
        this.section = section;
        this.category = category;
        this.from = from;
        this.to = to;
        this.mask = mask;
        this.maskWords = maskWords;
        this.lastInSegment = lastInSegment;
        this.lastInSegmentWords = lastInSegmentWords;
    }

    /** The runs of candidates from {@code start} on, over {@code freeWords} ({@link BitSet#toLongArray}). */
    RunScan scan(long[] freeWords, int start) {
        return new RunScan(freeWords, maskWords, lastInSegmentWords, Math.max(start, from), to);
    }

    /** A category mask applies: a free seat next to a candidate may still be no candidate. */
    boolean hasCategory() {
        return mask != null;
    }

    /** The category mask over {@code [from, to)}, bit j for seat from + j; all set without a category. */
    BitSet maskSlice(int from, int to) {
        if (mask != null) {
            return mask.get(from, to);
        }
        BitSet all = new BitSet(to - from);
        all.set(0, to - from);
        return all;
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

    /** Index just past the run that goes on from candidate {@code start}. */
    int runEnd(BitSet free, int start) {
        int e = firstClear(free, start, segmentEnd(start));
        return mask == null ? e : firstClear(mask, start, e);
    }

    /** First index of the run that holds candidate {@code i}. */
    int runStart(BitSet free, int i) {
        int s = lastClear(free, segmentStart(i), i) + 1;
        return mask == null ? s : lastClear(mask, s, i) + 1;
    }

    /** Candidate {@code start} begins a run of exactly {@code length} candidates. */
    boolean isRun(BitSet free, int start, int length) {
        return isCandidate(free, start) && runStart(free, start) == start && runEnd(free, start) == start + length;
    }

    /** First index of the stretch of free seats (any category) that holds free seat {@code i}, within its segment. */
    int freeStart(BitSet free, int i) {
        return lastClear(free, segmentStart(i), i) + 1;
    }

    /** Index just past the free seats (any category) from {@code e} on, within the segment of seat {@code s < e}. */
    int freeEnd(BitSet free, int s, int e) {
        return firstClear(free, e, segmentEnd(s));
    }

    private int segmentStart(int i) {
        return lastInSegment.previousSetBit(i - 1) + 1;
    }

    private int segmentEnd(int i) {
        return lastInSegment.nextSetBit(i) + 1;
    }

    /** The first index in {@code [from, to)} whose bit is set, or {@code to}. */
    static int firstSet(BitSet bits, int from, int to) {
        int stop = Math.min(to, from + BITWISE_MAX);
        for (int i = from; i < stop; i++) {
            if (bits.get(i)) {
                return i;
            }
        }
        if (stop == to) {
            return to;
        }
        int j = bits.get(stop, to).nextSetBit(0);
        return j < 0 ? to : stop + j;
    }

    /** The first index in {@code [from, to)} whose bit is clear, or {@code to}. */
    static int firstClear(BitSet bits, int from, int to) {
        int stop = Math.min(to, from + BITWISE_MAX);
        for (int i = from; i < stop; i++) {
            if (!bits.get(i)) {
                return i;
            }
        }
        return stop == to ? to : stop + bits.get(stop, to).nextClearBit(0); // a slice is clear past its end
    }

    /** The last index in {@code [from, i]} whose bit is clear, or {@code from - 1}. */
    static int lastClear(BitSet bits, int from, int i) {
        int stop = Math.max(from, i - BITWISE_MAX + 1);
        for (int j = i; j >= stop; j--) {
            if (!bits.get(j)) {
                return j;
            }
        }
        return stop == from ? from - 1 : from + bits.get(from, stop).previousClearBit(stop - from - 1);
    }

    @Override
    public String toString() {
        return "SeatFilter[section=" + section + ", category=" + category + ", seats=[" + from + ", " + to + ")]";
    }
}
