package io.lastunit.balancer.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.common.invariant.ItemKey;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BalancePolicyTest {
    private static final BalancePolicy POLICY = new BalancePolicy(0.25, 16, 0.02, 64, 0.1);
    private static final ItemKey ITEM = new ItemKey("acme", "shoe");

    private static RegionLevel region(String name, long available, long base, boolean collapsed) {
        return new RegionLevel(name, "s-" + name, available, base, collapsed, 0);
    }

    private static ItemView view(long eu, long us, long ap) {
        return new ItemView(ITEM, "eu", List.of(region("ap", ap, 1000, false), region("eu", eu, 1000, false),
                region("us", us, 1000, false)), true);
    }

    @Test
    void collapseThreshold_isTheLargerOfTheMinimumAndTheFraction() {
        assertThat(POLICY.collapseThreshold(1_000)).isEqualTo(64);
        assertThat(POLICY.collapseThreshold(3_200)).isEqualTo(64);
        assertThat(POLICY.collapseThreshold(3_201)).isEqualTo(65);
        assertThat(POLICY.collapseThreshold(100_000)).isEqualTo(2_000);
    }

    @Test
    void collapseDue_atOrUnderTheThreshold_onlyForMultiRegionItemsNotYetCollapsed() {
        assertThat(POLICY.collapseDue(view(30, 20, 14))).isTrue();  // 64
        assertThat(POLICY.collapseDue(view(30, 20, 15))).isFalse(); // 65
        ItemView single = new ItemView(ITEM, "eu", List.of(region("eu", 3, 1000, false)), true);
        assertThat(POLICY.collapseDue(single)).isFalse();
        ItemView collapsed = new ItemView(ITEM, "eu", List.of(region("eu", 10, 100, false),
                region("us", 0, 100, true)), true);
        assertThat(POLICY.collapseDue(collapsed)).isFalse();
        assertThat(collapsed.collapsed()).isTrue();
    }

    @Test
    void collapse_shipsEveryNonHomeRegionHome_withWhatItHas() {
        List<PlannedMove> moves = POLICY.collapse(view(30, 20, 0));
        assertThat(moves).hasSize(2).allSatisfy(m -> {
            assertThat(m.to().region()).isEqualTo("eu");
            assertThat(m.collapse()).isTrue();
            assertThat(m.minQuantity()).isZero();
        });
        assertThat(moves).extracting(m -> m.from().region() + ":" + m.maxQuantity())
                .containsExactly("ap:1", "us:20"); // ap has nothing: the shard only marks it collapsed
    }

    @Test
    void collapse_ofACollapsedItem_shipsOnlyWhatShowedUp() {
        ItemView v = new ItemView(ITEM, "eu", List.of(region("ap", 0, 100, true), region("eu", 50, 100, false),
                region("us", 7, 100, true)), true);
        assertThat(POLICY.collapse(v)).singleElement().satisfies(m -> {
            assertThat(m.from().region()).isEqualTo("us");
            assertThat(m.maxQuantity()).isEqualTo(7);
        });
        ItemView settled = new ItemView(ITEM, "eu", List.of(region("eu", 50, 100, false),
                region("us", 0, 100, true)), true);
        assertThat(POLICY.collapse(settled)).isEmpty();
    }

    @Test
    void targets_followDemand_withAFloor_andSumToTheRemainingStock() {
        Map<String, Long> t = POLICY.targets(view(300, 300, 300), Map.of("us", 90.0, "eu", 10.0));
        assertThat(t.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(900);
        assertThat(t.get("ap")).isEqualTo(30);           // floor only: 0.1 / 3 of 900
        assertThat(t.get("eu")).isBetween(110L, 112L);   // 30 + 0.9 * 900 * 0.1
        assertThat(t.get("us")).isBetween(758L, 760L);   // 30 + 0.9 * 900 * 0.9
    }

    @Test
    void targets_withoutDemand_areEqualShares() {
        Map<String, Long> t = POLICY.targets(view(500, 0, 501), Map.of());
        assertThat(t.values()).containsExactlyInAnyOrder(334L, 333L, 334L);
    }

    @Test
    void rebalance_movesTowardsDemand_largestNeedFromLargestExcess() {
        List<PlannedMove> moves = POLICY.rebalance(view(400, 20, 400), Map.of("us", 5.0));
        assertThat(moves).isNotEmpty().allSatisfy(m -> {
            assertThat(m.to().region()).isEqualTo("us");
            assertThat(m.maxQuantity()).isGreaterThanOrEqualTo(16);
            assertThat(m.collapse()).isFalse();
        });
        long moved = moves.stream().mapToLong(PlannedMove::maxQuantity).sum();
        Map<String, Long> t = POLICY.targets(view(400, 20, 400), Map.of("us", 5.0));
        assertThat(20 + moved).isEqualTo(t.get("us"));
    }

    @Test
    void rebalance_doesNothing_withinTheHysteresisBand() {
        // Equal demand everywhere: targets of 300 each; 320, 280 and 300 are all within 25% of them.
        assertThat(POLICY.rebalance(view(320, 280, 300), Map.of("eu", 1.0, "us", 1.0, "ap", 1.0))).isEmpty();
    }

    @Test
    void rebalance_doesNothing_withoutDemand_orWhenCollapsed() {
        assertThat(POLICY.rebalance(view(900, 0, 0), Map.of())).isEmpty();
        ItemView collapsed = new ItemView(ITEM, "eu", List.of(region("eu", 900, 100, false),
                region("us", 0, 100, true)), true);
        assertThat(POLICY.rebalance(collapsed, Map.of("us", 10.0))).isEmpty();
    }

    @Test
    void rebalance_skipsMovesUnderTheMinimum_unlessTheyEmptyTheDonor() {
        BalancePolicy big = new BalancePolicy(0.0, 500, 0.0, 0, 0.0);
        // us needs ~90 of 100, eu has 90 over its target: under 500, and not all eu has
        assertThat(big.rebalance(view(100, 0, 0), Map.of("us", 9.0, "eu", 1.0))).isEmpty();
        // ap holds everything and has no demand: moving all it has is allowed
        assertThat(big.rebalance(view(0, 0, 40), Map.of("us", 1.0)))
                .singleElement().satisfies(m -> assertThat(m.maxQuantity()).isEqualTo(40));
    }

    @Test
    void pull_takesFromTheRegionWithTheMost_atLeastTheMinimumAndHalfItsExcess() {
        List<PlannedMove> moves = POLICY.pull(view(500, 0, 200), "us", 3, Map.of());
        // targets 234/233/233 → eu is 266 above its target: max(3, 16, 133) = 133
        assertThat(moves.get(0).from().region()).isEqualTo("eu");
        assertThat(moves.get(0).maxQuantity()).isBetween(133L, 134L);
        assertThat(moves.get(0).minQuantity()).isEqualTo(1);
        assertThat(moves).hasSize(1);
    }

    @Test
    void pull_usesSeveralDonors_whenOneIsNotEnough_cappedAtWhatEachHas() {
        List<PlannedMove> moves = POLICY.pull(view(10, 0, 8), "us", 15, Map.of());
        assertThat(moves).extracting(m -> m.from().region() + ":" + m.maxQuantity()).containsExactly("eu:10", "ap:8");
    }

    @Test
    void pull_fromARegionTheItemIsNotSoldIn_isRefused() {
        assertThatThrownBy(() -> POLICY.pull(view(1, 1, 1), "mars", 1, Map.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("mars");
    }

    @Test
    void policy_refusesBadSettings_namingEveryOne() {
        assertThatThrownBy(() -> new BalancePolicy(1.0, 0, 2.0, -1, -0.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hysteresis=1.0").hasMessageContaining("minTransfer=0")
                .hasMessageContaining("collapseFraction=2.0").hasMessageContaining("collapseMin=-1")
                .hasMessageContaining("demandFloor=-0.5");
    }
}
