package io.lastunit.balancer;

import io.lastunit.balancer.transfer.TransferReason;
import io.lastunit.common.metrics.Metrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The balancer's counters: plain adders, the one record of each count, read by tests, written to
 * the log as one summary line on a schedule ({@link #summaryLine()}), and exported through
 * Micrometer by {@link #bindTo} (function counters and gauges reading these adders at scrape
 * time, so nothing is counted twice; the pull latency is the one Micrometer {@link Timer}).
 * Monotonic since start unless named a gauge. Thread-safe, lock-free.
 */
public final class BalancerMetrics {
    /** How a transfer this process began ended: {@code outcome} of {@code lastunit_balancer_transfers_total}. */
    public enum TransferOutcome {
        /** Step 3 committed. */
        DONE,
        /** Step 1 found nothing to move (no problem). */
        NOTHING,
        /** Step 1 was refused outright: nothing was recorded. */
        REFUSED,
        /** Left PENDING or with step 1's outcome unknown: recovery completes it. */
        INCOMPLETE,
        /** Stopped because this process lost its leadership: the next leader completes what committed. */
        FENCED;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<TransferReason, Map<TransferOutcome, LongAdder>> outcomes = new EnumMap<>(TransferReason.class);
    private final AtomicLong transfersInFlight = new AtomicLong();
    private volatile Timer pullTimer;
    private final Map<TransferReason, LongAdder> transfers = new EnumMap<>(TransferReason.class);
    private final Map<TransferReason, LongAdder> units = new EnumMap<>(TransferReason.class);
    private final LongAdder transfersIncomplete = new LongAdder();
    private final LongAdder pulls = new LongAdder();
    private final LongAdder pullsCollapsed = new LongAdder();
    private final LongAdder pullsNothing = new LongAdder();
    private final LongAdder pullsRefused = new LongAdder();
    private final LongAdder pullsJoined = new LongAdder();
    private final LongAdder recoveryPasses = new LongAdder();
    private final LongAdder invariantChecks = new LongAdder();
    private final LongAdder invariantDrifts = new LongAdder();
    private final AtomicLong driftingItems = new AtomicLong();
    private final LongAdder ticks = new LongAdder();
    private final LongAdder tickFailures = new LongAdder();

    public BalancerMetrics() {
        for (TransferReason r : TransferReason.values()) {
            transfers.put(r, new LongAdder());
            units.put(r, new LongAdder());
            Map<TransferOutcome, LongAdder> byOutcome = new EnumMap<>(TransferOutcome.class);
            for (TransferOutcome o : TransferOutcome.values()) {
                byOutcome.put(o, new LongAdder());
            }
            outcomes.put(r, byOutcome);
        }
    }

    /**
     * Exports these counters on {@code registry}: transfers by reason and outcome, units moved,
     * transfers in flight, pulls, recovery passes, balancing intervals, and the pull latency.
     */
    public void bindTo(MeterRegistry registry) {
        for (TransferReason r : TransferReason.values()) {
            for (TransferOutcome o : TransferOutcome.values()) {
                FunctionCounter.builder(Metrics.PREFIX + "balancer.transfers", outcomes.get(r).get(o), LongAdder::sum)
                        .tag("reason", r.label()).tag("outcome", o.label())
                        .description("transfers this process began, by reason and outcome").register(registry);
            }
            FunctionCounter.builder(Metrics.PREFIX + "balancer.transfer.units", units.get(r), LongAdder::sum)
                    .tag("reason", r.label()).baseUnit("units")
                    .description("units moved by transfers driven to DONE, by reason").register(registry);
        }
        Gauge.builder(Metrics.PREFIX + "balancer.transfers.pending", transfersInFlight, AtomicLong::get)
                .description("transfers this process has begun and not finished (step 1 sent, no outcome yet)")
                .register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.pulls", this,
                        m -> m.pulls() - m.pullsCollapsed() - m.pullsNothing()).tag("outcome", "moved")
                .description("pulls: runs answered (one run answers every caller that joined it) by outcome, and"
                        + " refusals").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.pulls", pullsNothing, LongAdder::sum)
                .tag("outcome", "nothing").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.pulls", pullsCollapsed, LongAdder::sum)
                .tag("outcome", "collapsed").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.pulls", pullsRefused, LongAdder::sum)
                .tag("outcome", "refused").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.pulls.joined", pullsJoined, LongAdder::sum)
                .description("pulls answered by another caller's run of the same item and region").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.recovery.passes", recoveryPasses, LongAdder::sum)
                .description("passes that completed PENDING transfers left by a crash or a failed step")
                .register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.intervals", this, m -> m.ticks() - m.tickFailures())
                .tag("result", "ok").description("balancing intervals by result").register(registry);
        FunctionCounter.builder(Metrics.PREFIX + "balancer.intervals", tickFailures, LongAdder::sum)
                .tag("result", "failed").register(registry);
        pullTimer = Timer.builder(Metrics.PREFIX + "balancer.pull")
                .description("pull runs: from the leader taking the run to its answer").register(registry);
    }

    /** A transfer began (its first step about to be sent); {@link #transferFinished} follows it, whatever happens. */
    public void transferBegun() {
        transfersInFlight.incrementAndGet();
    }

    /** A transfer {@link #transferBegun begun} is no longer being driven by this process. */
    public void transferFinished() {
        transfersInFlight.decrementAndGet();
    }

    /** A transfer ended with {@code outcome}. */
    public void transferEnded(TransferReason reason, TransferOutcome outcome) {
        outcomes.get(reason).get(outcome).increment();
    }

    public long transfers(TransferReason reason, TransferOutcome outcome) {
        return outcomes.get(reason).get(outcome).sum();
    }

    /** Transfers begun and not yet ended. */
    public long transfersInFlight() {
        return transfersInFlight.get();
    }

    /** One pull run took {@code nanos}, whatever its outcome. */
    public void pullTook(long nanos) {
        Timer t = pullTimer;
        if (t != null) {
            t.record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    /** A transfer this process drove to step 3 (DONE), with the units it moved. */
    public void transferDone(TransferReason reason, long quantity) {
        transfers.get(reason).increment();
        units.get(reason).add(quantity);
    }

    /** A transfer this process left PENDING or whose first step's outcome is unknown (not a crash). */
    public void transferIncomplete() {
        transfersIncomplete.increment();
    }

    /** A pull run answered: the item collapsed, or {@code moved} units were moved in (0: no region had any). */
    public void pull(boolean collapsed, long moved) {
        pulls.increment();
        if (collapsed) {
            pullsCollapsed.increment();
        } else if (moved == 0) {
            pullsNothing.increment();
        }
    }

    /** Pull runs answered with nothing moved and no collapse. */
    public long pullsNothing() {
        return pullsNothing.sum();
    }

    /** A Pull answered with an error (standby, invalid, busy, unavailable). */
    public void pullRefused() {
        pullsRefused.increment();
    }

    /** A pull answered by another caller's run of the same item and region. */
    public void pullJoined() {
        pullsJoined.increment();
    }

    public void recoveryPass() {
        recoveryPasses.increment();
    }

    /** One scheduled invariant check ran, with {@code newDrifts} drifts that just became persistent. */
    public void invariantCheck(int newDrifts, int drifting) {
        invariantChecks.increment();
        invariantDrifts.add(newDrifts);
        driftingItems.set(drifting);
    }

    public void tick(boolean ok) {
        ticks.increment();
        if (!ok) {
            tickFailures.increment();
        }
    }

    /** Transfers driven to DONE, every reason. */
    public long transfers() {
        return transfers.values().stream().mapToLong(LongAdder::sum).sum();
    }

    public long transfers(TransferReason reason) {
        return transfers.get(reason).sum();
    }

    public long units(TransferReason reason) {
        return units.get(reason).sum();
    }

    public long transfersIncomplete() {
        return transfersIncomplete.sum();
    }

    public long pulls() {
        return pulls.sum();
    }

    public long pullsCollapsed() {
        return pullsCollapsed.sum();
    }

    public long pullsRefused() {
        return pullsRefused.sum();
    }

    /** Pulls answered by another caller's run (see {@code PullGroups}); {@link #pulls()} counts the runs. */
    public long pullsJoined() {
        return pullsJoined.sum();
    }

    /** Transfers completed by recovery (reason {@code recovery}). */
    public long recoveries() {
        return transfers(TransferReason.RECOVERY);
    }

    public long recoveryPasses() {
        return recoveryPasses.sum();
    }

    public long invariantChecks() {
        return invariantChecks.sum();
    }

    /** Drifts that persisted over the configured number of consecutive checks, counted once each. */
    public long invariantDrifts() {
        return invariantDrifts.sum();
    }

    /** Gauge: items drifting in the latest check (persistent or not yet). */
    public long driftingItems() {
        return driftingItems.get();
    }

    public long ticks() {
        return ticks.sum();
    }

    public long tickFailures() {
        return tickFailures.sum();
    }

    /** {@code balancer_metrics transfers=… units=… transfers_pull=… ...}: one key=value line. */
    public String summaryLine() {
        StringJoiner j = new StringJoiner(" ", "balancer_metrics ", "");
        j.add("transfers=" + transfers());
        for (TransferReason r : TransferReason.values()) {
            j.add("transfers_" + r.label() + "=" + transfers(r));
            j.add("units_" + r.label() + "=" + units(r));
        }
        j.add("transfers_incomplete=" + transfersIncomplete());
        j.add("pulls=" + pulls());
        j.add("pulls_joined=" + pullsJoined());
        j.add("pulls_collapsed=" + pullsCollapsed());
        j.add("pulls_refused=" + pullsRefused());
        j.add("recovery_passes=" + recoveryPasses());
        j.add("invariant_checks=" + invariantChecks());
        j.add("invariant_drifts=" + invariantDrifts());
        j.add("drifting_items=" + driftingItems());
        j.add("ticks=" + ticks());
        j.add("tick_failures=" + tickFailures());
        return j.toString();
    }
}
