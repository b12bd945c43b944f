package io.lastunit.admin.demo;

import java.util.ArrayList;
import java.util.List;

/**
 * What the demo sells: tenants {@code tenant-1..T} and items spread over them round-robin (item
 * k belongs to tenant k mod T), the units split as evenly as possible (the first {@code units mod
 * items} items get one more). Item ids carry a run tag so that a rerun on kept databases sells
 * fresh items. Immutable; pure.
 */
public record Catalog(List<String> tenants, List<Item> items) {

    /** One item for sale and its stock. */
    public record Item(int index, String tenant, String itemId, long total) {
    }

    public Catalog {
        tenants = List.copyOf(tenants);
        items = List.copyOf(items);
    }

    /**
     * @throws IllegalArgumentException unless tenants ≥ 1, items ≥ tenants (each tenant sells
     *     something) and units ≥ 0
     */
    public static Catalog of(int tenantCount, int itemCount, long units, String runTag) {
        if (tenantCount < 1 || itemCount < tenantCount || units < 0) {
            throw new IllegalArgumentException("need tenants >= 1, items >= tenants and units >= 0; got tenants="
                    + tenantCount + " items=" + itemCount + " units=" + units);
        }
        List<String> tenants = new ArrayList<>();
        for (int t = 1; t <= tenantCount; t++) {
            tenants.add("tenant-" + t);
        }
        List<Item> items = new ArrayList<>();
        long base = units / itemCount;
        long extra = units % itemCount;
        for (int k = 0; k < itemCount; k++) {
            items.add(new Item(k, tenants.get(k % tenantCount), "flash-" + runTag + "-" + (k + 1),
                    base + (k < extra ? 1 : 0)));
        }
        return new Catalog(tenants, items);
    }

    public long units() {
        return items.stream().mapToLong(Item::total).sum();
    }

    /** The items of one tenant, in catalog order. */
    public List<Item> itemsOf(String tenant) {
        return items.stream().filter(i -> i.tenant().equals(tenant)).toList();
    }
}
