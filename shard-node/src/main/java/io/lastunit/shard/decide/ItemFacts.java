package io.lastunit.shard.decide;

import java.util.List;

/**
 * What the decider needs of one item: its settings (from {@code items}) and its escrow state on
 * this shard (from the item's ledger): which buckets are open, how many there are, and whether
 * the item collapsed to its home region. Immutable.
 *
 * @param perBuyerLimit 0 = no limit
 * @param state         the item's state: only ACTIVE sells, and a moving one changes nothing here
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
        ItemState state,
        int[] open,
        boolean regionCollapsed) {

    public ItemFacts {
        regions = List.copyOf(regions);
        open = open.clone();
    }

    /** The item sells. */
    public boolean active() {
        return state == ItemState.ACTIVE;
    }

    /** A tenant move fences the item: no call changes it here ({@link ItemState#moving}). */
    public boolean moving() {
        return state.moving();
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
