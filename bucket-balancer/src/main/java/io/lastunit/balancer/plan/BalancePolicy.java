package io.lastunit.balancer.plan;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where an item's remaining stock should be, and which transfers get it there (DESIGN §6, §7).
 * Pure: no I/O, no clock; the same input always gives the same moves.
 *
 * <ul>
 *   <li><b>Targets.</b> Each region's share of the remaining available stock follows its demand
 *       (reserves per second): a floor of {@code demandFloor / n} of the stock for every region, so
 *       a region with no recent demand keeps a little, and the rest in proportion to demand. With
 *       no demand anywhere the shares are equal.
 *   <li><b>Rebalance.</b> Only when some region's available is outside its target ±
 *       {@code hysteresis}, and only moves of at least {@code minTransfer} units (or all a donor
 *       has, when it has less). No demand anywhere: nothing to follow, nothing moves.
 *   <li><b>Collapse.</b> When the remaining stock is at most {@link #collapseThreshold} and the
 *       item is not collapsed yet, every non-home region ships everything home and marks the item
 *       collapsed. A collapsed item's non-home regions ship whatever shows up there.
 *   <li><b>Pull.</b> A dry region takes from the regions with the most available: from each,
 *       {@code max(need, minTransfer, half its available above its target)}, capped at what it has.
 * </ul>
 *
 * Immutable and thread-safe; every parameter validated when built.
 */
public record BalancePolicy(double hysteresis, long minTransfer, double collapseFraction, long collapseMin,
        double demandFloor) {

    /** Largest minTransfer and collapseMin accepted: the platform's most units per item. */
    public static final long UNITS_MAX = 1_000_000_000L;

    private static final Comparator<RegionLevel> MOST_AVAILABLE_FIRST =
            Comparator.comparingLong(RegionLevel::available).reversed().thenComparing(RegionLevel::region);

    public BalancePolicy {
        List<String> problems = new ArrayList<>();
        if (!(hysteresis >= 0 && hysteresis < 1)) {
            problems.add("hysteresis=" + hysteresis + " is outside [0, 1)");
        }
        if (minTransfer < 1 || minTransfer > UNITS_MAX) {
            problems.add("minTransfer=" + minTransfer + " is outside [1, " + UNITS_MAX + "]");
        }
        if (!(collapseFraction >= 0 && collapseFraction <= 1)) {
            problems.add("collapseFraction=" + collapseFraction + " is outside [0, 1]");
        }
        if (collapseMin < 0 || collapseMin > UNITS_MAX) {
            problems.add("collapseMin=" + collapseMin + " is outside [0, " + UNITS_MAX + "]");
        }
        if (!(demandFloor >= 0 && demandFloor <= 1)) {
            problems.add("demandFloor=" + demandFloor + " is outside [0, 1]");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid balance policy: " + String.join("; ", problems));
        }
    }

    /** Remaining stock at or under which an item collapses: {@code max(collapseMin, ⌈collapseFraction × total⌉)}. */
    public long collapseThreshold(long total) {
        return Math.max(collapseMin, (long) Math.ceil(collapseFraction * total));
    }

    /** The item is sold in several regions, not collapsed yet, and its remaining stock is at or under the threshold. */
    public boolean collapseDue(ItemView v) {
        return v.multiRegion() && !v.collapsed() && v.available() <= collapseThreshold(v.base());
    }

    /**
     * Ships every non-home region home and marks it collapsed: one move per non-home region not yet
     * marked, or still holding stock, of everything it was seen to have (at least 1: with nothing
     * there the shard only marks it). Units that show up there later are shipped by a later
     * interval. Empty for a single-region item.
     */
    public List<PlannedMove> collapse(ItemView v) {
        List<PlannedMove> moves = new ArrayList<>();
        RegionLevel home = v.home();
        for (RegionLevel r : v.regions()) {
            if (!r.region().equals(v.homeRegion()) && (!r.collapsed() || r.available() > 0)) {
                moves.add(new PlannedMove(r, home, Math.max(1, r.available()), 0, true));
            }
        }
        return moves;
    }

    /**
     * Target available per region for the remaining stock (they sum to it exactly).
     *
     * @param demand reserves per second by region; absent or negative counts as 0
     */
    public Map<String, Long> targets(ItemView v, Map<String, Double> demand) {
        List<RegionLevel> regions = v.regions();
        int n = regions.size();
        long remaining = v.available();
        double total = 0;
        for (RegionLevel r : regions) {
            total += rate(demand, r.region());
        }
        double[] exact = new double[n];
        for (int i = 0; i < n; i++) {
            double share = total <= 0 ? 1.0 / n
                    : demandFloor / n + (1 - demandFloor) * rate(demand, regions.get(i).region()) / total;
            exact[i] = remaining * share;
        }
        long[] target = new long[n];
        long assigned = 0;
        for (int i = 0; i < n; i++) {
            target[i] = (long) Math.floor(exact[i]);
            assigned += target[i];
        }
        // Hand out what rounding left, largest fraction first (ties: region order), so Σ = remaining.
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingDouble((Integer i) -> target[i] - exact[i]).thenComparing(i -> i));
        for (int k = 0; assigned < remaining; k = (k + 1) % n) {
            target[order.get(k)]++;
            assigned++;
        }
        Map<String, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            out.put(regions.get(i).region(), target[i]);
        }
        return out;
    }

    /** The moves that bring the regions back within their bands; empty when none is outside. */
    public List<PlannedMove> rebalance(ItemView v, Map<String, Double> demand) {
        if (!v.multiRegion() || v.collapsed() || v.available() == 0
                || v.regions().stream().mapToDouble(r -> rate(demand, r.region())).sum() <= 0) {
            return List.of();
        }
        Map<String, Long> targets = targets(v, demand);
        List<RegionLevel> below = new ArrayList<>();
        List<RegionLevel> above = new ArrayList<>();
        for (RegionLevel r : v.regions()) {
            long t = targets.get(r.region());
            if (r.available() < t * (1 - hysteresis)) {
                below.add(r);
            } else if (r.available() > t * (1 + hysteresis)) {
                above.add(r);
            }
        }
        List<RegionLevel> receivers;
        List<RegionLevel> donors;
        if (!below.isEmpty()) {
            receivers = below;
            donors = v.regions().stream().filter(r -> r.available() > targets.get(r.region())).toList();
        } else if (!above.isEmpty()) {
            donors = above;
            receivers = v.regions().stream().filter(r -> r.available() < targets.get(r.region())).toList();
        } else {
            return List.of();
        }
        return match(receivers, donors, targets);
    }

    /** Largest need against largest excess, pair by pair; pairs worth less than minTransfer are skipped. */
    private List<PlannedMove> match(List<RegionLevel> receivers, List<RegionLevel> donors, Map<String, Long> targets) {
        List<RegionLevel> rs = new ArrayList<>(receivers);
        List<RegionLevel> ds = new ArrayList<>(donors);
        rs.sort(Comparator.comparingLong((RegionLevel r) -> r.available() - targets.get(r.region()))
                .thenComparing(RegionLevel::region));
        ds.sort(Comparator.comparingLong((RegionLevel r) -> targets.get(r.region()) - r.available())
                .thenComparing(RegionLevel::region));
        long[] need = rs.stream().mapToLong(r -> targets.get(r.region()) - r.available()).toArray();
        long[] excess = ds.stream().mapToLong(r -> r.available() - targets.get(r.region())).toArray();
        List<PlannedMove> moves = new ArrayList<>();
        int i = 0;
        int j = 0;
        while (i < rs.size() && j < ds.size()) {
            long amount = Math.min(need[i], excess[j]);
            RegionLevel donor = ds.get(j);
            if (amount >= minTransfer || (amount > 0 && amount == donor.available())) {
                moves.add(new PlannedMove(donor, rs.get(i), amount, Math.min(amount, minTransfer), false));
            }
            need[i] -= amount;
            excess[j] -= amount;
            if (need[i] <= 0) {
                i++;
            }
            if (excess[j] <= 0) {
                j++;
            }
        }
        return moves;
    }

    /**
     * The moves into {@code region} for a pull of {@code quantity} units, donors with the most
     * available first; each takes what it has up to its amount (minimum 1). Empty when no other
     * region has stock.
     */
    public List<PlannedMove> pull(ItemView v, String region, long quantity, Map<String, Double> demand) {
        RegionLevel into = v.region(region).orElseThrow(
                () -> new IllegalArgumentException(v.item() + " is not sold in region " + region));
        Map<String, Long> targets = targets(v, demand);
        List<RegionLevel> donors = new ArrayList<>(v.regions().stream()
                .filter(r -> !r.region().equals(region) && r.available() > 0).toList());
        donors.sort(MOST_AVAILABLE_FIRST);
        List<PlannedMove> moves = new ArrayList<>();
        long need = quantity;
        for (RegionLevel d : donors) {
            if (need <= 0) {
                break;
            }
            long aboveTarget = Math.max(0, d.available() - targets.get(d.region()));
            long amount = Math.min(d.available(), Math.max(need, Math.max(minTransfer, aboveTarget / 2)));
            moves.add(new PlannedMove(d, into, amount, 1, false));
            need -= amount;
        }
        return moves;
    }

    private static double rate(Map<String, Double> demand, String region) {
        Double d = demand.get(region);
        return d == null || !(d > 0) ? 0 : d;
    }
}
