package io.lastunit.common.invariant;

import java.util.Objects;

/**
 * One transfer (DESIGN §7) as the snapshots of one check saw it: whether the snapshot of its
 * source shard holds the OUT record (step 1: units taken from the source's allotment) and
 * whether the snapshot of its target holds the IN record (step 2: units credited to the
 * target's). Such a transfer's units are in flight between the snapshots: taken and not yet
 * credited as read (+quantity), or credited where the source was read before it took them
 * (-quantity, possible because the shards are read at slightly different moments). Immutable.
 *
 * @param transferId  the id both records share
 * @param sourceShard the shard holding the OUT record
 * @param targetShard the OUT record's peer
 * @param quantity    units the OUT record took, >= 1
 * @param outSeen     the source's snapshot holds the OUT record
 * @param inSeen      the target's snapshot holds the matching IN record
 */
public record PendingTransfer(String transferId, ItemKey item, String sourceShard, String targetShard, long quantity,
        boolean outSeen, boolean inSeen) {

    public PendingTransfer {
        Objects.requireNonNull(transferId, "transferId");
        Objects.requireNonNull(item, "item");
        if (quantity < 1) {
            throw new IllegalArgumentException("transfer " + transferId + ": quantity=" + quantity + ", must be >= 1");
        }
    }

    /** Units of this transfer that no snapshot's allotment holds (negative: held twice). */
    public long inFlight() {
        return (outSeen ? quantity : 0) - (inSeen ? quantity : 0);
    }
}
