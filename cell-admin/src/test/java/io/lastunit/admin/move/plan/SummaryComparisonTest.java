package io.lastunit.admin.move.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.TenantSummary;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SummaryComparisonTest {

    private static ItemSummary item(String id, String region) {
        return ItemSummary.newBuilder().setItemId(id).setRegion(region).setTotal(100).setBucketCount(2)
                .setAllotment(100).setAvailable(90).setHeld(6).setSold(4).putHoldsByState("HELD", 3)
                .putHoldsByState("SOLD", 2).putUnitsByState("HELD", 6).putUnitsByState("SOLD", 4).setUsageUnits(10)
                .setUsageBuyers(5).setRestocks(1).setRestockedUnits(20).setState("FROZEN").build();
    }

    private static TenantSummary shard(String id, ItemSummary... items) {
        return TenantSummary.newBuilder().setShardId(id).addAllItems(List.of(items)).build();
    }

    @Test
    void equalFigures_onOtherShards_inAnotherState_areEqual() {
        List<TenantSummary> source = List.of(shard("a-eu-1", item("x", "eu")), shard("a-us-1", item("x", "us"),
                item("y", "us")));
        // The target places the items on other shards, and holds them IMPORTING.
        List<TenantSummary> target = List.of(shard("b-eu-2", item("x", "eu").toBuilder().setState("IMPORTING").build()),
                shard("b-us-1", item("y", "us")), shard("b-us-2", item("x", "us")));

        assertThat(SummaryComparison.differences(source, target)).isEmpty();
    }

    @Test
    void everyFigure_isCompared_andEachDifferenceNamesItemRegionAndBothValues() {
        ItemSummary s = item("x", "eu");
        ItemSummary t = s.toBuilder().setTotal(101).setHeld(5).putHoldsByState("HELD", 2).setUsageBuyers(4)
                .setTransferredIn(3).setRestockedUnits(0).setCollapsed(true).build();

        List<String> d = SummaryComparison.differences(List.of(shard("a", s)), List.of(shard("b", t)));

        assertThat(d).containsExactly(
                "item x in eu: total 100 at the source, 101 at the target",
                "item x in eu: collapsed false at the source, true at the target",
                "item x in eu: held 6 at the source, 5 at the target",
                "item x in eu: holds_by_state {HELD=3, SOLD=2} at the source, {HELD=2, SOLD=2} at the target",
                "item x in eu: usage_buyers 5 at the source, 4 at the target",
                "item x in eu: transferred_in 0 at the source, 3 at the target",
                "item x in eu: restocked_units 20 at the source, 0 at the target");
    }

    @Test
    void missingAndExtraItems_andAnItemOnTwoShards_areDifferences() {
        List<String> d = SummaryComparison.differences(
                List.of(shard("a1", item("x", "eu")), shard("a2", item("x", "eu"), item("y", "eu"))),
                List.of(shard("b1", item("x", "eu"), item("z", "eu"))));

        assertThat(d).containsExactlyInAnyOrder(
                "item x in eu: on two shards of the source (one is a2)",
                "item y in eu: missing at the target",
                "item z in eu: at the target but not at the source");
    }

    @Test
    void aTransferPendingAtTheSource_isADifference_evenWhenBothSidesShowIt() {
        ItemSummary pending = item("x", "eu").toBuilder().setTransfersPending(1).build();

        assertThat(SummaryComparison.differences(List.of(shard("a", pending)), List.of(shard("b", pending))))
                .containsExactly("item x in eu: 1 transfer(s) PENDING at the source");
    }

    @Test
    void manyDifferences_areCut_atTheBound_withACount() {
        List<ItemSummary> items = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            items.add(item("i" + i, "eu"));
        }
        List<String> d = SummaryComparison.differences(
                List.of(shard("a", items.toArray(new ItemSummary[0]))), List.of());

        assertThat(d).hasSize(SummaryComparison.DIFFERENCES_MAX + 1);
        assertThat(d.get(SummaryComparison.DIFFERENCES_MAX)).isEqualTo("and 10 more");
    }
}
