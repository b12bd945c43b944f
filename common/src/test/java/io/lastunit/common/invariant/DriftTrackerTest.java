package io.lastunit.common.invariant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.common.invariant.DriftTracker.PersistentDrift;
import io.lastunit.api.shard.v1.ItemLevel;
import java.util.List;
import org.junit.jupiter.api.Test;

class DriftTrackerTest {
    private static final ItemKey SHOE = new ItemKey("acme", "shoe");
    private static final ItemKey SOCK = new ItemKey("acme", "sock");

    private static ItemBalance balance(ItemKey item, long drift) {
        return new ItemBalance(item, 2, 100, 100 + drift, 0, List.of());
    }

    @Test
    void tornRead_isNotReported_whenTheNextCheckBalances() {
        // A transfer of 10 from A to B: the check read A before step 1 and B after step 2, so it
        // counted the 10 units twice. The next check reads a settled state.
        ItemLevel aBefore = ItemLevel.newBuilder().setTenantId("acme").setItemId("shoe").setBase(100).setAllotment(100).build();
        ItemLevel bAfter = ItemLevel.newBuilder().setTenantId("acme").setItemId("shoe").setBase(50).setAllotment(60).build();
        ItemLevel aAfter = aBefore.toBuilder().setAllotment(90).build();
        DriftTracker tracker = new DriftTracker(2);

        List<ItemBalance> torn = CrossShardInvariant.balances(List.of(aBefore, bAfter), List.of());
        assertThat(torn.get(0).drift()).isEqualTo(10);
        assertThat(tracker.observe(torn)).isEmpty();
        assertThat(tracker.drifting()).isEqualTo(1);

        assertThat(tracker.observe(CrossShardInvariant.balances(List.of(aAfter, bAfter), List.of()))).isEmpty();
        assertThat(tracker.drifting()).isZero();
    }

    @Test
    void reportsOnTheKthConsecutiveDrift_andKeepsReportingWhileItLasts() {
        DriftTracker tracker = new DriftTracker(2);
        assertThat(tracker.observe(List.of(balance(SHOE, -3)))).isEmpty();
        List<PersistentDrift> second = tracker.observe(List.of(balance(SHOE, -3)));
        assertThat(second).singleElement().satisfies(d -> {
            assertThat(d.checks()).isEqualTo(2);
            assertThat(d.isNew(2)).isTrue();
            assertThat(d.balance().drift()).isEqualTo(-3);
        });
        List<PersistentDrift> third = tracker.observe(List.of(balance(SHOE, -4)));
        assertThat(third).singleElement().satisfies(d -> {
            assertThat(d.checks()).isEqualTo(3);
            assertThat(d.isNew(2)).isFalse();
            assertThat(d.balance().drift()).isEqualTo(-4); // the latest balance
        });
    }

    @Test
    void withOneCheck_reportsAtOnce() {
        DriftTracker tracker = new DriftTracker(1);
        assertThat(tracker.observe(List.of(balance(SHOE, 1), balance(SOCK, 0))))
                .extracting(d -> d.balance().item()).containsExactly(SHOE);
    }

    @Test
    void aBalancedCheck_resetsTheStreak() {
        DriftTracker tracker = new DriftTracker(2);
        tracker.observe(List.of(balance(SHOE, 5)));
        tracker.observe(List.of(balance(SHOE, 0)));
        assertThat(tracker.observe(List.of(balance(SHOE, 5)))).isEmpty();
        assertThat(tracker.observe(List.of(balance(SHOE, 5)))).hasSize(1);
    }

    @Test
    void anItemLeftOutOfACheck_losesItsStreak() {
        DriftTracker tracker = new DriftTracker(2);
        tracker.observe(List.of(balance(SHOE, 5), balance(SOCK, 1)));
        // SHOE's cell could not be read this time: not judged, streak gone
        assertThat(tracker.observe(List.of(balance(SOCK, 1))))
                .extracting(d -> d.balance().item()).containsExactly(SOCK);
        assertThat(tracker.observe(List.of(balance(SHOE, 5), balance(SOCK, 1))))
                .extracting(d -> d.balance().item()).containsExactly(SOCK);
    }

    @Test
    void itemsAreTrackedSeparately_andAnsweredInOrder() {
        DriftTracker tracker = new DriftTracker(3);
        tracker.observe(List.of(balance(SOCK, 1)));
        tracker.observe(List.of(balance(SOCK, 1), balance(SHOE, 1)));
        assertThat(tracker.observe(List.of(balance(SOCK, 1), balance(SHOE, 1))))
                .extracting(d -> d.balance().item()).containsExactly(SOCK);
        assertThat(tracker.observe(List.of(balance(SHOE, 1), balance(SOCK, 1))))
                .extracting(d -> d.balance().item()).containsExactly(SHOE, SOCK);
    }

    @Test
    void refusesConsecutiveOutOfRange() {
        assertThatThrownBy(() -> new DriftTracker(0)).hasMessageContaining("consecutive=0");
        assertThatThrownBy(() -> new DriftTracker(DriftTracker.CONSECUTIVE_MAX + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
