package io.lastunit.shard.escrow;

import io.lastunit.shard.store.LaneStore;

/**
 * A lane's cached bucket rows as seen by what writes bucket rows outside the lane's batches (a
 * transfer, a restock): a committed row refreshes the cached copy, a write of unknown outcome
 * makes the lane reload the bucket. Lane-confined, like the cache behind it.
 */
public interface CachedRows {
    /** A write outside a batch committed {@code row}: a cached copy of the bucket takes its counters. */
    void committed(LaneStore.BucketRow row);

    /** A write's outcome is unknown: the bucket is dropped from the cache and reloaded on its next use. */
    void forget(String tenant, String item, int bucketNo);
}
