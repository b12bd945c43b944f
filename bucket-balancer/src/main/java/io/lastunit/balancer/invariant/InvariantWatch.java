package io.lastunit.balancer.invariant;

import io.lastunit.balancer.BalancerMetrics;
import io.lastunit.balancer.transfer.Fence;
import io.lastunit.common.invariant.CrossShardChecker;
import io.lastunit.common.invariant.CrossShardReport;
import io.lastunit.common.invariant.DriftTracker;
import io.lastunit.common.invariant.DriftTracker.PersistentDrift;
import io.lastunit.common.invariant.ItemBalance;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * {@link BalancerMetrics#invariantDrifts()}.
 *
 * <p>Each cell is checked apart and exported apart ({@link CellCheckMeters}), as a shard exports
 * its own check: the drifts of this check (units and items) and the streak of checks in a row that
 * drifted, or "check failed" when the cell's shards could not all be read or the topology could
 * not be had — never a silent 0. Not thread-safe: one scheduled thread runs it.
 */
public final class InvariantWatch implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(InvariantWatch.class);

    private final Supplier<Optional<Fence>> fences;
    private final TopologyCache topology;
    private final CrossShardChecker checker;
    private final DriftTracker tracker;
    private final BalancerMetrics metrics;
    private final CellCheckMeters meters;
    private volatile CrossShardReport last;

    public InvariantWatch(Supplier<Optional<Fence>> fences, TopologyCache topology, CrossShardChecker checker,
            DriftTracker tracker, BalancerMetrics metrics) {
        this(fences, topology, checker, tracker, metrics, null);
    }

    /** @param registry where the per-cell results are exported, or null */
    public InvariantWatch(Supplier<Optional<Fence>> fences, TopologyCache topology, CrossShardChecker checker,
            DriftTracker tracker, BalancerMetrics metrics, MeterRegistry registry) {
        this.fences = fences;
        this.topology = topology;
        this.checker = checker;
        this.tracker = tracker;
        this.metrics = metrics;
        this.meters = new CellCheckMeters(registry);
    }

    @Override
    public void run() {
        if (fences.get().isEmpty()) {
            meters.standingBy();
            return;
        }
        Topology t;
        try {
            t = topology.current();
        } catch (RuntimeException e) {
            log.warn("invariant check skipped: no topology: {}", e.getMessage());
            meters.known().forEach(meters::failed);
            return;
        }
        List<String> checked = new ArrayList<>();
        List<ItemBalance> balances = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Map<String, long[]> perCell = new HashMap<>(); // cell -> {units, items} of this check's drifts
        Map<String, Boolean> ran = new LinkedHashMap<>();
        try {
            for (var cell : t.cells()) {
                String name = cell.getName();
                CrossShardReport r;
                try {
                    r = checker.checkCell(t, name);
                } catch (RuntimeException e) {
                    problems.add("cell " + name + ": " + e);
                    ran.put(name, false);
                    continue;
                }
                checked.addAll(r.cellsChecked());
                balances.addAll(r.balances());
                problems.addAll(r.problems());
                long[] u = perCell.computeIfAbsent(name, c -> new long[2]);
                for (ItemBalance b : r.drifts()) {
                    u[0] += Math.abs(b.drift());
                    u[1]++;
                }
                ran.put(name, r.problems().isEmpty() && r.cellsChecked().contains(name));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        CrossShardReport report = new CrossShardReport(checked, balances, problems);
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
        long now = System.currentTimeMillis() / 1000;
        ran.forEach((cell, ok) -> {
            if (ok) {
                long[] u = perCell.getOrDefault(cell, new long[2]);
                meters.checked(cell, u[0], (int) u[1], now);
            } else {
                meters.failed(cell);
            }
        });
    }

    /** The latest report, or null before the first check. */
    public CrossShardReport lastReport() {
        return last;
    }
}
