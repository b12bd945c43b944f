package io.lastunit.common.keys;

import java.util.Arrays;

/**
 * A set of non-zero longs in one {@code long[]}: open addressing, linear probing, no objects
 * per element, no removal. Eight to sixteen bytes per element, and nothing for the garbage
 * collector to trace or copy but the one array. Grows by doubling at half full.
 *
 * <p>Not thread-safe: the lane owns its sets; the router stripes its own under locks.
 */
public final class LongSet {
    private static final int CAPACITY_MIN = 16;
    /** The largest table a Java array allows at a power of two. */
    private static final int CAPACITY_MAX = 1 << 30;

    private long[] table;
    private int size;

    public LongSet() {
        this(CAPACITY_MIN / 2);
    }

    /** @param expected elements it should hold without growing */
    public LongSet(int expected) {
        if (expected < 0) {
            throw new IllegalArgumentException("expected must be >= 0: " + expected);
        }
        table = new long[capacityFor(expected)];
    }

    private static int capacityFor(int expected) {
        long want = Math.max(CAPACITY_MIN, 2L * expected);
        if (want > CAPACITY_MAX) {
            throw new IllegalArgumentException("too many elements for one LongSet: " + expected);
        }
        return Integer.highestOneBit((int) want - 1) << 1;
    }

    /** Adds {@code v} (non-zero); true when it was not there. */
    public boolean add(long v) {
        if (v == 0) {
            throw new IllegalArgumentException("0 cannot be stored in a LongSet");
        }
        if (2 * (size + 1) > table.length) {
            grow();
        }
        long[] t = table;
        int mask = t.length - 1;
        for (int i = slot(v, mask); ; i = (i + 1) & mask) {
            long e = t[i];
            if (e == 0) {
                t[i] = v;
                size++;
                return true;
            }
            if (e == v) {
                return false;
            }
        }
    }

    public boolean contains(long v) {
        if (v == 0) {
            return false;
        }
        long[] t = table;
        int mask = t.length - 1;
        for (int i = slot(v, mask); ; i = (i + 1) & mask) {
            long e = t[i];
            if (e == v) {
                return true;
            }
            if (e == 0) {
                return false;
            }
        }
    }

    public int size() {
        return size;
    }

    public void clear() {
        Arrays.fill(table, 0);
        size = 0;
    }

    /** Bytes held by the table. */
    public long footprintBytes() {
        return 8L * table.length;
    }

    private static int slot(long v, int mask) {
        // The values are fingerprints already mixed; fold the high half in for other inputs.
        return (int) (v ^ (v >>> 32)) & mask;
    }

    private void grow() {
        if (table.length >= CAPACITY_MAX) {
            throw new IllegalStateException("LongSet is full at " + size + " elements");
        }
        long[] old = table;
        long[] t = new long[old.length << 1];
        int mask = t.length - 1;
        for (long v : old) {
            if (v != 0) {
                int i = slot(v, mask);
                while (t[i] != 0) {
                    i = (i + 1) & mask;
                }
                t[i] = v;
            }
        }
        table = t;
    }
}
