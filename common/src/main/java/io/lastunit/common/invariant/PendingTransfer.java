package io.lastunit.common.invariant;

import java.util.Objects;

/**
 * A PENDING OUT transfer record as its source shard holds it, and whether the target shard
 * already holds the IN record with the same id (DESIGN §7). Such a transfer's units are in
 * flight until step 2 has committed: taken from the source's allotment, not yet in the
 * target's. Immutable.
 *
 * @param transferId  the id both records share
 * @param sourceShard the shard holding the OUT record
 * @param targetShard the OUT record's peer
 * @param quantity    units the OUT record took, >= 1
 * @param inAtPeer    the target holds the IN record (step 2 committed, step 3 not yet)
 */
public record PendingTransfer(String transferId, ItemKey item, String sourceShard, String targetShard, long quantity,
        boolean inAtPeer) {

    public PendingTransfer {
        Objects.requireNonNull(transferId, "transferId");
        Objects.requireNonNull(item, "item");
        if (quantity < 1) {
            throw new IllegalArgumentException("transfer " + transferId + ": quantity=" + quantity + ", must be >= 1");
        }
    }

    /** Units of this record that no shard's allotment holds right now. */
    public long inFlight() {
        return inAtPeer ? 0 : quantity;
    }
}
