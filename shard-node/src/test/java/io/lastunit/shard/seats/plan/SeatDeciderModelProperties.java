package io.lastunit.shard.seats.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The decider against a naive model: random maps (several sections, rows of varying length, now and
 * then one longer than 64 seats, random aisles, categories, ranks and order gaps, seat numbers out
 * of layout order, the list shuffled),
 * random free sets and random requests of every mode. The model sorts the seats itself and decides
 * by plain loops over lists; {@link SeatDecider#decide} one at a time, {@link SeatDecider#decideAll}
 * over random chunks and a decider whose BEST always scans in layout order must all give its
 * decisions exactly, and every decision is also checked
 * against the rules directly (granted seats were free, distinct, as many as asked, matching,
 * adjacent in one row for ADJACENT and BEST; the free set changes by exactly the grant).
 */
class SeatDeciderModelProperties {
    private static final String[] CATEGORIES = {"", "A", "B"};

    @Property(tries = 500)
    void decisionsMatchTheModel(@ForAll long seed) {
        Random rnd = new Random(seed);
        List<SeatSpec> specs = seats(rnd);
        SeatLayout layout = SeatLayout.of(specs);
        Model model = new Model(specs);
        layoutAgrees(layout, model);
        SeatDecider decider = new SeatDecider(layout);
        SeatDecider scanning = new SeatDecider(layout, -1); // BEST by the layout-order scan alone
        double density = new double[] {0.2, 0.5, 0.8, 1.0}[rnd.nextInt(4)];
        BitSet one = new BitSet();
        for (int i = 0; i < model.n; i++) {
            model.free[i] = rnd.nextDouble() < density;
            one.set(i, model.free[i]);
        }
        BitSet all = (BitSet) one.clone();
        BitSet scanned = (BitSet) one.clone();
        BitSet scannedAll = (BitSet) one.clone();
        List<SeatRequest> requests = requests(rnd, model, 10 + rnd.nextInt(80));
        for (int next = 0; next < requests.size(); ) {
            if (rnd.nextInt(4) == 0) { // seats come back between batches (holds released or expired)
                for (int k = rnd.nextInt(4); k > 0; k--) {
                    int i = rnd.nextInt(model.n);
                    model.free[i] = true;
                    one.set(i);
                    all.set(i);
                    scanned.set(i);
                    scannedAll.set(i);
                }
            }
            int size = 1 + rnd.nextInt(rnd.nextBoolean() ? 12 : 40);
            List<SeatRequest> chunk = requests.subList(next, Math.min(requests.size(), next + size));
            next += chunk.size();
            List<SeatDecision> batched = decider.decideAll(all, chunk);
            List<SeatDecision> scannedBatch = scanning.decideAll(scannedAll, chunk);
            for (int k = 0; k < chunk.size(); k++) {
                SeatRequest r = chunk.get(k);
                boolean[] before = model.free.clone();
                SeatDecision expected = model.decide(r);
                SeatDecision actual = decider.decide(one, r);
                String why = "seed " + seed + ", " + r + ", free before " + model.show(before);
                assertThat(actual).as(why).isEqualTo(expected);
                assertThat(batched.get(k)).as("decideAll, " + why).isEqualTo(expected);
                assertThat(scanning.decide(scanned, r)).as("scanning, " + why).isEqualTo(expected);
                assertThat(scannedBatch.get(k)).as("scanning decideAll, " + why).isEqualTo(expected);
                keepsTheRules(model, before, r, actual, one, why);
            }
            assertThat(all).as("seed %d: decideAll's free set", seed).isEqualTo(one);
            assertThat(scannedAll).as("seed %d: scanning decideAll's free set", seed).isEqualTo(one);
        }
    }

    // ---- the rules, checked on each decision ----

    private static void keepsTheRules(Model m, boolean[] before, SeatRequest r, SeatDecision d, BitSet after,
            String why) {
        boolean[] expectedAfter = before.clone();
        if (d instanceof SeatDecision.Granted g) {
            int[] seats = g.seats();
            assertThat(seats).as(why).hasSize(r.count()).doesNotHaveDuplicates().isSorted();
            for (int s : seats) {
                assertThat(before[s]).as("%s: granted seat %d was free", why, s).isTrue();
                if (r.mode() != SeatRequest.Mode.SPECIFIC) {
                    assertThat(m.matches(s, r)).as("%s: seat %d matches", why, s).isTrue();
                }
                expectedAfter[s] = false;
            }
            if (r.mode() == SeatRequest.Mode.SPECIFIC) {
                assertThat(seats).as(why).containsExactlyInAnyOrder(r.seats());
            }
            if (r.mode() == SeatRequest.Mode.ADJACENT || r.mode() == SeatRequest.Mode.BEST) {
                for (int k = 0; k + 1 < seats.length; k++) {
                    assertThat(m.adjacent(seats[k]) && seats[k + 1] == seats[k] + 1)
                            .as("%s: %d and %d adjacent in one row", why, seats[k], seats[k + 1]).isTrue();
                }
            }
        } else if (d instanceof SeatDecision.Taken t) {
            assertThat(r.mode()).as(why).isEqualTo(SeatRequest.Mode.SPECIFIC);
            List<Integer> notFree = new ArrayList<>();
            for (int s : r.seats()) {
                if (!before[s]) {
                    notFree.add(s);
                }
            }
            assertThat(Arrays.stream(t.seats()).boxed().toList()).as(why).containsExactlyInAnyOrderElementsOf(notFree);
        } else {
            assertThat(r.mode()).as(why).isNotEqualTo(SeatRequest.Mode.SPECIFIC);
            assertThat(m.fits(before, r)).as("%s: SoldOut only when nothing fits", why).isFalse();
        }
        for (int i = 0; i < m.n; i++) {
            assertThat(after.get(i)).as("%s: seat %d free after", why, i).isEqualTo(expectedAfter[i]);
            assertThat(m.free[i]).as("%s: model seat %d free after", why, i).isEqualTo(expectedAfter[i]);
        }
        assertThat(after.length()).as(why).isLessThanOrEqualTo(m.n);
    }

    private static void layoutAgrees(SeatLayout layout, Model m) {
        assertThat(layout.size()).isEqualTo(m.n);
        for (int i = 0; i < m.n; i++) {
            SeatSpec s = m.seats.get(i);
            assertThat(layout.seatAt(i)).isEqualTo(s);
            assertThat(layout.indexOf(s.seatId())).isEqualTo(i);
            assertThat(layout.indexOfSeatNo(s.seatNo())).isEqualTo(i);
            assertThat(layout.adjacentToNext(i)).isEqualTo(m.adjacent(i));
        }
        List<String> sections = new ArrayList<>(m.sections());
        sections.add(null);
        List<String> categories = new ArrayList<>(Arrays.asList(CATEGORIES));
        categories.add(null);
        for (String section : sections) {
            for (String category : categories) {
                assertThat(layout.longestRun(section, category)).as("longest run of %s/%s", section, category)
                        .isEqualTo(m.longestRun(section, category));
            }
        }
    }

    // ---- random maps and requests ----

    private static List<SeatSpec> seats(Random rnd) {
        List<SeatSpec> specs = new ArrayList<>();
        int sections = 1 + rnd.nextInt(3);
        // now and then one long row, so that runs span several 64-seat words
        int longRow = rnd.nextInt(6) == 0 ? rnd.nextInt(sections * 4) : -1;
        for (int s = 0; s < sections; s++) {
            int rows = 1 + rnd.nextInt(4);
            for (int r = 0; r < rows; r++) {
                boolean isLong = s * 4 + r == longRow;
                String rowCategory = CATEGORIES[rnd.nextInt(CATEGORIES.length)];
                int length = isLong ? 65 + rnd.nextInt(100) : 1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 12);
                int order = rnd.nextInt(3);
                for (int k = 0; k < length; k++) {
                    String category = rnd.nextInt(isLong ? 60 : 5) == 0 ? CATEGORIES[rnd.nextInt(CATEGORIES.length)]
                            : rowCategory;
                    // row ids repeat across sections: they name different rows there
                    specs.add(new SeatSpec(0, "s" + s + "r" + r + "o" + order, "S" + s, "R" + r, order, category,
                            rnd.nextInt(4), rnd.nextInt(isLong ? 80 : 5) == 0));
                    order += 1 + (rnd.nextInt(3) == 0 ? rnd.nextInt(5) : 0);
                }
            }
        }
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < specs.size() * 3; i++) {
            numbers.add(i);
        }
        Collections.shuffle(numbers, rnd);
        List<SeatSpec> out = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            SeatSpec s = specs.get(i);
            out.add(new SeatSpec(numbers.get(i), s.seatId(), s.sectionId(), s.rowId(), s.order(), s.category(),
                    s.rank(), s.aisleAfter()));
        }
        Collections.shuffle(out, rnd);
        return out;
    }

    private static List<SeatRequest> requests(Random rnd, Model m, int count) {
        List<SeatRequest> out = new ArrayList<>();
        List<String> sections = m.sections();
        int[] weights = {1 + rnd.nextInt(4), 1 + rnd.nextInt(4), 1 + rnd.nextInt(4), 1 + rnd.nextInt(4)};
        for (int k = 0; k < count; k++) {
            int pick = rnd.nextInt(weights[0] + weights[1] + weights[2] + weights[3]);
            int which = 0;
            while (pick >= weights[which]) {
                pick -= weights[which++];
            }
            SeatRequest.Mode mode = SeatRequest.Mode.values()[which];
            String section = rnd.nextInt(3) == 0 ? sections.get(rnd.nextInt(sections.size())) : null;
            String category = rnd.nextInt(3) == 0 ? CATEGORIES[rnd.nextInt(CATEGORIES.length)] : null;
            if (category != null && m.seats.stream().noneMatch(s -> s.category().equals(category))) {
                continue; // an unknown category is bad input, refused before a decision
            }
            int n = 1 + rnd.nextInt(rnd.nextInt(6) == 0 ? (rnd.nextInt(4) == 0 ? 70 : 10) : 4);
            if (mode == SeatRequest.Mode.SPECIFIC) {
                List<Integer> all = new ArrayList<>();
                for (int i = 0; i < m.n; i++) {
                    all.add(i);
                }
                Collections.shuffle(all, rnd);
                int[] seats = all.subList(0, Math.min(n, m.n)).stream().mapToInt(Integer::intValue).toArray();
                out.add(new SeatRequest(mode, seats.length, seats, section, category));
            } else {
                out.add(new SeatRequest(mode, n, null, section, category));
            }
        }
        return out;
    }

    // ---- the model: plain loops over lists ----

    static final class Model {
        final List<SeatSpec> seats;
        final int n;
        final boolean[] free;

        Model(List<SeatSpec> input) {
            // sections by first appearance, rows by first appearance within their section, then order
            List<SeatSpec> sorted = new ArrayList<>(input);
            sorted.sort(Comparator.comparingInt((SeatSpec s) -> firstOfSection(input, s))
                    .thenComparingInt(s -> firstOfRow(input, s)).thenComparingInt(SeatSpec::order));
            this.seats = sorted;
            this.n = sorted.size();
            this.free = new boolean[n];
        }

        private static int firstOfSection(List<SeatSpec> input, SeatSpec s) {
            for (int i = 0; i < input.size(); i++) {
                if (input.get(i).sectionId().equals(s.sectionId())) {
                    return i;
                }
            }
            throw new AssertionError();
        }

        private static int firstOfRow(List<SeatSpec> input, SeatSpec s) {
            for (int i = 0; i < input.size(); i++) {
                if (input.get(i).sectionId().equals(s.sectionId()) && input.get(i).rowId().equals(s.rowId())) {
                    return i;
                }
            }
            throw new AssertionError();
        }

        List<String> sections() {
            List<String> out = new ArrayList<>();
            for (SeatSpec s : seats) {
                if (!out.contains(s.sectionId())) {
                    out.add(s.sectionId());
                }
            }
            return out;
        }

        /** Seat i and seat i + 1: same section, same row, no aisle after i. */
        boolean adjacent(int i) {
            return i + 1 < n && seats.get(i).sectionId().equals(seats.get(i + 1).sectionId())
                    && seats.get(i).rowId().equals(seats.get(i + 1).rowId()) && !seats.get(i).aisleAfter();
        }

        boolean matches(int i, SeatRequest r) {
            return (r.sectionId() == null || seats.get(i).sectionId().equals(r.sectionId()))
                    && (r.category() == null || seats.get(i).category().equals(r.category()));
        }

        int longestRun(String section, String category) {
            SeatRequest r = SeatRequest.any(1, section, category);
            int best = 0;
            for (int w = 0; w < n; w++) {
                int length = 0;
                while (w + length < n && matches(w + length, r) && (length == 0 || adjacent(w + length - 1))) {
                    length++;
                }
                best = Math.max(best, length);
            }
            return best;
        }

        /** Seats [w, w + count) are all candidates of r under {@code f} and pairwise adjacent. */
        boolean window(boolean[] f, SeatRequest r, int w, int count) {
            if (w + count > n) {
                return false;
            }
            for (int k = 0; k < count; k++) {
                if (!f[w + k] || !matches(w + k, r) || (k > 0 && !adjacent(w + k - 1))) {
                    return false;
                }
            }
            return true;
        }

        /** Some choice fits r under {@code f}. */
        boolean fits(boolean[] f, SeatRequest r) {
            if (r.mode() == SeatRequest.Mode.ANY) {
                int candidates = 0;
                for (int i = 0; i < n; i++) {
                    if (f[i] && matches(i, r)) {
                        candidates++;
                    }
                }
                return candidates >= r.count();
            }
            for (int w = 0; w < n; w++) {
                if (window(f, r, w, r.count())) {
                    return true;
                }
            }
            return false;
        }

        SeatDecision decide(SeatRequest r) {
            List<Integer> chosen = switch (r.mode()) {
                case SPECIFIC -> {
                    List<Integer> taken = new ArrayList<>();
                    for (int s : r.seats()) {
                        if (!free[s]) {
                            taken.add(s);
                        }
                    }
                    if (!taken.isEmpty()) {
                        yield taken.stream().sorted().toList();
                    }
                    yield Arrays.stream(r.seats()).boxed().toList();
                }
                case ANY -> any(r);
                case ADJACENT -> adjacentWindow(r);
                case BEST -> best(r);
            };
            if (chosen == null) {
                return new SeatDecision.SoldOut();
            }
            int[] seats = chosen.stream().mapToInt(Integer::intValue).sorted().toArray();
            if (r.mode() == SeatRequest.Mode.SPECIFIC && Arrays.stream(r.seats()).anyMatch(s -> !free[s])) {
                return new SeatDecision.Taken(seats);
            }
            for (int s : seats) {
                free[s] = false;
            }
            return new SeatDecision.Granted(seats);
        }

        /** Runs of candidates, shortest first then earliest; seats taken run by run from each run's start. */
        private List<Integer> any(SeatRequest r) {
            List<List<Integer>> runs = new ArrayList<>();
            List<Integer> run = null;
            for (int i = 0; i < n; i++) {
                boolean candidate = free[i] && matches(i, r);
                if (candidate && run != null && adjacent(i - 1)) {
                    run.add(i);
                } else if (candidate) {
                    run = new ArrayList<>(List.of(i));
                    runs.add(run);
                } else {
                    run = null;
                }
            }
            runs.sort(Comparator.comparingInt((List<Integer> x) -> x.size()).thenComparingInt(x -> x.get(0)));
            List<Integer> out = new ArrayList<>();
            for (List<Integer> x : runs) {
                for (int s : x) {
                    if (out.size() < r.count()) {
                        out.add(s);
                    }
                }
            }
            return out.size() == r.count() ? out : null;
        }

        private List<Integer> adjacentWindow(SeatRequest r) {
            for (int w = 0; w < n; w++) {
                if (window(free, r, w, r.count())) {
                    return range(w, r.count());
                }
            }
            return null;
        }

        /** Every window: lowest rank sum, then one making no new orphan, then the earliest. */
        private List<Integer> best(SeatRequest r) {
            long bestSum = 0;
            boolean bestOrphans = false;
            int best = -1;
            for (int w = 0; w < n; w++) {
                if (!window(free, r, w, r.count())) {
                    continue;
                }
                long sum = 0;
                for (int k = 0; k < r.count(); k++) {
                    sum += seats.get(w + k).rank();
                }
                boolean[] after = free.clone();
                for (int k = 0; k < r.count(); k++) {
                    after[w + k] = false;
                }
                boolean orphans = false;
                for (int x = rowStart(w); x < n && sameRow(w, x); x++) {
                    if (orphan(after, x) && !orphan(free, x)) {
                        orphans = true;
                    }
                }
                if (best < 0 || sum < bestSum || (sum == bestSum && bestOrphans && !orphans)) {
                    best = w;
                    bestSum = sum;
                    bestOrphans = orphans;
                }
            }
            return best < 0 ? null : range(best, r.count());
        }

        private boolean sameRow(int i, int j) {
            return seats.get(i).sectionId().equals(seats.get(j).sectionId())
                    && seats.get(i).rowId().equals(seats.get(j).rowId());
        }

        private int rowStart(int i) {
            while (i > 0 && sameRow(i - 1, i)) {
                i--;
            }
            return i;
        }

        /** A free seat whose neighbours in its segment are both not free, or the segment's edge. */
        private boolean orphan(boolean[] f, int x) {
            boolean left = x > 0 && adjacent(x - 1) && f[x - 1];
            boolean right = adjacent(x) && f[x + 1];
            return f[x] && !left && !right;
        }

        private static List<Integer> range(int from, int count) {
            List<Integer> out = new ArrayList<>();
            for (int k = 0; k < count; k++) {
                out.add(from + k);
            }
            return out;
        }

        String show(boolean[] f) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < n; i++) {
                SeatSpec s = seats.get(i);
                if (i > 0 && !Objects.equals(seats.get(i - 1).rowId(), s.rowId())
                        || i > 0 && !seats.get(i - 1).sectionId().equals(s.sectionId())) {
                    b.append(" / ");
                }
                b.append(f[i] ? '.' : 'x').append(s.category().isEmpty() ? "-" : s.category()).append(s.rank());
                if (adjacent(i) || i + 1 == n || !seats.get(i + 1).rowId().equals(s.rowId())
                        || !seats.get(i + 1).sectionId().equals(s.sectionId())) {
                    b.append(' ');
                } else {
                    b.append(" | ");
                }
            }
            return b.toString();
        }
    }
}
