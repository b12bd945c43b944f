package io.lastunit.common.topology;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import org.apache.curator.framework.state.ConnectionState;

/**
 * Decides whether cached topology may still be served, from Curator's connection states:
 *
 * <ul>
 *   <li>CONNECTED, RECONNECTED (and READ_ONLY, which lastunit clients never enable): serve.
 *   <li>SUSPENDED: serve the last snapshot for at most {@code staleMax} after the connection was
 *       first seen down, then refuse.
 *   <li>LOST: refuse at once, until a reconnect. The session is gone; ephemeral nodes (live
 *       shards) and watches may have changed without us seeing it.
 * </ul>
 *
 * Refusing means {@link Failure} with {@link Reason#TOPOLOGY_UNAVAILABLE} and a retry hint.
 *
 * <p>Thread-safe: state changes arrive on Curator's thread, {@link #check} runs on every request
 * thread; both go through one volatile immutable value, and the clock is read only while the
 * connection is down. Hazard: the bound is measured from when this gate heard of the suspension,
 * which is after ZooKeeper stopped answering; ZooKeeper's own silence before the client noticed
 * (up to about a third of the session timeout) comes on top.
 */
final class StalenessGate {
    /** The retry hint of a refusal: long enough not to hammer, short enough to catch a reconnect. */
    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private record Health(ConnectionState state, Instant downSince) {
    }

    private final String what;
    private final Duration staleMax;
    private final InstantSource clock;
    private volatile Health health;

    /**
     * @param what      what is gated, for messages (e.g. {@code topology root=/lastunit})
     * @param connected whether the client is connected now
     */
    StalenessGate(String what, Duration staleMax, InstantSource clock, boolean connected) {
        if (staleMax.isNegative()) {
            throw new IllegalArgumentException("staleMax=" + staleMax + " is negative");
        }
        this.what = Objects.requireNonNull(what, "what");
        this.staleMax = staleMax;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.health = connected
                ? new Health(ConnectionState.CONNECTED, null)
                : new Health(ConnectionState.SUSPENDED, clock.instant());
    }

    synchronized void onStateChanged(ConnectionState state) {
        Instant downSince = health.downSince();
        health = switch (state) {
            case CONNECTED, RECONNECTED, READ_ONLY -> new Health(state, null);
            case SUSPENDED, LOST -> new Health(state, downSince != null ? downSince : clock.instant());
        };
    }

    ConnectionState state() {
        return health.state();
    }

    /** Zero while connected; since the connection was first seen down otherwise (the clock is read then only). */
    Duration staleness() {
        Instant downSince = health.downSince();
        return downSince == null ? Duration.ZERO : Duration.between(downSince, clock.instant());
    }

    /** Returns when cached topology may be served; throws the refusal otherwise. */
    void check() {
        Health h = health;
        if (h.downSince() == null) {
            return;
        }
        Duration down = Duration.between(h.downSince(), clock.instant());
        if (h.state() == ConnectionState.LOST) {
            throw refusal(h, down, "the session was lost");
        }
        if (down.compareTo(staleMax) > 0) {
            throw refusal(h, down, "longer than staleMax=" + staleMax.toMillis() + " ms");
        }
    }

    private Failure refusal(Health h, Duration down, String why) {
        return Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE, what + " unavailable: ZooKeeper connection "
                + h.state() + " since " + h.downSince() + " (" + down.toMillis() + " ms), " + why, RETRY_AFTER);
    }
}
