package io.lastunit.balancer.plan;

import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.common.invariant.ItemKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An item across its regions: one {@link RegionLevel} for each region it is sold in, read from
 * the shard placement gives that region. Immutable; pure.
 */
public record ItemView(ItemKey item, String homeRegion, List<RegionLevel> regions, boolean active) {

    public ItemView {
        regions = List.copyOf(regions);
        if (regions.stream().noneMatch(r -> r.region().equals(homeRegion))) {
            throw new IllegalArgumentException(item + ": no level for home region " + homeRegion);
        }
    }

    /**
     * The view of an item from the levels its shards reported (shard id → level).
     *
     * @throws IllegalArgumentException naming what is missing or inconsistent: a region of the item
     *     with no level (its shard did not answer), two levels for one region, levels that disagree
     *     on the home region or the item's regions
     */
    public static ItemView of(ItemKey item, Map<String, ItemLevel> levelsByShard) {
        if (levelsByShard.isEmpty()) {
            throw new IllegalArgumentException(item + ": no shard reported it");
        }
        ItemLevel first = levelsByShard.values().iterator().next();
        String home = first.getHomeRegion();
        List<String> itemRegions = first.getRegionsList().isEmpty() ? List.of(home) : first.getRegionsList();
        Map<String, RegionLevel> byRegion = new TreeMap<>();
        boolean active = true;
        for (Map.Entry<String, ItemLevel> e : levelsByShard.entrySet()) {
            ItemLevel l = e.getValue();
            if (!l.getHomeRegion().equals(home) || !sameRegions(l, itemRegions)) {
                throw new IllegalArgumentException(item + ": shards disagree on home region or regions ("
                        + home + " " + itemRegions + " vs " + l.getHomeRegion() + " " + l.getRegionsList() + " at "
                        + e.getKey() + ")");
            }
            RegionLevel r = new RegionLevel(l.getRegion(), e.getKey(), l.getAvailable(), l.getBase(), l.getCollapsed(),
                    l.getReserves());
            if (byRegion.put(l.getRegion(), r) != null) {
                throw new IllegalArgumentException(item + ": two shards report region " + l.getRegion());
            }
            active &= l.getState().isEmpty() || l.getState().equals("ACTIVE");
        }
        List<String> missing = new ArrayList<>();
        for (String r : itemRegions) {
            if (!byRegion.containsKey(r)) {
                missing.add(r);
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException(item + ": no level for region(s) " + missing);
        }
        if (byRegion.size() != itemRegions.size()) {
            throw new IllegalArgumentException(item + ": levels for regions " + byRegion.keySet()
                    + ", but it is sold in " + itemRegions);
        }
        return new ItemView(item, home, new ArrayList<>(byRegion.values()), active);
    }

    private static boolean sameRegions(ItemLevel l, List<String> regions) {
        List<String> mine = l.getRegionsList().isEmpty() ? List.of(l.getHomeRegion()) : l.getRegionsList();
        return mine.size() == regions.size() && mine.containsAll(regions);
    }

    public Optional<RegionLevel> region(String name) {
        return regions.stream().filter(r -> r.region().equals(name)).findFirst();
    }

    public RegionLevel home() {
        return region(homeRegion).orElseThrow();
    }

    public boolean multiRegion() {
        return regions.size() > 1;
    }

    /** Σ available over the regions: what remains for sale. */
    public long available() {
        return regions.stream().mapToLong(RegionLevel::available).sum();
    }

    /** Σ base over the regions: the item's total. */
    public long base() {
        return regions.stream().mapToLong(RegionLevel::base).sum();
    }

    /** Some non-home region shipped its stock home: the item is (being) collapsed. */
    public boolean collapsed() {
        return regions.stream().anyMatch(r -> r.collapsed() && !r.region().equals(homeRegion));
    }
}
