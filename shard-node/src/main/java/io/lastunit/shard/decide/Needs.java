package io.lastunit.shard.decide;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What a decision could not do without: rows to load, and borrows for dry buckets. The lane
 * provides them ({@link Loaded}) and decides the batch again. {@code taken} is what the
 * tentative decision took per bucket (for the lane's promises and for the borrows' caps).
 */
public record Needs(
        Set<KeyName> keys,
        Set<BuyerName> usage,
        Set<UUID> holds,
        Set<Slot> due,
        Map<Slot, Long> borrows,
        Map<Slot, Long> taken,
        Map<Slot, Long> remaining) {

    static Needs empty() {
        return new Needs(new LinkedHashSet<>(), new LinkedHashSet<>(), new LinkedHashSet<>(), new LinkedHashSet<>(),
                new LinkedHashMap<>(), new LinkedHashMap<>(), new LinkedHashMap<>());
    }

    public boolean isEmpty() {
        return keys.isEmpty() && usage.isEmpty() && holds.isEmpty() && due.isEmpty() && borrows.isEmpty();
    }

    /** True when only borrows are asked for (nothing to read). */
    public boolean onlyBorrows() {
        return keys.isEmpty() && usage.isEmpty() && holds.isEmpty() && due.isEmpty();
    }
}
