package io.lastunit.balancer.plan;

/**
 * One region of an item as the shard placed there reports it. Immutable.
 *
 * @param shardId   the shard that holds the item in this region
 * @param available units that can be reserved there now
 * @param base      the region's quota plus restocks applied there
 * @param collapsed the shard marked the item collapsed (its stock shipped home)
 * @param reserves  the shard's monotonic count of reserves decided for the item (for demand)
 */
public record RegionLevel(String region, String shardId, long available, long base, boolean collapsed,
        long reserves) {

    public RegionLevel {
        if (available < 0 || base < 0 || reserves < 0) {
            throw new IllegalArgumentException("region " + region + " at " + shardId + ": available=" + available
                    + ", base=" + base + ", reserves=" + reserves + " must not be negative");
        }
    }
}
