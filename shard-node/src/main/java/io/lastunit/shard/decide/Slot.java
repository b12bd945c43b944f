package io.lastunit.shard.decide;

/** One escrow bucket of one item, as the decider names it: the unit a lane owns and writes. */
public record Slot(String tenantId, String itemId, int bucketNo) {
    @Override
    public String toString() {
        return tenantId + "/" + itemId + "#" + bucketNo;
    }
}
