package io.lastunit.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.bench.chaos.plan.FaultKind;
import io.lastunit.bench.chaos.plan.ScheduledFault;
import io.lastunit.common.HoldId;
import io.lastunit.testkit.ManualClock;
import io.lastunit.testkit.faults.History;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The checker and the fault windows, on histories and holds made by hand. */
class SaleCheckTest {
    private static final long MS = 1_000_000L;
    private final ManualClock clock = new ManualClock();
    private final History history = new History(clock::nanoTime, 1_000);

    private static String holdId(int n) {
        return HoldId.create(ChaosPlatform.TENANT, "item-0", "local", 0, 1_000L + n).encode();
    }

    private static String uuid(String holdId) {
        return HoldId.decode(holdId, "hold_id").uuid().toString();
    }

    @Test
    void judge_findsNothing_whenEveryToldHoldIsThere_andTheItemIsExact() {
        String a = holdId(1);
        String b = holdId(2);
        history.invoke("buyer", "reserve", "k1").ok(a);
        history.invoke("buyer", "reserve", "k2").unknown("UNAVAILABLE");
        history.invoke("buyer", "reserve", "k3").fail("SOLD_OUT");
        Map<String, ChaosSale.Answer> answers = Map.of("k1", new ChaosSale.Answer("k1", 0, a),
                "k2", new ChaosSale.Answer("k2", 0, b), "k3", new ChaosSale.Answer("k3", 0, null));
        List<SaleCheck.Hold> holds = List.of(new SaleCheck.Hold("k1", 0, uuid(a), "HELD"),
                new SaleCheck.Hold("k2", 0, uuid(b), "HELD"));
        SaleCheck.Result r = SaleCheck.judge(history.entries(), answers, holds, Map.of(0, 3L), 2);
        assertThat(r.problems()).isEmpty();
        assertThat(r.lost()).isZero();
        assertThat(r.oversold()).isZero();
        assertThat(r.holdsInDatabase()).isEqualTo(2);
        assertThat(r.expected()).isEqualTo(2);
    }

    @Test
    void judge_countsALostHold_anOversoldUnit_andAHoldNeverTold() {
        String a = holdId(1);
        history.invoke("buyer", "reserve", "k1").ok(a);
        history.invoke("buyer", "reserve", "k2").fail("SOLD_OUT");
        history.invoke("buyer", "reserve", "k3").fail("SOLD_OUT");
        Map<String, ChaosSale.Answer> answers = new HashMap<>();
        answers.put("k1", new ChaosSale.Answer("k1", 0, a));
        answers.put("k2", new ChaosSale.Answer("k2", 0, null));
        answers.put("k3", new ChaosSale.Answer("k3", 0, null));
        // k1 missing; k2 and k3 held though told SOLD_OUT: 2 holds of an item of 1 unit.
        List<SaleCheck.Hold> holds = List.of(new SaleCheck.Hold("k2", 0, uuid(holdId(2)), "HELD"),
                new SaleCheck.Hold("k3", 0, uuid(holdId(3)), "HELD"));
        SaleCheck.Result r = SaleCheck.judge(history.entries(), answers, holds, Map.of(0, 3L), 1);
        assertThat(r.lost()).isEqualTo(1);
        assertThat(r.lostKeys()).containsExactly("k1");
        assertThat(r.oversold()).isEqualTo(1);
        assertThat(r.heldButToldSoldOut()).isEqualTo(2);
        assertThat(r.exact()).isFalse();
    }

    @Test
    void windows_countWhatClientsSaw_betweenStartAndHeal_andTheRecoveryAfter() {
        clock.advance(Duration.ofMillis(100));
        history.invoke("buyer", "reserve", "before").ok(holdId(1)); // at 100 ms: outside
        clock.advance(Duration.ofMillis(100)); // 200 ms: the fault starts
        History.Op slow = history.invoke("buyer", "reserve", "slow");
        history.invoke("buyer", "reserve", "u").unknown("UNAVAILABLE");
        history.invoke("buyer", "reserve", "d").unknown("DEADLINE_EXCEEDED");
        history.invoke("buyer", "reserve", "s").fail("SOLD_OUT");
        clock.advance(Duration.ofMillis(300)); // 500 ms: healed
        clock.advance(Duration.ofMillis(40));
        slow.ok(holdId(2)); // the first ack after the heal, 40 ms later; it took 340 ms
        ScheduledFault f = new ScheduledFault(1, FaultKind.SHARD_PG_CUT, "s1", Duration.ofMillis(200),
                Duration.ofMillis(300), "");
        FaultRunner.Applied applied = new FaultRunner.Applied(f, 200 * MS, 200 * MS, 500 * MS, 500 * MS, null);
        List<FaultWindows.Row> rows = FaultWindows.rows(history.entries(), List.of(applied), Set.of("slow"));
        FaultWindows.Row row = rows.get(0);
        assertThat(row.ok()).isEqualTo(1);
        assertThat(row.unavailable()).isEqualTo(1);
        assertThat(row.unknown()).isEqualTo(1);
        assertThat(row.soldOut()).isEqualTo(1);
        assertThat(row.maxMillis()).isEqualTo(340);
        assertThat(row.recoveryMillis()).isEqualTo(40);
        assertThat(row.lost()).isEqualTo(1);
    }
}
