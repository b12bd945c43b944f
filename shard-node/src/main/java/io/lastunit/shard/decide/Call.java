package io.lastunit.shard.decide;

import java.util.UUID;

/**
 * One operation of a batch as the decider sees it. {@code index} is its position in the batch:
 * the decision answers every call at its index.
 */
public sealed interface Call {
    int index();

    Slot slot();

    /**
     * A Reserve (or, with {@code claimHome} set, a claim of its key for another region's hold,
     * recorded CLAIMED at the item's home region).
     *
     * @param holdTtlMs the lifetime the caller asked for; 0 = the item's
     */
    record Reserve(int index, Slot slot, String key, String fingerprint, String region, String buyerId,
                   int quantity, long holdTtlMs, String claimHome) implements Call {
        public boolean claim() {
            return claimHome != null;
        }

        public KeyName keyName() {
            return new KeyName(slot.tenantId(), slot.itemId(), key);
        }
    }

    /** Confirm, Release or Extend of the hold {@code holdId} in {@code slot}, made in {@code region}. */
    record Transition(int index, Slot slot, UUID holdId, String region, Kind kind, String orderRef) implements Call {
    }

    /** Expire the bucket's due holds (asked by the sweeper). */
    record Sweep(int index, Slot slot) implements Call {
    }

    enum Kind { CONFIRM, RELEASE, EXTEND }
}
