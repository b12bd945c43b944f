package io.lastunit.shard.fence;

/**
 * A tenant's epoch in this node's view of the topology (the version of {@code tenants/{tenant}}),
 * told to a caller that reached an item this shard no longer serves. Implementations are
 * thread-safe and never block: they read a cached snapshot.
 */
@FunctionalInterface
public interface TenantEpochs {
    /** A node without a topology: -1, as for a tenant that has no placement. */
    TenantEpochs NONE = tenant -> -1;

    /**
     * The tenant's epoch, -1 when it has no placement.
     *
     * @throws io.lastunit.common.Failure TOPOLOGY_UNAVAILABLE when the node's view is too stale to tell
     */
    int epochOf(String tenant);
}
