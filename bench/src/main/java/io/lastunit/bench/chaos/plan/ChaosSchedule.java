package io.lastunit.bench.chaos.plan;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The faults of a chaos run, drawn from a seed: the same seed, length, kinds and shards give the
 * same schedule, on any JVM ({@link java.util.Random}'s sequence is specified). Pure: no clock, no
 * I/O; the run carries it out.
 *
 * <p>The shape: a quiet warm-up ({@link #warmUp}), then faults one at a time, each followed by its
 * kind's settling time and a quiet gap of {@link #GAP_MIN}..{@link #GAP_MAX} so that recovery shows
 * before the next one; a quiet tail ({@link #tail}) in which every unknown is answered before the
 * sale ends. One fault at a time means no two overlap on any target, and what the clients saw in a
 * fault's window is that fault's doing. Bounds: at most {@link #FAULTS_MAX} faults, faulted time at
 * most half the run, {@link FaultKind#once()} kinds at most once. Immutable.
 */
public final class ChaosSchedule {
    public static final Duration RUN_MIN = Duration.ofSeconds(30);
    public static final Duration RUN_MAX = Duration.ofMinutes(60);
    public static final Duration GAP_MIN = Duration.ofSeconds(3);
    public static final Duration GAP_MAX = Duration.ofSeconds(8);
    public static final int FAULTS_MAX = 500;
    /** How far a {@link FaultKind#CLOCK_SKEW} moves a shard node's clock. */
    public static final Duration SKEW = Duration.ofMinutes(15);
    /** Durations are drawn in steps of this. */
    static final long STEP_MS = 100;

    private final long seed;
    private final Duration run;
    private final List<ScheduledFault> faults;

    private ChaosSchedule(long seed, Duration run, List<ScheduledFault> faults) {
        this.seed = seed;
        this.run = run;
        this.faults = List.copyOf(faults);
    }

    /**
     * Draws a schedule for a run of {@code run} over {@code kinds} (repeats allowed, they weigh
     * more) and {@code shards} (the per-shard kinds pick one of them).
     */
    public static ChaosSchedule plan(long seed, Duration run, List<FaultKind> kinds, List<String> shards) {
        if (run.compareTo(RUN_MIN) < 0 || run.compareTo(RUN_MAX) > 0) {
            throw new IllegalArgumentException("run=" + run + " is outside [" + RUN_MIN + ", " + RUN_MAX + "]");
        }
        if (kinds.isEmpty() || shards.isEmpty()) {
            throw new IllegalArgumentException("kinds=" + kinds + ", shards=" + shards + ": neither may be empty");
        }
        java.util.Optional<String> processShard = processShard(kinds, shards);
        List<String> clockShards = processShard.isPresent() ? shards.subList(1, shards.size()) : shards;
        if (clockShards.isEmpty() && kinds.contains(FaultKind.CLOCK_SKEW)) {
            throw new IllegalArgumentException("clock-skew needs a shard node in this JVM besides the one that runs"
                    + " as its own process for " + FaultKind.SHARD_PAUSE.label() + "/" + FaultKind.SHARD_KILL.label()
                    + ": give at least 2 shards");
        }
        Random random = new Random(seed);
        List<FaultKind> open = new ArrayList<>(kinds);
        List<ScheduledFault> faults = new ArrayList<>();
        long runMs = run.toMillis();
        long endMs = runMs - tail(run).toMillis();
        long faultedMaxMs = runMs / 2;
        long faultedMs = 0;
        long t = warmUp(run).toMillis();
        while (faults.size() < FAULTS_MAX && !open.isEmpty()) {
            FaultKind kind = open.get(random.nextInt(open.size()));
            long steps = (kind.durationMax().toMillis() - kind.durationMin().toMillis()) / STEP_MS;
            long durationMs = kind.durationMin().toMillis() + STEP_MS * (steps == 0 ? 0 : random.nextInt((int) steps + 1));
            String target = switch (kind.target()) {
                case POSTGRES -> "postgres";
                case ZOOKEEPER -> "zookeeper";
                case SHARD_PROCESS -> processShard.orElseThrow();
                case SHARD_CLOCK -> clockShards.get(random.nextInt(clockShards.size()));
                case SHARD_DATABASE_LINK, SHARD_LINK -> shards.get(random.nextInt(shards.size()));
            };
            String detail = kind == FaultKind.CLOCK_SKEW ? (random.nextBoolean() ? "+" : "-") + SKEW.toMinutes() + " min"
                    : "";
            long gapMs = GAP_MIN.toMillis() + STEP_MS * random.nextInt(
                    (int) ((GAP_MAX.toMillis() - GAP_MIN.toMillis()) / STEP_MS) + 1);
            if (t + durationMs + kind.settle().toMillis() > endMs || faultedMs + durationMs > faultedMaxMs) {
                break;
            }
            ScheduledFault f = new ScheduledFault(faults.size() + 1, kind, target, Duration.ofMillis(t),
                    Duration.ofMillis(durationMs), detail);
            faults.add(f);
            faultedMs += durationMs;
            if (kind.once()) {
                open.removeIf(k -> k == kind);
            }
            t = f.clearAt().toMillis() + gapMs;
        }
        return new ChaosSchedule(seed, run, faults);
    }

    /**
     * The shard that runs as its own JVM: the first, when {@code kinds} has a fault of a
     * {@link FaultKind.Target#SHARD_PROCESS}; else none, and every shard runs in the run's JVM.
     */
    public static java.util.Optional<String> processShard(List<FaultKind> kinds, List<String> shards) {
        return kinds.stream().anyMatch(k -> k.target() == FaultKind.Target.SHARD_PROCESS) && !shards.isEmpty()
                ? java.util.Optional.of(shards.get(0)) : java.util.Optional.empty();
    }

    /** Quiet time at the start: a tenth of the run, 5..30 s. */
    public static Duration warmUp(Duration run) {
        return clamp(run.dividedBy(10), Duration.ofSeconds(5), Duration.ofSeconds(30));
    }

    /** Quiet time at the end, when no fault is on: a tenth of the run, 8..60 s. */
    public static Duration tail(Duration run) {
        return clamp(run.dividedBy(10), Duration.ofSeconds(8), Duration.ofSeconds(60));
    }

    private static Duration clamp(Duration d, Duration min, Duration max) {
        return d.compareTo(min) < 0 ? min : d.compareTo(max) > 0 ? max : d;
    }

    public long seed() {
        return seed;
    }

    public Duration run() {
        return run;
    }

    public List<ScheduledFault> faults() {
        return faults;
    }

    /** The sum of the faults' durations (settling not counted). */
    public Duration faulted() {
        return faults.stream().map(ScheduledFault::duration).reduce(Duration.ZERO, Duration::plus);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChaosSchedule s && s.seed == seed && s.run.equals(run) && s.faults.equals(faults);
    }

    @Override
    public int hashCode() {
        return faults.hashCode();
    }

    @Override
    public String toString() {
        return "ChaosSchedule[seed=" + seed + ", run=" + run + ", faults=" + faults.size() + "]";
    }
}
