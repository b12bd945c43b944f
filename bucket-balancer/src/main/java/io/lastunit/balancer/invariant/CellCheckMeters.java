package io.lastunit.balancer.invariant;

import io.lastunit.common.metrics.Metrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cross-shard invariant check's results per cell, under the names and meanings of a shard
 * node's own check ({@code lastunit_invariant_*}) with {@code scope="cross_shard"} and a
 * {@code cell} label: drift units and drifting items of the last check of the cell that ran, the
 * drift streak (checks in a row that found a drift: the alert fires at two), "the last check of
 * the cell failed" apart (a check that could not run is never a silent 0, and leaves the drift and
 * the streak as the last check that ran left them), checks by result, and when the last check that
 * ran finished. A cell's meters are made the first time it is checked: the
 * series grow with the cells, never with tenants or items. Thread-safe.
 */
final class CellCheckMeters {
    static final String SCOPE = "cross_shard";

    /** One cell's meters and the values they read. */
    private static final class Cell {
        final AtomicLong driftUnits = new AtomicLong();
        final AtomicLong driftingItems = new AtomicLong();
        final AtomicLong driftStreak = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicLong lastCheckEpochSeconds = new AtomicLong();
        final Counter ok;
        final Counter drift;
        final Counter checksFailed;

        Cell(MeterRegistry r, String cell) {
            Gauge.builder(Metrics.PREFIX + "invariant.drift.units", driftUnits, AtomicLong::get).tag("scope", SCOPE)
                    .tag("cell", cell).description("units away from the invariants at the last check that ran")
                    .register(r);
            Gauge.builder(Metrics.PREFIX + "invariant.drifting.items", driftingItems, AtomicLong::get)
                    .tag("scope", SCOPE).tag("cell", cell)
                    .description("items with a drift at the last check that ran").register(r);
            Gauge.builder(Metrics.PREFIX + "invariant.drift.streak", driftStreak, AtomicLong::get).tag("scope", SCOPE)
                    .tag("cell", cell).description("checks in a row that found a drift (0 after a clean check)")
                    .register(r);
            Gauge.builder(Metrics.PREFIX + "invariant.check.failed", failed, AtomicLong::get).tag("scope", SCOPE)
                    .tag("cell", cell).description("1 when the last invariant check could not run").register(r);
            Gauge.builder(Metrics.PREFIX + "invariant.last.check.timestamp", lastCheckEpochSeconds, AtomicLong::get)
                    .tag("scope", SCOPE).tag("cell", cell).baseUnit("seconds")
                    .description("when the last check that ran finished").register(r);
            ok = checks(r, cell, "ok");
            drift = checks(r, cell, "drift");
            checksFailed = checks(r, cell, "failed");
        }

        private static Counter checks(MeterRegistry r, String cell, String result) {
            return Counter.builder(Metrics.PREFIX + "invariant.checks").tag("scope", SCOPE).tag("cell", cell)
                    .tag("result", result).description("invariant checks by result: ok, drift, failed (could not run)")
                    .register(r);
        }
    }

    private final MeterRegistry registry;
    private final Map<String, Cell> cells = new ConcurrentHashMap<>();

    /** @param registry where the meters go, or null: nothing is exported */
    CellCheckMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A check of {@code cell} ran: {@code units} away from the rules over {@code items} items. */
    void checked(String cell, long units, int items, long epochSeconds) {
        Cell c = cell(cell);
        if (c == null) {
            return;
        }
        c.driftUnits.set(units);
        c.driftingItems.set(items);
        c.failed.set(0);
        c.lastCheckEpochSeconds.set(epochSeconds);
        if (items == 0) {
            c.driftStreak.set(0);
            c.ok.increment();
        } else {
            c.driftStreak.incrementAndGet();
            c.drift.increment();
        }
    }

    /** A check of {@code cell} could not run: the drift gauges keep the last check that ran. */
    void failed(String cell) {
        Cell c = cell(cell);
        if (c == null) {
            return;
        }
        c.failed.set(1);
        c.checksFailed.increment();
    }

    /**
     * This balancer is not leading, so it checks nothing: it claims no failing check and no drift
     * streak (the leader's meters say those), keeping the last drift it saw and when.
     */
    void standingBy() {
        for (Cell c : cells.values()) {
            c.failed.set(0);
            c.driftStreak.set(0);
        }
    }

    /** The cells checked or failed so far. */
    Iterable<String> known() {
        return cells.keySet();
    }

    private Cell cell(String cell) {
        return registry == null ? null : cells.computeIfAbsent(cell, n -> new Cell(registry, n));
    }
}
