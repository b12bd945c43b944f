package io.lastunit.common.invariant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.shard.v1.ItemLevel;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The two-step transfer of DESIGN §7 between shard A (eu, base 100) and shard B (us, base 50),
 * 10 units from A to B, judged at every point it can be caught; then the ways it can go wrong.
 */
class CrossShardInvariantTest {
    private static final ItemKey SHOE = new ItemKey("acme", "shoe");

    private static ItemLevel level(String region, long base, long allotment) {
        return level("shoe", region, base, allotment);
    }

    private static ItemLevel level(String item, String region, long base, long allotment) {
        return ItemLevel.newBuilder().setTenantId("acme").setItemId(item).setRegion(region).setHomeRegion("eu")
                .setBase(base).setAllotment(allotment).setAvailable(allotment).build();
    }

    private static PendingTransfer out(String id, long qty, boolean inAtPeer) {
        return new PendingTransfer(id, SHOE, "A", "B", qty, true, inAtPeer);
    }

    @Test
    void balances_beforeAnyTransfer() {
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 100), level("us", 50, 50)), List.of());
        assertThat(b.ok()).isTrue();
        assertThat(b.base()).isEqualTo(150);
        assertThat(b.allotment()).isEqualTo(150);
        assertThat(b.shards()).isEqualTo(2);
    }

    @Test
    void countsUnitsInFlight_whenCaughtBetweenStep1AndStep2() {
        // step 1 committed at A: allotment 90 and a PENDING OUT of 10; B has no IN record yet
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 90), level("us", 50, 50)),
                List.of(out("t1", 10, false)));
        assertThat(b.inFlight()).isEqualTo(10);
        assertThat(b.drift()).isZero();
        assertThat(b.pending()).containsExactly("t1");
    }

    @Test
    void countsNothingInFlight_whenCaughtBetweenStep2AndStep3() {
        // step 2 committed at B (IN record, credited); the OUT at A is still PENDING
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 90), level("us", 50, 60)),
                List.of(out("t1", 10, true)));
        assertThat(b.inFlight()).isZero();
        assertThat(b.drift()).isZero();
        assertThat(b.pending()).containsExactly("t1");
    }

    @Test
    void balances_afterStep3() {
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 90), level("us", 50, 60)), List.of());
        assertThat(b.ok()).isTrue();
    }

    @Test
    void drifts_whenStep2CreditedTwice() {
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 90), level("us", 50, 70)), List.of());
        assertThat(b.drift()).isEqualTo(10);
        assertThat(b.describe()).contains("acme/shoe", "base=150", "allotment=160", "drift=10");
    }

    @Test
    void drifts_whenOutMarkedDoneWithoutIn() {
        // step 3 ran although step 2 never committed: 10 units gone
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 90), level("us", 50, 50)), List.of());
        assertThat(b.drift()).isEqualTo(-10);
    }

    @Test
    void drifts_whenInRecordedWithoutCredit() {
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 90), level("us", 50, 50)),
                List.of(out("t1", 10, true)));
        assertThat(b.drift()).isEqualTo(-10);
    }

    @Test
    void drifts_whenStep1TookMoreThanItRecorded() {
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 100, 85), level("us", 50, 50)),
                List.of(out("t1", 10, false)));
        assertThat(b.drift()).isEqualTo(-5);
    }

    @Test
    void sumsSeveralTransfersInFlight_inBothDirections() {
        // t1: A→B 10 between steps 1 and 2; t2: B→A 5 between steps 2 and 3; t3: A→B 3 between 1 and 2
        ItemBalance b = CrossShardInvariant.balance(SHOE,
                List.of(level("eu", 100, 100 - 10 + 5 - 3), level("us", 50, 50 - 5)),
                List.of(out("t1", 10, false), new PendingTransfer("t2", SHOE, "B", "A", 5, true, true), out("t3", 3, false)));
        assertThat(b.inFlight()).isEqualTo(13);
        assertThat(b.ok()).isTrue();
    }

    @Test
    void restockOnHome_raisesBaseAndAllotmentTogether() {
        ItemBalance b = CrossShardInvariant.balance(SHOE, List.of(level("eu", 120, 110), level("us", 50, 60)), List.of());
        assertThat(b.ok()).isTrue();
        assertThat(b.base()).isEqualTo(170);
    }

    @Test
    void groupsByItem_andSortsThem() {
        List<ItemBalance> all = CrossShardInvariant.balances(
                List.of(level("sock", "eu", 10, 10), level("shoe", "eu", 100, 90), level("shoe", "us", 50, 50),
                        level("sock", "us", 5, 6)),
                List.of(out("t1", 10, false)));
        assertThat(all).extracting(ItemBalance::item)
                .containsExactly(SHOE, new ItemKey("acme", "sock"));
        assertThat(all.get(0).ok()).isTrue();
        assertThat(all.get(1).drift()).isEqualTo(1);
    }

    @Test
    void pendingRecordOfAnItemNoShardReports_isADrift() {
        List<ItemBalance> all = CrossShardInvariant.balances(List.of(), List.of(out("t1", 4, false)));
        assertThat(all).singleElement().satisfies(b -> {
            assertThat(b.shards()).isZero();
            assertThat(b.drift()).isEqualTo(4);
        });
    }

    @Test
    void unknownItem_balancesTrivially() {
        ItemBalance b = CrossShardInvariant.balance(new ItemKey("acme", "none"), List.of(level("eu", 1, 1)), List.of());
        assertThat(b.shards()).isZero();
        assertThat(b.ok()).isTrue();
    }

    @Test
    void pendingTransfer_refusesNonPositiveQuantity() {
        assertThatThrownBy(() -> out("t1", 0, false)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("quantity=0");
    }
}
