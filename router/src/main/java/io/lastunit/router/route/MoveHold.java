package io.lastunit.router.route;

import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.topology.Topology;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Calls of tenants that are MOVING between cells, parked in the router until the tenant's
 * placement is no longer MOVING (the move flipped or rolled back), then sent on: the caller sees
 * the move's pause as latency instead of an UNAVAILABLE it must retry after a hint.
 *
 * <p>A parked call is a {@link Parked} that runs exactly once: woken by {@link #onTopology} (a
 * snapshot in which its tenant is not MOVING), or by its owner's timeout, whichever comes first.
 * At most {@code parkedMax} calls are parked at once; past that {@link #park} refuses and the
 * caller answers TENANT_MOVING at once. Thread-safe: {@link #onTopology} runs on the topology
 * cache's event thread, {@link #park} on any thread.
 */
final class MoveHold {
    /** One parked call: {@link #claim()} decides who runs it. */
    static final class Parked {
        private final AtomicBoolean done = new AtomicBoolean();
        private final Runnable wake;

        Parked(Runnable wake) {
            this.wake = wake;
        }

        /** True for the first caller only: that caller runs (or answers) the call. */
        boolean claim() {
            return done.compareAndSet(false, true);
        }

        void wake() {
            if (claim()) {
                wake.run();
            }
        }
    }

    private final Map<String, List<Parked>> parked = new ConcurrentHashMap<>();
    private final AtomicInteger count = new AtomicInteger();
    private final int parkedMax;
    private final Supplier<Topology> topology;

    MoveHold(int parkedMax, Supplier<Topology> topology) {
        if (parkedMax < 1) {
            throw new IllegalArgumentException("parkedMax must be >= 1, got " + parkedMax);
        }
        this.parkedMax = parkedMax;
        this.topology = topology;
    }

    /**
     * Parks {@code p} until {@code tenant} is not MOVING. False, and nothing parked, when
     * {@code parkedMax} calls are parked already. A tenant that stopped MOVING while this call
     * parked is woken at once (the re-read after parking closes that race).
     */
    boolean park(String tenant, Parked p) {
        if (count.incrementAndGet() > parkedMax) {
            count.decrementAndGet();
            return false;
        }
        parked.compute(tenant, (t, list) -> {
            List<Parked> l = list == null ? new ArrayList<>() : list;
            l.add(p);
            return l;
        });
        boolean moving;
        try {
            moving = moving(topology.get(), tenant);
        } catch (RuntimeException e) {
            moving = true; // no usable topology now: the next snapshot or the owner's timeout decides
        }
        if (!moving) {
            release(tenant);
        }
        return true;
    }

    /** Wakes the parked calls of every tenant {@code t} no longer shows MOVING. */
    void onTopology(Topology t) {
        for (String tenant : parked.keySet()) {
            if (!moving(t, tenant)) {
                release(tenant);
            }
        }
    }

    /** Calls parked now (woken or timed-out ones leave the count when their tenant is released). */
    int parked() {
        return count.get();
    }

    /** Drops a timed-out call's place (its owner claimed it), so it no longer counts. */
    void forget(String tenant, Parked p) {
        parked.computeIfPresent(tenant, (t, list) -> {
            if (list.remove(p)) {
                count.decrementAndGet();
            }
            return list.isEmpty() ? null : list;
        });
    }

    private void release(String tenant) {
        List<Parked> woken = parked.remove(tenant);
        if (woken == null) {
            return;
        }
        count.addAndGet(-woken.size());
        for (Parked p : woken) {
            p.wake();
        }
    }

    private static boolean moving(Topology t, String tenant) {
        return t.stateOf(tenant) == TenantState.MOVING;
    }
}
