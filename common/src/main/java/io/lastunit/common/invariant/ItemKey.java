package io.lastunit.common.invariant;

import java.util.Comparator;
import java.util.Objects;

/**
 * One item of one tenant: what the cross-shard invariant (DESIGN §1) is about. Sorted by tenant,
 * then item. Immutable.
 */
public record ItemKey(String tenant, String item) implements Comparable<ItemKey> {
    private static final Comparator<ItemKey> ORDER =
            Comparator.comparing(ItemKey::tenant).thenComparing(ItemKey::item);

    public ItemKey {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(item, "item");
    }

    @Override
    public int compareTo(ItemKey other) {
        return ORDER.compare(this, other);
    }

    /** {@code tenant/item}, as logs and reports write it. */
    @Override
    public String toString() {
        return tenant + "/" + item;
    }
}
