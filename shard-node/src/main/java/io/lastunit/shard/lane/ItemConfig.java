package io.lastunit.shard.lane;

import io.lastunit.shard.decide.ItemState;

/**
 * An item's settings as stored in {@code items}. Immutable; a lane caches it beside the
 * item's buckets and reloads it with them.
 *
 * @param perBuyerLimit 0 = no limit (and no {@code buyer_usage} rows are kept)
 */
public record ItemConfig(
        String tenantId,
        String itemId,
        String homeRegion,
        long total,
        int perBuyerLimit,
        long holdTtlMs,
        long extendByMs,
        int bucketCount,
        ItemState state) {

    public boolean limited() {
        return perBuyerLimit > 0;
    }

    public boolean active() {
        return state == ItemState.ACTIVE;
    }
}
