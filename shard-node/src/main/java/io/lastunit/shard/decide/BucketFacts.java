package io.lastunit.shard.decide;

/**
 * One bucket as a batch sees it: the lane's cached counters of its row, what other lanes'
 * committed borrows took from it since that row ({@code unseenLent}), a lower bound of its
 * earliest HELD expiry, and the idempotency keys placed in it. Immutable for one decision (the
 * key index is the lane's, read only).
 */
public record BucketFacts(
        Slot slot,
        ItemFacts item,
        long allotment,
        long available,
        long held,
        long sold,
        long unseenLent,
        long earliestDueMicros,
        KeyIndex keys) {

    /** The idempotency keys placed in a bucket, as far as the lane remembers them. */
    public interface KeyIndex {
        /** True if the key may be placed here (a hint: the row decides); false is exact while complete. */
        boolean knows(String idempotencyKey);

        /** True when every key placed in the bucket is remembered. */
        boolean complete();
    }
}
