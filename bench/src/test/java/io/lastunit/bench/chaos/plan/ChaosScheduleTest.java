package io.lastunit.bench.chaos.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChaosScheduleTest {
    private static final List<FaultKind> ALL = Arrays.asList(FaultKind.values());
    private static final List<String> SHARDS = List.of("shared-local-1", "shared-local-2");

    @Test
    void plan_isTheSame_forTheSameSeed() {
        ChaosSchedule a = ChaosSchedule.plan(42, Duration.ofMinutes(3), ALL, SHARDS);
        ChaosSchedule b = ChaosSchedule.plan(42, Duration.ofMinutes(3), ALL, SHARDS);
        assertThat(a.faults()).isNotEmpty().isEqualTo(b.faults());
        assertThat(a).isEqualTo(b);
    }

    @Test
    void plan_differs_forAnotherSeed() {
        assertThat(ChaosSchedule.plan(42, Duration.ofMinutes(3), ALL, SHARDS).faults())
                .isNotEqualTo(ChaosSchedule.plan(43, Duration.ofMinutes(3), ALL, SHARDS).faults());
    }

    @Test
    void plan_keepsItsBounds_forManySeedsAndLengths() {
        for (long seed = 0; seed < 300; seed++) {
            for (Duration run : List.of(Duration.ofSeconds(30), Duration.ofSeconds(45), Duration.ofMinutes(3),
                    Duration.ofMinutes(60))) {
                assertBounds(ChaosSchedule.plan(seed, run, ALL, SHARDS), ALL);
            }
        }
    }

    @Test
    void plan_drawsOnlyTheGivenKinds() {
        List<FaultKind> some = List.of(FaultKind.PG_RESTART_FAST, FaultKind.ROUTER_SHARD_CUT);
        for (long seed = 0; seed < 100; seed++) {
            ChaosSchedule s = ChaosSchedule.plan(seed, Duration.ofMinutes(2), some, SHARDS);
            assertBounds(s, some);
            assertThat(s.faults()).extracting(ScheduledFault::kind).isSubsetOf(some);
        }
    }

    @Test
    void plan_drawsEveryKind_overEnoughRuns() {
        java.util.Set<FaultKind> seen = java.util.EnumSet.noneOf(FaultKind.class);
        for (long seed = 0; seed < 50; seed++) {
            ChaosSchedule.plan(seed, Duration.ofMinutes(5), ALL, SHARDS).faults().forEach(f -> seen.add(f.kind()));
        }
        assertThat(seen).containsExactlyInAnyOrder(FaultKind.values());
    }

    @Test
    void plan_refusesRunsOutOfBounds_andEmptyLists() {
        assertThatThrownBy(() -> ChaosSchedule.plan(1, Duration.ofSeconds(29), ALL, SHARDS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside");
        assertThatThrownBy(() -> ChaosSchedule.plan(1, Duration.ofMinutes(61), ALL, SHARDS))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChaosSchedule.plan(1, Duration.ofMinutes(1), List.of(), SHARDS))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChaosSchedule.plan(1, Duration.ofMinutes(1), ALL, List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChaosSchedule.plan(1, Duration.ofMinutes(1), ALL, List.of("only")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 2 shards");
    }

    private static void assertBounds(ChaosSchedule s, List<FaultKind> kinds) {
        Duration end = s.run().minus(ChaosSchedule.tail(s.run()));
        Duration previousClear = ChaosSchedule.warmUp(s.run());
        int failovers = 0;
        for (int i = 0; i < s.faults().size(); i++) {
            ScheduledFault f = s.faults().get(i);
            assertThat(f.number()).isEqualTo(i + 1);
            assertThat(f.at()).as("%s starts after the previous one cleared", f).isGreaterThanOrEqualTo(previousClear);
            assertThat(f.clearAt()).as("%s heals before the quiet tail", f).isLessThanOrEqualTo(end);
            assertThat(f.duration()).isBetween(f.kind().durationMin(), f.kind().durationMax());
            assertThat(kinds).contains(f.kind());
            previousClear = f.clearAt().plus(ChaosSchedule.GAP_MIN);
            failovers += f.kind() == FaultKind.PG_FAILOVER ? 1 : 0;
            if (f.kind().target().perShard()) {
                assertThat(SHARDS).contains(f.target());
            }
            if (f.kind().target() == FaultKind.Target.SHARD_PROCESS) {
                assertThat(f.target()).as("the process shard").isEqualTo(SHARDS.get(0));
            }
            if (f.kind() == FaultKind.CLOCK_SKEW && kinds.contains(FaultKind.SHARD_KILL)) {
                assertThat(f.target()).as("a clock is skewed in this JVM").isNotEqualTo(SHARDS.get(0));
            }
        }
        assertThat(failovers).as("failovers in %s", s).isLessThanOrEqualTo(1);
        assertThat(s.faulted()).isLessThanOrEqualTo(s.run().dividedBy(2));
        assertThat(s.faults().size()).isLessThanOrEqualTo(ChaosSchedule.FAULTS_MAX);
    }
}
