package io.lastunit.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.bench.chaos.plan.FaultKind;
import io.lastunit.bench.chaos.plan.ScheduledFault;
import io.lastunit.testkit.faults.Nemesis;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The runner's bookkeeping, with nemeses that only count (times are not asserted). */
class FaultRunnerTest {
    private static ScheduledFault fault(int n, FaultKind kind) {
        return new ScheduledFault(n, kind, "s1", Duration.ofMillis(10L * n), Duration.ofMillis(20), "");
    }

    @Test
    void everyFault_isAppliedAndHealed_inOrder_andAFailedStartIsRecordedAndStillHealed() throws Exception {
        List<String> calls = new CopyOnWriteArrayList<>();
        AtomicInteger stopFailures = new AtomicInteger(2);
        List<ScheduledFault> faults = List.of(fault(1, FaultKind.SHARD_PG_CUT), fault(2, FaultKind.PG_FAILOVER),
                fault(3, FaultKind.ZOOKEEPER_CUT));
        FaultRunner runner = new FaultRunner(faults, f -> switch (f.number()) {
            case 1 -> Nemesis.of("one", () -> calls.add("start 1"), () -> calls.add("stop 1"));
            case 2 -> Nemesis.of("two", () -> calls.add("start 2"), () -> {
                if (stopFailures.getAndDecrement() > 0) {
                    throw new IllegalStateException("not yet");
                }
                calls.add("stop 2");
            });
            default -> Nemesis.of("three", () -> {
                throw new IllegalStateException("cannot");
            }, () -> calls.add("stop 3"));
        }, System.nanoTime(), line -> { });
        runner.start();
        runner.stop(60_000);

        assertThat(calls).containsExactly("start 1", "stop 1", "start 2", "stop 2");
        List<FaultRunner.Applied> applied = runner.applied();
        assertThat(applied).hasSize(3);
        assertThat(applied.get(0).ok()).isTrue();
        assertThat(applied.get(1).ok()).as("healed on its third try").isTrue();
        assertThat(applied.get(1).clientsHealedNanos()).as("a failover's clients are whole at the promotion")
                .isEqualTo(applied.get(1).appliedNanos());
        assertThat(applied.get(0).clientsHealedNanos()).isEqualTo(applied.get(0).healedNanos());
        assertThat(applied.get(2).ok()).isFalse();
        assertThat(applied.get(2).error()).startsWith("not applied: cannot");
        for (FaultRunner.Applied a : applied) {
            assertThat(a.healedNanos()).isGreaterThanOrEqualTo(a.startNanos());
        }
    }
}
