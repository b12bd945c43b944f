package io.lastunit.shard.seats.plan;

import java.util.Arrays;

/**
 * A binary min-heap of longs without boxing: the runs the ANY rule ranks are packed as
 * {@code length << 32 | start}, so the smallest long is the shortest run, earliest first.
 * Grows as needed; its user bounds what it pushes. Not thread-safe.
 */
final class LongHeap {
    private long[] keys;
    private int size;

    LongHeap(int capacity) {
        keys = new long[Math.max(4, capacity)];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Adds without ordering; call {@link #heapify} before the next peek or poll. */
    void append(long key) {
        grow();
        keys[size++] = key;
    }

    /** Orders what {@link #append} added, in O(size). */
    void heapify() {
        for (int i = size / 2 - 1; i >= 0; i--) {
            down(i);
        }
    }

    void push(long key) {
        grow();
        keys[size] = key;
        up(size++);
    }

    long peek() {
        empty();
        return keys[0];
    }

    long poll() {
        empty();
        long top = keys[0];
        keys[0] = keys[--size];
        down(0);
        return top;
    }

    /** The keys, ascending (destroys nothing: sorts a copy). */
    long[] sorted() {
        long[] out = Arrays.copyOf(keys, size);
        Arrays.sort(out);
        return out;
    }

    private void empty() {
        if (size == 0) {
            throw new IllegalStateException("the heap is empty");
        }
    }

    private void grow() {
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, keys.length * 2);
        }
    }

    private void up(int i) {
        long k = keys[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (keys[parent] <= k) {
                break;
            }
            keys[i] = keys[parent];
            i = parent;
        }
        keys[i] = k;
    }

    private void down(int i) {
        long k = keys[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            if (child + 1 < size && keys[child + 1] < keys[child]) {
                child++;
            }
            if (keys[child] >= k) {
                break;
            }
            keys[i] = keys[child];
            i = child;
        }
        keys[i] = k;
    }
}
