package io.lastunit.shard.seats.plan;

import java.util.BitSet;

/**
 * The ANY rule by one scan, for a single decision: the runs of candidates ranked by (length,
 * start), seats taken run by run, each run from its first seat, until there are enough. Keeps
 * only the shortest runs that cover the count (a max-heap of at most {@code count} runs), so memory
 * is O(count) however fragmented the map is.
 *
 * <p>Cost: O(W + R log count) for the W words and R runs of the filter's range (a {@link RunScan}
 * over a copy of the free set's words); a run that ranks after all those kept costs no heap work,
 * and the scan stops once {@code count} single-seat runs are in hand, since nothing can rank
 * before them. Stateless.
 */
final class SmallestRuns {
    private SmallestRuns() {
    }

    /** The seats ANY {@code count} takes (in the order taken), or null when fewer candidates are free. */
    static int[] pick(BitSet free, SeatFilter f, int count) {
        LongHeap kept = new LongHeap(Math.min(count, 64) + 1); // negated keys: the top is the worst kept run
        long total = 0;
        RunScan scan = f.scan(free.toLongArray(), f.from);
        for (long run = scan.next(); run >= 0; run = scan.next()) {
            int s = RunScan.start(run);
            int e = RunScan.end(run);
            if (total >= count && key(e - s, s) > -kept.peek()) {
                continue; // ranks after every run kept, which already cover count
            }
            kept.push(-key(e - s, s));
            total += e - s;
            while (total - length(-kept.peek()) >= count) {
                total -= length(-kept.poll());
            }
            if (total >= count && length(-kept.peek()) == 1) {
                break; // count single seats, earliest first: no later run ranks before any of them
            }
        }
        if (total < count) {
            return null;
        }
        long[] runs = kept.sorted(); // negated: the best run last
        int[] out = new int[count];
        int k = 0;
        for (int r = runs.length - 1; r >= 0 && k < count; r--) {
            long run = -runs[r];
            for (int s = start(run), e = s + length(run); s < e && k < count; s++) {
                out[k++] = s;
            }
        }
        return out;
    }

    /** A run packed so that the smaller key ranks first: shorter, then earlier. */
    static long key(int length, int start) {
        return ((long) length << 32) | start;
    }

    static int length(long key) {
        return (int) (key >>> 32);
    }

    static int start(long key) {
        return (int) key;
    }
}
