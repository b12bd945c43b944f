package io.lastunit.admin.move.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.shard.v1.BucketFigures;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.SeatFigures;
import io.lastunit.api.shard.v1.TenantSummary;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Settled and recent parts of a shard's summary put together, and the invariants of DESIGN §1 checked on the result. */
class SummaryPartsTest {

    private static BucketFigures row(int no, long allotment, long available, long held, long sold, long heldUnits,
                                     long soldUnits) {
        return BucketFigures.newBuilder().setBucketNo(no).setRow(true).setAllotment(allotment).setAvailable(available)
                .setHeld(held).setSold(sold).setHeldUnits(heldUnits).setSoldUnits(soldUnits).build();
    }

    private static BucketFigures sold(int no, long units) {
        return BucketFigures.newBuilder().setBucketNo(no).setSoldUnits(units).build();
    }

    /** The recent part of item x: 60 + 40 units, 10 held live, 30 sold of which 5 recently. */
    private static ItemSummary recentX() {
        return ItemSummary.newBuilder().setItemId("x").setRegion("eu").setTotal(90).setBucketCount(2).setAllotment(100)
                .setAvailable(60).setHeld(10).setSold(30).putHoldsByState("HELD", 4).putUnitsByState("HELD", 10)
                .putHoldsByState("SOLD", 2).putUnitsByState("SOLD", 5).setTransferredIn(10).setUsageUnits(3)
                .setUsageBuyers(2).setRestocks(1).setRestockedUnits(5)
                .addBuckets(row(0, 60, 35, 10, 15, 10, 5)).addBuckets(row(1, 40, 25, 0, 15, 0, 0)).build();
    }

    /** The settled part of item x: 25 units sold long ago (10 in bucket 0, 15 in bucket 1), 7 released. */
    private static ItemSummary settledX() {
        return ItemSummary.newBuilder().setItemId("x").setRegion("eu").setTotal(90).setBucketCount(2)
                .putHoldsByState("SOLD", 9).putUnitsByState("SOLD", 25).putHoldsByState("RELEASED", 7)
                .putUnitsByState("RELEASED", 7).setTransferredIn(4).setTransferredOut(4).addBuckets(sold(0, 10)).addBuckets(sold(1, 15))
                .build();
    }

    private static TenantSummary shard(String id, ItemSummary... items) {
        return TenantSummary.newBuilder().setShardId(id).setRegion("eu").addAllItems(List.of(items)).build();
    }

    @Test
    void combine_addsTheSettledHoldsAndTransfers_toTheRecentRows() {
        List<TenantSummary> whole = SummaryParts.combine(List.of(shard("s1", settledX())), List.of(shard("s1", recentX())));

        ItemSummary x = whole.get(0).getItems(0);
        assertThat(x.getHoldsByStateMap()).containsExactlyInAnyOrderEntriesOf(
                java.util.Map.of("HELD", 4L, "SOLD", 11L, "RELEASED", 7L));
        assertThat(x.getUnitsByStateMap()).containsExactlyInAnyOrderEntriesOf(
                java.util.Map.of("HELD", 10L, "SOLD", 30L, "RELEASED", 7L));
        assertThat(x.getTransferredIn()).isEqualTo(14);
        assertThat(x.getTransferredOut()).isEqualTo(4);
        assertThat(x.getBucketsList()).containsExactly(row(0, 60, 35, 10, 15, 10, 15), row(1, 40, 25, 0, 15, 0, 15));
        // Rows, usage and restocks are the recent part's.
        assertThat(x.getAllotment()).isEqualTo(100);
        assertThat(x.getUsageUnits()).isEqualTo(3);
        assertThat(x.getRestockedUnits()).isEqualTo(5);
        assertThat(SummaryInvariants.drifts("target", whole)).isEmpty();
    }

    @Test
    void withoutTheSettledPart_theSoldUnitsFallShort_andTheInvariantsSaySo() {
        List<String> drifts = SummaryInvariants.drifts("target", List.of(shard("s1", recentX())));

        assertThat(drifts).containsExactly(
                "target shard s1, item x in eu, bucket 0: sold 15 but its SOLD holds sum to 5",
                "target shard s1, item x in eu, bucket 1: sold 15 but its SOLD holds sum to 0");
    }

    @Test
    void everyBucketAndItemInvariant_isChecked() {
        ItemSummary broken = recentX().toBuilder().clearBuckets()
                .addBuckets(row(0, 60, 36, 10, 15, 9, 15)) // sum off by one, held off by one
                .addBuckets(row(1, 40, 45, -5, 0, 0, 0)) // a counter below zero
                .addBuckets(sold(2, 3)) // holds in a bucket without a row
                .setTransferredOut(4).build();

        assertThat(SummaryInvariants.drifts("source", List.of(shard("s1", broken)))).containsExactly(
                "source shard s1, item x in eu, bucket 0: available 36 + held 10 + sold 15 is not its allotment 60",
                "source shard s1, item x in eu, bucket 0: held 10 but its HELD holds sum to 9",
                "source shard s1, item x in eu, bucket 1: a counter below zero (available 45, held -5, sold 0)",
                "source shard s1, item x in eu, bucket 1: held -5 but its HELD holds sum to 0",
                "source shard s1, item x in eu, bucket 2: holds of 3 units but no bucket row",
                "source shard s1, item x in eu: base 90 + transferred in 10 - out 4 = 96 but its buckets' allotment"
                        + " sums to 100");
    }

    @Test
    void aSettledShardOrItemWithoutItsRecentPart_isRefused() {
        assertThatThrownBy(() -> SummaryParts.combine(List.of(shard("s2", settledX())), List.of(shard("s1", recentX()))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[s2]");
        assertThatThrownBy(() -> SummaryParts.combine(List.of(shard("s1", settledX())), List.of(shard("s1"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("x@eu");
    }

    @Test
    void bucketFigures_areCompared_andTheFirstDifferenceIsNamed() {
        ItemSummary t = recentX().toBuilder().setBuckets(1, row(1, 40, 25, 0, 15, 0, 1)).build();

        assertThat(SummaryComparison.differences(List.of(shard("a", recentX())), List.of(shard("b", t))))
                .containsExactly("item x in eu: bucket figures {bucket 1: allotment 40, available 25, held 0, sold 15,"
                        + " HELD units 0, SOLD units 0} at the source, {bucket 1: allotment 40, available 25, held 0,"
                        + " sold 15, HELD units 0, SOLD units 1} at the target");
    }

    /** A SEATED item of 10 seats, 8 on sale: 3 seats held, 2 sold, 3 free; combined with a settled part of its own. */
    private static ItemSummary seated(long onSale, long claimed) {
        return ItemSummary.newBuilder().setItemId("s").setRegion("eu").setTotal(8).setBucketCount(1).setAllotment(8)
                .setAvailable(3).setHeld(3).setSold(2).putHoldsByState("HELD", 2).putUnitsByState("HELD", 3)
                .putHoldsByState("SOLD", 1).putUnitsByState("SOLD", 2).addBuckets(row(0, 8, 3, 3, 2, 3, 2))
                .setSeats(SeatFigures.newBuilder().setSeats(10).setOnSale(onSale).setClaimed(claimed).setDigest(77))
                .build();
    }

    @Test
    void aSeatedItem_hasItsSeatsOnSaleAsItsAllotment_andAsManySeatsInHoldsAsItsHoldsUnits() {
        assertThat(SummaryInvariants.drifts("target", List.of(shard("s1", seated(8, 5))))).isEmpty();
        assertThat(SummaryInvariants.drifts("target", List.of(shard("s1", seated(9, 4))))).containsExactly(
                "target shard s1, item s in eu: 9 seats on sale but its buckets' allotment is 8",
                "target shard s1, item s in eu: 4 seats in holds but its HELD and SOLD holds are of 5 seats");
        // The seats come with the recent part, which a settled part never overrides.
        ItemSummary settled = ItemSummary.newBuilder().setItemId("s").setRegion("eu").putHoldsByState("SOLD", 1)
                .putUnitsByState("SOLD", 1).addBuckets(sold(0, 1)).build();
        ItemSummary recent = seated(8, 6).toBuilder().setAvailable(2).setSold(3)
                .setBuckets(0, row(0, 8, 2, 3, 3, 3, 2)).build();
        List<TenantSummary> whole = SummaryParts.combine(List.of(shard("s1", settled)), List.of(shard("s1", recent)));
        assertThat(whole.get(0).getItems(0).getSeats()).isEqualTo(recent.getSeats());
        assertThat(SummaryInvariants.drifts("target", whole)).isEmpty();
    }

    @Test
    void seatFigures_areCompared_aSeatInAnotherHoldChangesTheDigest() {
        ItemSummary t = seated(8, 5).toBuilder().setSeats(seated(8, 5).getSeats().toBuilder().setDigest(78)).build();

        assertThat(SummaryComparison.differences(List.of(shard("a", seated(8, 5))), List.of(shard("b", t))))
                .containsExactly("item s in eu: seats {10 seats, 8 on sale, 5 in holds, digest 77} at the source,"
                        + " {10 seats, 8 on sale, 5 in holds, digest 78} at the target");
    }
}
