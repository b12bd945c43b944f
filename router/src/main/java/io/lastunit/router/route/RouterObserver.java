package io.lastunit.router.route;

import io.lastunit.api.inventory.v1.ReserveResponse;

/**
 * What the routing code tells about the calls it answers, for the router's meters: called on the
 * threads that complete the calls (transport and scheduler threads), so an implementation must be
 * thread-safe, must not block, and should cost no more than a counter increment. {@link #NONE}
 * (the default) ignores everything.
 */
public interface RouterObserver {
    /** Why a Reserve was answered by the router itself, without a call. */
    enum Shed {
        /** A recent final SOLD_OUT of the item in the region ({@code SoldOutCache}). */
        SOLD_OUT_CACHE,
        /** The buyer is over its request rate ({@code BuyerRateLimiter}). */
        RATE_LIMIT,
        /** Too many Reserves of the item in flight ({@code InFlightLimiter}). */
        IN_FLIGHT
    }

    /** Why a call was sent again to a shard other than the one of its previous attempt, or later. */
    enum Reroute {
        /** A shard answered ABORTED (MOVED, stale routing): sent again with the current topology. */
        MOVED,
        /** A shard answered FORWARDED: sent once to the item's home region. */
        FORWARDED,
        /** The tenant is moving between cells: the call was held and sent again. */
        TENANT_MOVING
    }

    /** How a balancer Pull asked by a Reserve ended. */
    enum Pull {
        /** Stock was moved into the dry region. */
        MOVED,
        /** The item collapsed to its home region. */
        COLLAPSED,
        /** Nothing moved: no region had stock. */
        NOTHING,
        /** No leader, a refusal or a late answer. */
        FAILED
    }

    RouterObserver NONE = new RouterObserver() {
    };

    /**
     * A Reserve answered (sheds included): {@code response} on success, else {@code error};
     * {@code cell} is the tenant's cell when it was answered ({@link Router#cellOf}).
     */
    default void reserveAnswered(String cell, ReserveResponse response, Throwable error) {
    }

    /** A Reserve of a tenant of {@code cell} answered by the router itself. */
    default void shed(String cell, Shed cause) {
    }

    /** A call sent again to the same owner after UNAVAILABLE (backoff). */
    default void retried() {
    }

    default void rerouted(Reroute why) {
    }

    default void pulled(Pull outcome) {
    }
}
