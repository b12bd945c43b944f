package io.lastunit.balancer.move;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.balancer.BalancerMetrics;
import io.lastunit.balancer.plan.DemandTracker;
import io.lastunit.balancer.plan.ItemView;
import io.lastunit.balancer.transfer.Fence;
import io.lastunit.balancer.transfer.TransferRecovery;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.invariant.ItemKey;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One interval of the leader's balancing (DESIGN §6, §7), run by a single scheduled thread: for
 * every cell, the levels of every item (ListLevels on each shard), demand sampled from them, then
 * each item's step through {@link ItemMover} (ship home, collapse, follow demand), at most
 * {@code movesPerTickMax} transfers per interval. Every {@code recoveryInterval} it also completes
 * PENDING transfers older than that interval (left by a step whose attempts ran out, or by a shard
 * that was down when this leader took over).
 *
 * <p>Does nothing unless this process leads (a fence is offered). One item that fails is logged
 * and skipped; losing leadership ends the interval at once. Not thread-safe: one thread runs it.
 */
public final class BalancingLoop implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(BalancingLoop.class);

    private final Supplier<Optional<Fence>> fences;
    private final TopologyCache topology;
    private final LevelReader reader;
    private final ItemMover mover;
    private final DemandTracker demand;
    private final TransferRecovery recovery;
    private final BalancerMetrics metrics;
    private final int movesPerTickMax;
    private final Duration recoveryInterval;
    private final LongSupplier nanoTime;
    private long lastRecoveryNanos;
    private boolean recoveredOnce;

    public BalancingLoop(Supplier<Optional<Fence>> fences, TopologyCache topology, LevelReader reader, ItemMover mover,
            DemandTracker demand, TransferRecovery recovery, BalancerMetrics metrics, int movesPerTickMax,
            Duration recoveryInterval, LongSupplier nanoTime) {
        this.fences = fences;
        this.topology = topology;
        this.reader = reader;
        this.mover = mover;
        this.demand = demand;
        this.recovery = recovery;
        this.metrics = metrics;
        this.movesPerTickMax = movesPerTickMax;
        this.recoveryInterval = recoveryInterval;
        this.nanoTime = nanoTime;
    }

    @Override
    public void run() {
        Optional<Fence> fence = fences.get();
        if (fence.isEmpty()) {
            demand.retain(Set.of()); // a standby's samples would be stale when it leads
            recoveredOnce = false;
            return;
        }
        try {
            tick(fence.get(), topology.current());
            metrics.tick(true);
        } catch (Failure f) {
            metrics.tick(false);
            if (f.reason() == Reason.NOT_LEADER) {
                log.info("balancing interval stopped: {}", f.getMessage());
            } else {
                log.warn("balancing interval skipped: {} {}", f.reason(), f.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            metrics.tick(false);
            log.warn("balancing interval failed", e);
        }
    }

    private void tick(Fence fence, Topology t) throws InterruptedException {
        int budget = movesPerTickMax;
        Set<ItemKey> seen = new HashSet<>();
        for (Cell cell : t.cells()) {
            LevelReader.CellLevels levels = reader.cell(t, cell.getName());
            if (!levels.problems().isEmpty()) {
                log.warn("cell {}: {} item(s) not balanced this interval; {}", cell.getName(), levels.incomplete(),
                        levels.problems());
            }
            long now = nanoTime.getAsLong();
            for (ItemView v : levels.views()) {
                if (v.multiRegion()) {
                    demand.observe(v, now);
                    seen.add(v.item());
                }
            }
            for (ItemView v : levels.views()) {
                if (!v.multiRegion()) {
                    continue;
                }
                try {
                    budget -= mover.balance(fence, t, v, budget);
                } catch (Failure f) {
                    if (f.reason() == Reason.NOT_LEADER) {
                        throw f;
                    }
                    log.atWarn().addKeyValue("tenant", v.item().tenant()).addKeyValue("item", v.item().item())
                            .log("balancing refused: {} {}", f.reason(), f.getMessage());
                } catch (RuntimeException e) {
                    log.atWarn().addKeyValue("tenant", v.item().tenant()).addKeyValue("item", v.item().item())
                            .setCause(e).log("balancing failed");
                }
            }
        }
        demand.retain(seen);
        if (budget <= 0) {
            log.info("balancing interval used its budget of {} transfers; the rest waits for the next", movesPerTickMax);
        }
        long now = nanoTime.getAsLong();
        if (!recoveredOnce || now - lastRecoveryNanos >= recoveryInterval.toNanos()) {
            recoveredOnce = true;
            lastRecoveryNanos = now;
            recovery.completePending(fence, t, recoveryInterval);
            metrics.recoveryPass();
        }
    }
}
