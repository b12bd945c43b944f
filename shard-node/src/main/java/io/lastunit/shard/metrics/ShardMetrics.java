package io.lastunit.shard.metrics;

import io.lastunit.common.Reason;
import io.lastunit.common.metrics.Metrics;
import io.lastunit.shard.decide.Decided;
import io.lastunit.shard.decide.HoldFacts;
import io.lastunit.shard.decide.Outcome;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.lane.LaneObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * A shard node's own meters (docs/observability.md, "Shard node"): the lanes (through
 * {@link LaneObserver}, once per batch), the holds' events, and the engine's counters read at
 * scrape time. No label names a tenant, an item or a buyer: {@code lane}, {@code cause},
 * {@code reason} and {@code event} each have a handful of values.
 */
public final class ShardMetrics implements LaneObserver {
    /** Batch sizes are counted in these buckets (operations): the lanes' batches are at most 1,024 by default. */
    static final double[] BATCH_BUCKETS = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};
    /** The events a hold goes through, the {@code event} label of the holds' counters. */
    public enum HoldEvent { CREATED, CONFIRMED, RELEASED, EXPIRED }

    private final MeterRegistry registry;
    private final DistributionSummary batchSize;
    private final Timer commit;
    private final Timer expiryLag;
    private final Counter unknown;
    private final Map<HoldEvent, Counter> holds = new EnumMap<>(HoldEvent.class);
    private final Map<HoldEvent, Counter> units = new EnumMap<>(HoldEvent.class);
    private final Map<String, Counter> redos = new ConcurrentHashMap<>();
    private final Map<Reason, Counter> refusals = new ConcurrentHashMap<>();

    public ShardMetrics(MeterRegistry registry, LaneEngine engine) {
        this.registry = registry;
        this.batchSize = DistributionSummary.builder(Metrics.PREFIX + "lane.batch.size").baseUnit("operations")
                .description("operations per batch a lane took").serviceLevelObjectives(BATCH_BUCKETS)
                .register(registry);
        this.commit = Timer.builder(Metrics.PREFIX + "lane.commit")
                .description("batches that committed: from the start of their decision to the end of their commit")
                .register(registry);
        this.expiryLag = Timer.builder(Metrics.PREFIX + "hold.expiry.lag")
                .description("how long after its expiry (database clock) a HELD hold was expired")
                .register(registry);
        this.unknown = Counter.builder(Metrics.PREFIX + "lane.unknown.outcomes")
                .description("operations whose commit failed with its outcome unknown (retry with the same key)")
                .register(registry);
        for (HoldEvent e : HoldEvent.values()) {
            String event = e.name().toLowerCase(java.util.Locale.ROOT);
            holds.put(e, Counter.builder(Metrics.PREFIX + "holds").tag("event", event)
                    .description("holds by event: created (RESERVED), confirmed, released, expired").register(registry));
            units.put(e, Counter.builder(Metrics.PREFIX + "hold.units").tag("event", event).baseUnit("units")
                    .description("units of holds by event").register(registry));
        }
        for (Reason r : new Reason[] {Reason.QUEUE_FULL, Reason.STANDBY_MISSING, Reason.STORE_UNAVAILABLE}) {
            refusal(r);
        }
        for (String cause : new String[] {"stale_view", "lock_timeout", "one_statement_refused"}) {
            redo(cause);
        }
        engineCounters(registry, engine);
        for (int lane = 0; lane < engine.laneCount(); lane++) {
            int l = lane;
            Gauge.builder(Metrics.PREFIX + "lane.queue.depth", engine, e -> e.queueDepth(l))
                    .tag("lane", Integer.toString(lane)).description("operations waiting in the lane's queue")
                    .register(registry);
        }
        Gauge.builder(Metrics.PREFIX + "db.writes.paused", engine, e -> e.gate().closedBecause() == null ? 0 : 1)
                .description("1 while writes are refused because no synchronous standby is connected")
                .register(registry);
    }

    private static void engineCounters(MeterRegistry registry, LaneEngine engine) {
        counter(registry, "lane.batches", "batches the lanes took", engine, s -> s.stats().batches());
        counter(registry, "lane.operations", "operations the lanes' batches applied", engine,
                s -> s.stats().opsApplied());
        counter(registry, "lane.commits", "transactions the lanes committed", engine, s -> s.stats().transactions());
        counter(registry, "lane.borrows", "borrows committed: a dry bucket taking units from a sibling", engine,
                s -> s.stats().borrows());
        counter(registry, "lane.borrowed.units", "units moved by borrows", engine, s -> s.stats().borrowedUnits());
        counter(registry, "lane.lock.timeouts", "batches decided again after a borrow's lock wait ran out", engine,
                s -> s.stats().lockTimeouts());
        counter(registry, "lane.collapses", "items collapsed into bucket 0", engine, LaneEngine::collapses);
        counter(registry, "lane.bucket.loads", "buckets loaded whole into a lane's cache", engine,
                s -> s.stats().bucketLoads());
        counter(registry, "lane.check.violations", "batches a CHECK constraint refused (each a bug)", engine,
                s -> s.stats().checkViolations());
    }

    private static void counter(MeterRegistry registry, String name, String description, LaneEngine engine,
                                ToDoubleFunction<LaneEngine> f) {
        FunctionCounter.builder(Metrics.PREFIX + name, engine, f).description(description).register(registry);
    }

    private Counter redo(String cause) {
        return redos.computeIfAbsent(cause, c -> Counter.builder(Metrics.PREFIX + "lane.redos").tag("cause", c)
                .description("batches decided again, by why the database refused the lane's view").register(registry));
    }

    private Counter refusal(Reason reason) {
        return refusals.computeIfAbsent(reason, r -> Counter.builder(Metrics.PREFIX + "lane.refusals")
                .tag("reason", r.name()).description("operations refused before anything was written")
                .register(registry));
    }

    @Override
    public void batch(int lane, int operations) {
        batchSize.record(operations);
    }

    @Override
    public void committed(int lane, Decided decided, long nowMicros, long decideToCommitNanos) {
        commit.record(decideToCommitNanos, TimeUnit.NANOSECONDS);
        if (decided == null) {
            return;
        }
        long created = 0;
        long createdUnits = 0;
        for (Outcome o : decided.outcomes()) {
            if (o instanceof Outcome.Reserved r) {
                created++;
                createdUnits += r.quantity();
            }
        }
        if (created > 0) {
            holds.get(HoldEvent.CREATED).increment(created);
            units.get(HoldEvent.CREATED).increment(createdUnits);
        }
        for (Decided.Step s : decided.steps()) {
            HoldEvent e = switch (s.after().state()) {
                case SOLD -> HoldEvent.CONFIRMED;
                case RELEASED -> HoldEvent.RELEASED;
                default -> null;
            };
            if (e != null && s.before().state() != s.after().state()) {
                holds.get(e).increment();
                units.get(e).increment(s.after().qty());
            }
        }
        for (HoldFacts h : decided.expired()) {
            holds.get(HoldEvent.EXPIRED).increment();
            units.get(HoldEvent.EXPIRED).increment(h.qty());
            expiryLag.record(Math.max(0, nowMicros - h.expiresAtMicros()), TimeUnit.MICROSECONDS);
        }
    }

    @Override
    public void redo(int lane, String cause) {
        redo(cause).increment();
    }

    @Override
    public void refused(Reason reason, int operations) {
        refusal(reason).increment(operations);
    }

    @Override
    public void unknownOutcome(int lane, int operations) {
        unknown.increment(operations);
    }
}
