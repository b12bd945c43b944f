package io.lastunit.shard.seats.plan;

import java.util.BitSet;

/**
 * The runs of one filter's candidates, shortest first (ties: earliest), kept current through a
 * batch so that each ANY after the first costs O(k log R) instead of a scan. Built by one scan,
 * O(W + R). Takes the same seats as {@link SmallestRuns}.
 *
 * <p>Keys are checked when they surface, not removed when they go stale: a grant pushes the runs
 * it leaves beside each seat it takes, and a key that no longer describes a run (its seats were
 * taken, or it was split) is dropped when polled. A key names an exact extent and free seats never
 * come back within a batch, so a key that checks out is a current run. Each grant pushes at most
 * two keys per seat, so the heap stays within R + 2 × (seats granted in the batch).
 *
 * <p>Hazard: valid only while the free set changes through {@link #cleared} alone; a seat freed
 * behind its back is never offered. Lives for one batch. Not thread-safe.
 */
final class RunQueue {
    private final SeatFilter filter;
    private final BitSet free;
    private final LongHeap runs;
    private long candidates;

    RunQueue(SeatFilter filter, BitSet free) {
        this.filter = filter;
        this.free = free;
        this.runs = new LongHeap(64);
        RunScan scan = filter.scan(free.toLongArray(), filter.from);
        for (long run = scan.next(); run >= 0; run = scan.next()) {
            int s = RunScan.start(run);
            int e = RunScan.end(run);
            runs.append(SmallestRuns.key(e - s, s));
            candidates += e - s;
        }
        runs.heapify();
    }

    /** The seats ANY {@code count} takes (in the order taken), or null when fewer are free. Changes nothing. */
    int[] pick(int count) {
        if (candidates < count) {
            return null;
        }
        int[] out = new int[count];
        int k = 0;
        long last = -1;
        while (k < count) {
            if (runs.isEmpty()) {
                throw new IllegalStateException("run queue lost runs: " + filter + ", candidates=" + candidates
                        + ", count=" + count + ", found=" + k);
            }
            long key = runs.peek();
            int start = SmallestRuns.start(key);
            int length = SmallestRuns.length(key);
            if (key == last) {
                runs.poll(); // a second copy of the run just taken
                continue;
            }
            if (!filter.isRun(free, start, length)) {
                runs.poll();
                continue;
            }
            int take = Math.min(length, count - k);
            for (int s = start; s < start + take; s++) {
                out[k++] = s;
            }
            if (take == length) {
                runs.poll();
                last = key;
            }
        }
        return out;
    }

    /** These seats have just been cleared in the free set: push the runs left beside the ones that were candidates. */
    void cleared(int[] seats) {
        for (int g : seats) {
            if (!filter.matches(g)) {
                continue;
            }
            candidates--;
            if (g > 0 && filter.adjacentToNext(g - 1) && filter.isCandidate(free, g - 1)) {
                int a = filter.runStart(free, g - 1);
                runs.push(SmallestRuns.key(g - a, a));
            }
            if (filter.adjacentToNext(g) && filter.isCandidate(free, g + 1)) {
                int e = filter.runEnd(free, g + 1);
                runs.push(SmallestRuns.key(e - g - 1, g + 1));
            }
        }
        if (candidates < 0) {
            throw new IllegalStateException("candidates=" + candidates + " for " + filter
                    + ": a seat was granted twice");
        }
    }
}
