package io.lastunit.shard.seats.plan;

/**
 * The runs of a filter's candidates in layout order, 64 seats at a time: for each word of seats,
 * the candidates are {@code free & mask}, a run starts at a candidate whose left neighbour is no
 * candidate or not adjacent, and ends at one whose right neighbour is no candidate or not adjacent
 * (adjacent = no segment end between, from the layout's words). One pass costs O(W + R) for W words
 * and R runs, with no per-seat work.
 *
 * <p>Reads a copy of the free set's words ({@link java.util.BitSet#toLongArray}): a scan sees the
 * free set as it was when the copy was taken. Single use; not thread-safe.
 */
final class RunScan {
    private final long[] free;
    private final long[] mask;
    private final long[] lastInSegment;
    private final int from;
    private final int to;
    private final int firstWord;
    private final int lastWord;
    private int word;
    private long current;
    private long after;
    private long starts;
    private long ends;
    private int base;
    private int runStart = -1;

    /** The runs inside {@code [from, to)}; {@code mask} null = every seat matches. */
    RunScan(long[] free, long[] mask, long[] lastInSegment, int from, int to) {
        this.free = free;
        this.mask = mask;
        this.lastInSegment = lastInSegment;
        this.from = from;
        this.to = to;
        this.firstWord = from >>> 6;
        this.lastWord = to > from ? (to - 1) >>> 6 : firstWord - 1;
        this.word = firstWord - 1;
        this.after = candidates(firstWord);
    }

    /** The next run as {@code start << 32 | end} (end exclusive), or -1 when there is none. */
    long next() {
        while (true) {
            if (runStart < 0) {
                if (starts == 0) {
                    if (!advance()) {
                        return -1;
                    }
                    continue;
                }
                runStart = base + Long.numberOfTrailingZeros(starts);
                starts &= starts - 1;
            }
            if (ends != 0) {
                int end = base + Long.numberOfTrailingZeros(ends) + 1;
                ends &= ends - 1;
                long run = ((long) runStart << 32) | end;
                runStart = -1;
                return run;
            }
            if (!advance()) {
                throw new IllegalStateException("run from " + runStart + " has no end before " + to);
            }
        }
    }

    static int start(long run) {
        return (int) (run >>> 32);
    }

    static int end(long run) {
        return (int) run;
    }

    private boolean advance() {
        while (++word <= lastWord) {
            long before = current;
            current = after;
            after = candidates(word + 1);
            if (current == 0) {
                continue;
            }
            long adjacent = ~word(lastInSegment, word);
            long fromLeft = ((current & adjacent) << 1)
                    | (word > 0 ? (before & ~word(lastInSegment, word - 1)) >>> 63 : 0);
            starts = current & ~fromLeft;
            ends = current & ~(adjacent & ((current >>> 1) | (after << 63)));
            base = word << 6;
            return true;
        }
        return false;
    }

    private long candidates(int w) {
        if (w < firstWord || w > lastWord) {
            return 0;
        }
        long c = word(free, w);
        if (mask != null) {
            c &= word(mask, w);
        }
        if (w == firstWord) {
            c &= -1L << (from & 63);
        }
        if (w == lastWord) {
            c &= -1L >>> (63 - ((to - 1) & 63));
        }
        return c;
    }

    private static long word(long[] words, int w) {
        return w < words.length ? words[w] : 0;
    }
}
