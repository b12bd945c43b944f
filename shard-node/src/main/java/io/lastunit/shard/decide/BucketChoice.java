package io.lastunit.shard.decide;

/**
 * Where a new Reserve's units come from inside a shard: the open bucket its idempotency key
 * hashes to. Stable while the open set is, so a retry lands where its first try was placed.
 * Pure; pinned by {@code BucketChoiceTest} (a changed hash would move retries).
 */
public final class BucketChoice {
    private BucketChoice() {
    }

    public static int bucketFor(int[] open, String idempotencyKey) {
        if (open.length == 1) {
            return open[0];
        }
        int h = idempotencyKey.hashCode(); // murmur3's finalizer: every key bit reaches every bucket bit
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return open[(int) (((h & 0xffffffffL) * open.length) >>> 32)];
    }
}
