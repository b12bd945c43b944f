package io.lastunit.balancer.invariant;

import io.lastunit.balancer.BalancerMetrics;
import io.lastunit.balancer.transfer.Fence;
import io.lastunit.common.Failure;
import io.lastunit.common.invariant.CrossShardChecker;
import io.lastunit.common.invariant.CrossShardReport;
import io.lastunit.common.invariant.DriftTracker;
import io.lastunit.common.invariant.DriftTracker.PersistentDrift;
import io.lastunit.common.topology.TopologyCache;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduled cross-shard invariant check (DESIGN §1, §11), run by the leader: a
 * {@link CrossShardChecker} pass over every cell, fed to a {@link DriftTracker} so that only a
 * drift seen in consecutive checks is reported (each check is exact; the streak covers what its
 * assumptions do not, see {@link DriftTracker}). Each persistent
 * drift is logged at ERROR ({@code invariant_drift …}) and counted once in
 * {@link BalancerMetrics#invariantDrifts()}. Not thread-safe: one scheduled thread runs it.
 */
public final class InvariantWatch implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(InvariantWatch.class);

    private final Supplier<Optional<Fence>> fences;
    private final TopologyCache topology;
    private final CrossShardChecker checker;
    private final DriftTracker tracker;
    private final BalancerMetrics metrics;
    private volatile CrossShardReport last;

    public InvariantWatch(Supplier<Optional<Fence>> fences, TopologyCache topology, CrossShardChecker checker,
            DriftTracker tracker, BalancerMetrics metrics) {
        this.fences = fences;
        this.topology = topology;
        this.checker = checker;
        this.tracker = tracker;
        this.metrics = metrics;
    }

    @Override
    public void run() {
        if (fences.get().isEmpty()) {
            return;
        }
        try {
            CrossShardReport report = checker.check(topology.current());
            last = report;
            for (String p : report.problems()) {
                log.warn("invariant check: {}", p);
            }
            List<PersistentDrift> drifts = tracker.observe(report.balances());
            int fresh = 0;
            for (PersistentDrift d : drifts) {
                if (d.isNew(tracker.consecutive())) {
                    fresh++;
                }
                log.error("invariant_drift {} checks={}", d.balance().describe(), d.checks());
            }
            metrics.invariantCheck(fresh, tracker.drifting());
        } catch (Failure f) {
            log.warn("invariant check skipped: {} {}", f.reason(), f.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.warn("invariant check failed", e);
        }
    }

    /** The latest report, or null before the first check. */
    public CrossShardReport lastReport() {
        return last;
    }
}
