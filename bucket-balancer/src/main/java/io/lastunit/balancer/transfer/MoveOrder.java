package io.lastunit.balancer.transfer;

import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.invariant.ItemKey;
import java.util.Objects;

/**
 * One transfer to make: up to {@code maxQuantity} units of an item from one shard to another,
 * nothing when fewer than {@code minQuantity} are available at the source. Immutable.
 *
 * @param collapse the source is a non-home region shipping home: step 1 also marks the item
 *                 collapsed there (and then answers, recording nothing, even with nothing to move)
 */
public record MoveOrder(ItemKey item, ShardInfo from, ShardInfo to, long maxQuantity, long minQuantity,
        boolean collapse, TransferReason reason) {

    public MoveOrder {
        Objects.requireNonNull(item, "item");
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        Objects.requireNonNull(reason, "reason");
        if (from.getShardId().equals(to.getShardId())) {
            throw new IllegalArgumentException(item + ": a transfer from shard " + from.getShardId() + " to itself");
        }
        if (maxQuantity < 1 || minQuantity < 0 || minQuantity > maxQuantity) {
            throw new IllegalArgumentException(item + ": maxQuantity=" + maxQuantity + ", minQuantity=" + minQuantity
                    + ", need 1 <= max and 0 <= min <= max");
        }
    }
}
