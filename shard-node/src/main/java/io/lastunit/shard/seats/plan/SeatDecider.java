package io.lastunit.shard.seats.plan;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which seats a seat-reservation request gets, given which seats of a {@link SeatLayout} are free.
 * Pure: no I/O, no clock; the same layout, free set and requests always give the same decisions.
 * The free set is a {@link BitSet} over layout indexes (bit i set = seat i is free to take); a
 * grant clears its seats there, and nothing else ever changes it.
 *
 * <p>A <b>candidate</b> is a free seat matching the request's filters (in its section when it names
 * one; of its category when it names one, where {@code ""} is the category of seats without one).
 * A <b>run</b> is a maximal stretch of candidates that are pairwise adjacent (same segment, see
 * {@link SeatLayout}), so a run never crosses a row, an aisle or a seat that is not a candidate.
 * The rules, the product's promises:
 * <ul>
 *   <li><b>SPECIFIC</b>: every listed seat free → Granted, all of them. Otherwise Taken, listing
 *       exactly the listed seats that are not free, and nothing changes. Filters are ignored.
 *   <li><b>ANY N</b>: N candidates, not necessarily together; fewer than N → SoldOut. Runs are
 *       ranked shortest first, then by layout order, and the seats taken run by run, each run from
 *       its first seat, until there are N: single orphan seats and short gaps go before a long run
 *       is broken, so later ADJACENT and BEST buyers still find runs (the last run used is cut
 *       from its start, leaving one shorter run).
 *   <li><b>ADJACENT N</b>: the first N adjacent candidates in layout order (the first seat of the
 *       earliest run of at least N); none → SoldOut.
 *   <li><b>BEST N</b>: among all placements of N adjacent candidates, the lowest sum of ranks; among
 *       equal sums one that leaves no new orphan (a free seat of any category whose neighbours
 *       within its segment are both not free, or the segment's edge, after the placement, and
 *       was not one before); then the earliest in layout order. None → SoldOut.
 * </ul>
 * ADJACENT and BEST N longer than {@link SeatLayout#longestRun(String, String)} are SoldOut at
 * once; refusing them as bad input is the caller's job. An unknown section or category, a SPECIFIC
 * seat outside the layout and a free bit past the layout are refused (IllegalArgumentException);
 * a grant that breaks its rule (seats not free, not distinct, not matching, not adjacent) throws
 * IllegalStateException before the free set is touched: crashing a lane beats overselling.
 *
 * <p><b>Cost</b>, for a map of n seats, W = n/64 words, S segments and R runs of the filter's
 * candidates (the edges of a run are always found within its segment):
 * <ul>
 *   <li>SPECIFIC O(N log N).
 *   <li>ANY: one scan a word at a time ({@link RunScan} over a copy of the free set's words),
 *       O(W + R log N), stopping early at N single seats. In {@link #decideAll}: O(W + R) for the
 *       first ANY of a filter in the batch, then O((k + d) log R) each (k runs taken, d stale
 *       entries dropped).
 *   <li>ADJACENT: O(words skipped + runs before the first fit). In {@link #decideAll} each
 *       (filter, N) resumes where the previous one found its fit, and stays SoldOut once it found
 *       none.
 *   <li>BEST: a {@link BestOrder} per (N, section, category), built once per decider in
 *       O(n + S log S); then segments best bound first, stopping when no later one can win: a few
 *       segments while good seats are free. Once a search has visited more seats than are free,
 *       one scan in layout order, O(W + R + windows), finishes it. In {@link #decideAll} a segment
 *       whose best sum, as last seen in the batch, cannot win is skipped.
 *   <li>Every grant is checked, O(N).
 * </ul>
 *
 * <p>Thread-safe: the layout is immutable and the BEST orders sit in a concurrent map (at most
 * {@link #BEST_ORDERS_MAX}; past it they are built per request, slower but the same). The free
 * set is the caller's: one thread at a time, and nobody else changes it during a call; the
 * hazard is a free set shared between lanes, which this class cannot detect.
 */
public final class SeatDecider {
    /** Most (N, section, category) BEST orders kept; each costs about 12 bytes per segment of its section. */
    public static final int BEST_ORDERS_MAX = 4096;

    private static final SeatDecision SOLD_OUT = new SeatDecision.SoldOut();

    private final SeatLayout layout;
    private final int bestVisitsMin;
    private final Map<RunKey, BestOrder> bestOrders = new ConcurrentHashMap<>();

    public SeatDecider(SeatLayout layout) {
        this(layout, BestPlacement.VISITS_MIN);
    }

    /** For tests: {@code bestVisitsMin} -1 makes every BEST scan in layout order, to check it answers the same. */
    SeatDecider(SeatLayout layout, int bestVisitsMin) {
        this.layout = Objects.requireNonNull(layout, "layout");
        this.bestVisitsMin = bestVisitsMin;
    }

    public SeatLayout layout() {
        return layout;
    }

    /**
     * Decides one request against {@code free} and, when Granted, clears the granted bits in
     * {@code free}; SoldOut and Taken leave it unchanged.
     */
    public SeatDecision decide(BitSet free, SeatRequest r) {
        checkFree(free);
        return decide(free, r, null);
    }

    /**
     * Decides {@code requests} in order, each against what the ones before it left: exactly the
     * decisions (and the final free set) of {@link #decide} called on each in turn, faster for many
     * requests because it keeps, for the length of the call, each filter's runs for ANY, where
     * ADJACENT searches resume, and what BEST searches saw. Work and memory grow with the list;
     * the caller bounds its batches.
     */
    public List<SeatDecision> decideAll(BitSet free, List<SeatRequest> requests) {
        checkFree(free);
        Batch batch = new Batch(free);
        List<SeatDecision> out = new ArrayList<>(requests.size());
        for (SeatRequest r : requests) {
            out.add(decide(free, r, batch));
        }
        return out;
    }

    private SeatDecision decide(BitSet free, SeatRequest r, Batch batch) {
        Objects.requireNonNull(r, "request");
        if (r.mode() == SeatRequest.Mode.SPECIFIC) {
            return specific(free, r, batch);
        }
        SeatFilter f = layout.filter(r.sectionId(), r.category());
        int n = r.count();
        int[] seats = switch (r.mode()) {
            case ANY -> batch == null ? SmallestRuns.pick(free, f, n) : batch.queue(f).pick(n);
            case ADJACENT -> adjacent(free, f, n, batch);
            case BEST -> best(free, f, n, batch);
            case SPECIFIC -> throw new AssertionError("decided above");
        };
        if (seats == null) {
            return SOLD_OUT;
        }
        Arrays.sort(seats);
        check(free, r, f, seats);
        return grant(free, seats, batch);
    }

    private SeatDecision specific(BitSet free, SeatRequest r, Batch batch) {
        int[] seats = r.seats();
        Arrays.sort(seats);
        if (seats[seats.length - 1] >= layout.size()) {
            throw new IllegalArgumentException("SPECIFIC names seat index " + seats[seats.length - 1]
                    + "; the layout has " + layout.size() + " seats");
        }
        int taken = 0;
        for (int s : seats) {
            if (!free.get(s)) {
                taken++;
            }
        }
        if (taken > 0) {
            int[] out = new int[taken];
            int k = 0;
            for (int s : seats) {
                if (!free.get(s)) {
                    out[k++] = s;
                }
            }
            return new SeatDecision.Taken(out);
        }
        check(free, r, null, seats);
        return grant(free, seats, batch);
    }

    /** The earliest window of n candidates; in a batch, from where the last one for the same (filter, n) was found. */
    private int[] adjacent(BitSet free, SeatFilter f, int n, Batch batch) {
        if (n > layout.longestRun(f.section, f.category)) {
            return null;
        }
        RunKey key = new RunKey(f.section, f.category, n);
        // In a batch seats are only taken: no window of n begins before where the previous one was found.
        int from = batch == null ? f.from : batch.adjacentFrom.getOrDefault(key, f.from);
        int found = -1;
        for (int s = f.nextCandidate(free, from); s >= 0; ) {
            int e = f.runEnd(free, s);
            if (e - s >= n) {
                found = s;
                break;
            }
            s = f.nextCandidate(free, e);
        }
        if (batch != null) {
            batch.adjacentFrom.put(key, found < 0 ? f.to : found);
        }
        return found < 0 ? null : range(found, n);
    }

    /** In a batch, a (filter, n) that found no window stays SoldOut, and no window begins before an ADJACENT fit. */
    private int[] best(BitSet free, SeatFilter f, int n, Batch batch) {
        if (n > layout.longestRun(f.section, f.category)) {
            return null;
        }
        RunKey key = new RunKey(f.section, f.category, n);
        int from = batch == null ? f.from : batch.adjacentFrom.getOrDefault(key, f.from);
        if (from >= f.to) {
            return null;
        }
        BestOrder order = bestOrders.get(key);
        if (order == null) {
            order = BestOrder.of(layout, f, n);
            if (bestOrders.size() < BEST_ORDERS_MAX) {
                bestOrders.putIfAbsent(key, order);
            }
        }
        long[] known = batch == null ? null : batch.bestKnown(key, order.size());
        int w = BestPlacement.pick(layout, free, f, n, order, from, known, bestVisitsMin);
        if (w < 0 && batch != null) {
            batch.adjacentFrom.put(key, f.to);
        }
        return w < 0 ? null : range(w, n);
    }

    private static int[] range(int from, int n) {
        int[] out = new int[n];
        for (int k = 0; k < n; k++) {
            out[k] = from + k;
        }
        return out;
    }

    /** The grant keeps its rule: n distinct free seats, ascending, matching; for ADJACENT and BEST in one segment. */
    private void check(BitSet free, SeatRequest r, SeatFilter f, int[] seats) {
        boolean ok = seats.length == r.count();
        for (int k = 0; ok && k < seats.length; k++) {
            ok = seats[k] >= 0 && seats[k] < layout.size() && (k == 0 || seats[k] > seats[k - 1])
                    && free.get(seats[k]) && (f == null || f.matches(seats[k]));
        }
        if (ok && (r.mode() == SeatRequest.Mode.ADJACENT || r.mode() == SeatRequest.Mode.BEST)) {
            ok = seats[seats.length - 1] - seats[0] == seats.length - 1
                    && layout.segmentEnd(seats[0]) >= seats[0] + seats.length;
        }
        if (!ok) {
            throw new IllegalStateException("seat decision breaks its rule: request=" + r + ", seats="
                    + Arrays.toString(seats) + ", filter=" + f + ", layout=" + layout + ", free seats="
                    + free.cardinality());
        }
    }

    private static SeatDecision grant(BitSet free, int[] seats, Batch batch) {
        for (int s : seats) {
            free.clear(s);
        }
        if (batch != null) {
            batch.cleared(seats);
        }
        return new SeatDecision.Granted(seats);
    }

    private void checkFree(BitSet free) {
        Objects.requireNonNull(free, "free");
        if (free.length() > layout.size()) {
            throw new IllegalArgumentException("free has seat index " + (free.length() - 1) + " set; the layout has "
                    + layout.size() + " seats");
        }
    }

    /** A filter, and for ADJACENT and BEST a count. */
    private record RunKey(int section, int category, int count) {
    }

    /**
     * What one {@link #decideAll} call keeps: the ANY run queues, where each ADJACENT search
     * resumes, and what BEST searches saw. Lives for the call; everything in it relies on seats only
     * being taken meanwhile.
     */
    private static final class Batch {
        /** Most (filter, count) BEST bounds kept per batch; each costs 8 bytes per segment of its order. */
        static final int BEST_KNOWN_MAX = 32;

        final BitSet free;
        final Map<RunKey, RunQueue> queues = new HashMap<>();
        /** No window of (filter, count) begins before this: seats are only taken in a batch. */
        final Map<RunKey, Integer> adjacentFrom = new HashMap<>();
        /** Per (filter, count), per segment of its order: the lowest BEST sum when last visited (sums only grow). */
        private final Map<RunKey, long[]> bestKnown = new HashMap<>();
        private final Set<RunKey> bestSeen = new HashSet<>();

        Batch(BitSet free) {
            this.free = free;
        }

        RunQueue queue(SeatFilter f) {
            return queues.computeIfAbsent(new RunKey(f.section, f.category, 0), k -> new RunQueue(f, free));
        }

        /** The BEST bounds of a (filter, count) asked for more than once in the batch, or null. */
        long[] bestKnown(RunKey key, int segments) {
            long[] known = bestKnown.get(key);
            if (known == null && !bestSeen.add(key) && bestKnown.size() < BEST_KNOWN_MAX) {
                known = new long[segments];
                bestKnown.put(key, known);
            }
            return known;
        }

        void cleared(int[] seats) {
            for (RunQueue q : queues.values()) {
                q.cleared(seats);
            }
        }
    }
}
