package io.lastunit.shard.retention;

/**
 * Whether a tenant move names a tenant, as this node sees it: its placement in the topology
 * names a move, or this node served a move's call for it lately. Retention leaves such a tenant's
 * rows alone, because a move's delta export finds only rows written since its last export (a
 * deletion would go unseen) and its verification compares both sides' rows. Implementations are
 * thread-safe and never block: they read a cached snapshot and memory.
 */
@FunctionalInterface
public interface MovingTenants {
    /** A node that takes part in no move: no tenant is moving. */
    MovingTenants NONE = tenant -> false;

    /**
     * @throws RuntimeException when this node cannot tell (its topology is too stale, or not
     *         loaded): retention then deletes nothing until it can
     */
    boolean moving(String tenant);
}
