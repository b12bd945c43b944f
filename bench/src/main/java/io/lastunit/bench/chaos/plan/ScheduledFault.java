package io.lastunit.bench.chaos.plan;

import java.time.Duration;

/**
 * One fault of a schedule: the {@code number}-th (from 1), of {@code kind}, on {@code target} (a
 * shard id for the per-shard kinds, else the target's name), starting {@code at} after the run's
 * start and healed {@code duration} later; {@code detail} is the kind's parameter in words (the
 * skew's direction), empty when it has none.
 */
public record ScheduledFault(int number, FaultKind kind, String target, Duration at, Duration duration,
                             String detail) {
    /** When the fault and its settling are over: nothing else starts before. */
    public Duration clearAt() {
        return at.plus(duration).plus(kind.settle());
    }

    /** The skew of a {@link FaultKind#CLOCK_SKEW}: ahead (positive) or behind. */
    public Duration skew() {
        if (kind != FaultKind.CLOCK_SKEW) {
            throw new IllegalStateException(kind.label() + " has no skew");
        }
        return detail.startsWith("-") ? ChaosSchedule.SKEW.negated() : ChaosSchedule.SKEW;
    }

    @Override
    public String toString() {
        String length = kind == FaultKind.PG_FAILOVER ? "then a new synchronous standby"
                : String.format(java.util.Locale.ROOT, "for %.1f s", duration.toMillis() / 1e3);
        return String.format(java.util.Locale.ROOT, "#%d %s on %s at +%.1f s %s%s", number, kind.label(), target,
                at.toMillis() / 1e3, length, detail.isEmpty() ? "" : " (" + detail + ")");
    }
}
