package io.lastunit.shard.decide;

import java.util.List;

/**
 * What the decider needs of one item: its settings (from {@code items}) and its escrow state on
 * this shard (from the item's ledger): which buckets are open, how many there are, and whether
 * the item collapsed to its home region. Immutable.
 *
 * @param perBuyerLimit 0 = no limit
 * @param active        the item sells (state ACTIVE); {@code state} says what it is otherwise
 * @param open          the open buckets, where new Reserves go ({@link BucketChoice})
 * @param regions       the regions the item is sold in (one for a single-region item)
 */
public record ItemFacts(
        String homeRegion,
        List<String> regions,
        int perBuyerLimit,
        long holdTtlMs,
        long extendByMs,
        int bucketCount,
        boolean active,
        String state,
        int[] open,
        boolean regionCollapsed) {

    public ItemFacts {
        regions = List.copyOf(regions);
        open = open.clone();
    }

    public boolean limited() {
        return perBuyerLimit > 0;
    }

    public boolean multiRegion() {
        return regions.size() > 1;
    }

    public boolean isHome(String region) {
        return homeRegion.equals(region);
    }

    /** The bucket a new Reserve with this key goes to. */
    public int bucketFor(String idempotencyKey) {
        return BucketChoice.bucketFor(open, idempotencyKey);
    }
}
