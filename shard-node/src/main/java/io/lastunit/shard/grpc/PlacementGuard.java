package io.lastunit.shard.grpc;

import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import java.util.Map;

/**
 * Refuses requests for (tenant, item, region) that the current placement does not give to this
 * shard: ABORTED with reason MOVED and the tenant's epoch, so a router with a stale topology
 * re-routes instead of creating stock in the wrong place. Without a topology (a standalone node)
 * it refuses nothing. Thread-safe.
 */
public final class PlacementGuard {
    public static final PlacementGuard STANDALONE = new PlacementGuard(null, null);

    private final TopologyCache topology;
    private final String shardId;

    public PlacementGuard(TopologyCache topology, String shardId) {
        this.topology = topology;
        this.shardId = shardId;
    }

    public void check(String tenant, String item, String region) {
        if (topology == null) {
            return;
        }
        Topology t = topology.current();
        ShardInfo owner = t.shardFor(tenant, item, region).orElse(null);
        if (owner == null || !owner.getShardId().equals(shardId)) {
            throw Failure.of(Reason.MOVED, "shard " + shardId + " does not own " + tenant + "/" + item + " in region "
                    + region + " (owner: " + (owner == null ? "none" : owner.getShardId()) + ", tenant epoch "
                    + t.epochOf(tenant) + ")", Map.of("epoch", String.valueOf(t.epochOf(tenant)),
                    "owner", owner == null ? "" : owner.getShardId()));
        }
    }

    /** The region a region-less request (GetStock, Restock) means on this shard. */
    public String regionOr(String requested, String fallback) {
        if (!requested.isEmpty()) {
            return requested;
        }
        if (topology == null) {
            return fallback;
        }
        return topology.current().shard(shardId).map(ShardInfo::getRegion).orElse(fallback);
    }
}
