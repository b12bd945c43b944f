package io.lastunit.balancer.plan;

/**
 * A transfer a policy decided on, between two regions of one item. Immutable.
 *
 * @param maxQuantity most units to take at the source
 * @param minQuantity fewest worth moving (the source moves nothing when it has fewer); 0 = 1
 * @param collapse    the source ships home and marks the item collapsed there
 */
public record PlannedMove(RegionLevel from, RegionLevel to, long maxQuantity, long minQuantity, boolean collapse) {

    public PlannedMove {
        if (maxQuantity < 1 || minQuantity < 0 || minQuantity > maxQuantity) {
            throw new IllegalArgumentException("move " + from.region() + "->" + to.region() + ": maxQuantity="
                    + maxQuantity + ", minQuantity=" + minQuantity);
        }
    }
}
