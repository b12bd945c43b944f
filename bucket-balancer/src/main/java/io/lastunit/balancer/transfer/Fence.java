package io.lastunit.balancer.transfer;

/**
 * Whether this process may still move stock. Checked before every transfer step: a balancer that
 * lost leadership stops at once and leaves what it started PENDING for the next leader, which
 * completes every PENDING OUT record before it moves anything (DESIGN §7). The protocol stays safe
 * when two processes run it at once (every step is idempotent); the fence keeps that rare.
 */
@FunctionalInterface
public interface Fence {
    /** Never fenced: for tools and tests that drive transfers without an election. */
    Fence NONE = () -> {
    };

    /** @throws io.lastunit.common.Failure with reason NOT_LEADER when this process may no longer move stock */
    void check();
}
