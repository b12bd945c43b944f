package io.lastunit.balancer;

import io.lastunit.balancer.transfer.TransferReason;
import java.util.EnumMap;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The balancer's counters (Micrometer is not on this build's classpath): plain adders, read by
 * tests and written to the log as one summary line on a schedule ({@link #summaryLine()}).
 * Monotonic since start unless named a gauge. Thread-safe, lock-free.
 */
public final class BalancerMetrics {
    private final Map<TransferReason, LongAdder> transfers = new EnumMap<>(TransferReason.class);
    private final Map<TransferReason, LongAdder> units = new EnumMap<>(TransferReason.class);
    private final LongAdder transfersIncomplete = new LongAdder();
    private final LongAdder pulls = new LongAdder();
    private final LongAdder pullsCollapsed = new LongAdder();
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

    public void pull(boolean collapsed) {
        pulls.increment();
        if (collapsed) {
            pullsCollapsed.increment();
        }
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
