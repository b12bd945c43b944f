package io.lastunit.shard.lane;

/** Names one escrow bucket: a slice of one item's stock, written by exactly one lane. */
public record BucketKey(String tenantId, String itemId, int bucketNo) {
    @Override
    public String toString() {
        return tenantId + "/" + itemId + "#" + bucketNo;
    }
}
