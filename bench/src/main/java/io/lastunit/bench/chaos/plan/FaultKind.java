package io.lastunit.bench.chaos.plan;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The faults a chaos run can inject, each with what it targets, how long it may last, and how
 * long its own start and heal may take (a PostgreSQL stop and start, a promotion and a standby
 * rebuilt), which the schedule keeps free before the next fault.
 */
public enum FaultKind {
    /** The primary stopped with {@code pg_ctl stop -m fast}, started again after the duration. */
    PG_RESTART_FAST("pg-restart-fast", Target.POSTGRES, 1_000, 4_000, 3_000, false),
    /** The primary stopped with {@code -m immediate} (crash recovery at its start). */
    PG_RESTART_IMMEDIATE("pg-restart-immediate", Target.POSTGRES, 1_000, 4_000, 4_000, false),
    /** kill -9 of the primary's postmaster, the synchronous standby promoted; heal: a new synchronous standby. */
    PG_FAILOVER("pg-failover", Target.POSTGRES, 0, 0, 15_000, true),
    /** The shard↔PostgreSQL link: every connection reset, new ones too. */
    SHARD_PG_CUT("shard-pg-cut", Target.SHARD_DATABASE_LINK, 1_000, 5_000, 500, false),
    /** The shard↔PostgreSQL link: nothing moves, nothing closes. */
    SHARD_PG_BLACKHOLE("shard-pg-blackhole", Target.SHARD_DATABASE_LINK, 2_000, 6_000, 500, false),
    /** The shard↔PostgreSQL link: 20 ms (+ up to 10 ms) on every chunk. */
    SHARD_PG_LATENCY("shard-pg-latency", Target.SHARD_DATABASE_LINK, 3_000, 8_000, 500, false),
    /** The shard↔PostgreSQL link: 64 KiB/s each way. */
    SHARD_PG_THROTTLE("shard-pg-throttle", Target.SHARD_DATABASE_LINK, 3_000, 8_000, 500, false),
    /** The router↔shard link: every connection reset, new ones too. */
    ROUTER_SHARD_CUT("router-shard-cut", Target.SHARD_LINK, 1_000, 5_000, 500, false),
    /** The router↔shard link: 50 ms (+ up to 25 ms) on every chunk. */
    ROUTER_SHARD_LATENCY("router-shard-latency", Target.SHARD_LINK, 3_000, 8_000, 500, false),
    /** Everyone↔ZooKeeper: every connection reset, new ones too, for less than a session. */
    ZOOKEEPER_CUT("zookeeper-cut", Target.ZOOKEEPER, 1_000, 4_000, 1_000, false),
    /** A shard node's clock 15 minutes ahead of, or behind, the database's. */
    CLOCK_SKEW("clock-skew", Target.SHARD_CLOCK, 3_000, 8_000, 0, false),
    /** The shard node's JVM stopped (SIGSTOP), for less than its ZooKeeper session, then SIGCONT. */
    SHARD_PAUSE("shard-pause", Target.SHARD_PROCESS, 2_000, 6_000, 1_000, false),
    /** The shard node's JVM killed (SIGKILL); heal: a new JVM on the same database and port. */
    SHARD_KILL("shard-kill", Target.SHARD_PROCESS, 1_000, 4_000, 25_000, false);

    /**
     * What a fault is applied to. A {@link #SHARD_PROCESS} is the first shard, which then runs as
     * its own JVM; a {@link #SHARD_CLOCK} is a shard node in the run's own JVM (its clock is
     * injected), so one of the others when there is a process shard.
     */
    public enum Target {
        POSTGRES, SHARD_DATABASE_LINK, SHARD_LINK, ZOOKEEPER, SHARD_CLOCK, SHARD_PROCESS;

        /** Whether the target is one per shard (the schedule picks the shard). */
        public boolean perShard() {
            return this != POSTGRES && this != ZOOKEEPER;
        }
    }

    private final String label;
    private final Target target;
    private final long durationMinMs;
    private final long durationMaxMs;
    private final long settleMs;
    private final boolean once;

    FaultKind(String label, Target target, long durationMinMs, long durationMaxMs, long settleMs, boolean once) {
        this.label = label;
        this.target = target;
        this.durationMinMs = durationMinMs;
        this.durationMaxMs = durationMaxMs;
        this.settleMs = settleMs;
        this.once = once;
    }

    /** The name on the command line and in the table. */
    public String label() {
        return label;
    }

    public Target target() {
        return target;
    }

    public Duration durationMin() {
        return Duration.ofMillis(durationMinMs);
    }

    public Duration durationMax() {
        return Duration.ofMillis(durationMaxMs);
    }

    /** Time kept free after the fault's duration for its start and heal to finish. */
    public Duration settle() {
        return Duration.ofMillis(settleMs);
    }

    /**
     * At most once per run: the promoted server's successor standby is not in the shards' JDBC URL,
     * so a second failover would have nowhere to go.
     */
    public boolean once() {
        return once;
    }

    public static Optional<FaultKind> byLabel(String label) {
        String l = label.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(k -> k.label.equals(l)).findFirst();
    }

    public static List<String> labels() {
        return Arrays.stream(values()).map(FaultKind::label).toList();
    }
}
