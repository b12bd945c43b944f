package io.lastunit.common.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The results of one scheduled invariant check — a shard node's own ({@code scope="shard"}) or
 * the balancer's cross-shard check of one cell ({@code scope="cross_shard"}, {@code cell=…}) —
 * as the six {@code lastunit_invariant_*} meters the alert rules read (docs/observability.md,
 * "The invariant, on a schedule"):
 *
 * <ul>
 *   <li>drift units and drifting items of the last check that <em>ran</em>;</li>
 *   <li>the drift streak: checks in a row that found a drift (the page fires at two);</li>
 *   <li>"the last check failed" apart: a check that could not run is never a silent 0, and leaves
 *       the drift and the streak as the last check that ran left them;</li>
 *   <li>checks by result ({@code ok}, {@code drift}, {@code failed});</li>
 *   <li>when the last check that ran finished — until the first one, when these meters were made,
 *       so a check that never finishes is overdue one stale bound after start, not at once.</li>
 * </ul>
 *
 * Thread-safe.
 */
public final class InvariantMeters {
    private final AtomicLong driftUnits = new AtomicLong();
    private final AtomicLong driftingItems = new AtomicLong();
    private final AtomicLong driftStreak = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong lastCheckEpochSeconds;
    private final Counter ok;
    private final Counter drift;
    private final Counter checksFailed;

    /**
     * @param scope        {@code shard} or {@code cross_shard}
     * @param tags         further labels (the balancer's {@code cell}); bounded, never a tenant or an item
     * @param epochSeconds now, by the wall clock: the "last check" until one finishes
     */
    public InvariantMeters(MeterRegistry r, String scope, Tags tags, long epochSeconds) {
        Tags t = tags.and("scope", scope);
        lastCheckEpochSeconds = new AtomicLong(epochSeconds);
        Gauge.builder(Metrics.PREFIX + "invariant.drift.units", driftUnits, AtomicLong::get).tags(t)
                .description("units away from the invariants at the last check that ran").register(r);
        Gauge.builder(Metrics.PREFIX + "invariant.drifting.items", driftingItems, AtomicLong::get).tags(t)
                .description("items with a drift at the last check that ran").register(r);
        Gauge.builder(Metrics.PREFIX + "invariant.drift.streak", driftStreak, AtomicLong::get).tags(t)
                .description("checks in a row that found a drift (0 after a clean check)").register(r);
        Gauge.builder(Metrics.PREFIX + "invariant.check.failed", failed, AtomicLong::get).tags(t)
                .description("1 when the last invariant check could not run").register(r);
        Gauge.builder(Metrics.PREFIX + "invariant.last.check.timestamp", lastCheckEpochSeconds, AtomicLong::get)
                .tags(t).baseUnit("seconds")
                .description("when the last check that ran finished (before the first: when checking started)")
                .register(r);
        ok = checks(r, t, "ok");
        drift = checks(r, t, "drift");
        checksFailed = checks(r, t, "failed");
    }

    private static Counter checks(MeterRegistry r, Tags t, String result) {
        return Counter.builder(Metrics.PREFIX + "invariant.checks").tags(t).tag("result", result)
                .description("invariant checks by result: ok, drift, failed (could not run)").register(r);
    }

    /** A check ran and finished at {@code epochSeconds}: {@code units} away from the rules over {@code items} items. */
    public void checked(long units, long items, long epochSeconds) {
        driftUnits.set(units);
        driftingItems.set(items);
        failed.set(0);
        lastCheckEpochSeconds.set(epochSeconds);
        if (items == 0) {
            driftStreak.set(0);
            ok.increment();
        } else {
            driftStreak.incrementAndGet();
            drift.increment();
        }
    }

    /** A check could not run: the drift gauges keep the last check that ran. */
    public void failed() {
        failed.set(1);
        checksFailed.increment();
    }

    /**
     * This process checks nothing for now (a balancer that is not leading): it claims no failing
     * check and no drift streak — the checker's meters say those — and keeps the last drift it saw
     * and when.
     */
    public void standingBy() {
        failed.set(0);
        driftStreak.set(0);
    }
}
