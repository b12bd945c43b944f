package io.lastunit.shard.escrow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What a lane's batch holds against other lanes' borrows ({@link Promises}, {@link ItemLedger#promise}). */
class PromisesTest {
    private static final int B1 = 1;
    private static final int B2 = 2;

    private static ItemLedger ledger() {
        return new ItemLedger("acme", "hat", 4, "local", List.of("local"), new int[] {0, 1, 2, 3}, false);
    }

    @Test
    void eachAcceptedReserveHoldsItsUnitsAtOnce_untilTheBatchEnds() {
        ItemLedger route = ledger();
        Promises p = new Promises();
        p.beginAttempt();
        p.want(route, B1, 3);
        assertThat(route.promised(1)).isEqualTo(3);
        p.want(route, B1, 2);
        p.want(route, B2, 4);
        assertThat(route.promised(1)).isEqualTo(5);
        assertThat(route.promised(2)).isEqualTo(4);
        p.attemptDecided();
        assertThat(route.promised(1)).isEqualTo(5);
        p.releaseAll();
        assertThat(route.promised(1)).isZero();
        assertThat(route.promised(2)).isZero();
        assertThat(p.registered(route, B1)).isZero();
    }

    @Test
    void aRedoKeepsHoldingUntilItHasDecided_andNeverHoldsTwice() {
        ItemLedger route = ledger();
        Promises p = new Promises();
        p.beginAttempt();
        p.want(route, B1, 5);
        p.want(route, B2, 2);
        p.attemptDecided();

        // The attempt was refused; the next one starts: the 5 and the 2 stay held meanwhile.
        p.beginAttempt();
        assertThat(route.promised(1)).isEqualTo(5);
        assertThat(route.promised(2)).isEqualTo(2);
        p.want(route, B1, 3); // within what is held: nothing added
        assertThat(route.promised(1)).isEqualTo(5);
        p.want(route, B1, 4); // 7 now: 2 more
        assertThat(route.promised(1)).isEqualTo(7);
        p.attemptDecided(); // bucket 2 took nothing this time
        assertThat(route.promised(1)).isEqualTo(7);
        assertThat(route.promised(2)).isZero();

        p.beginAttempt();
        p.want(route, B1, 1);
        p.attemptDecided(); // down to what this attempt accepted
        assertThat(route.promised(1)).isEqualTo(1);
        p.releaseAll();
        assertThat(route.promised(1)).isZero();
    }

    @Test
    void twoLanesPromisesAddUp_andEachReleasesOnlyItsOwn() {
        ItemLedger route = ledger();
        Promises a = new Promises();
        Promises b = new Promises();
        a.beginAttempt();
        b.beginAttempt();
        a.want(route, B1, 2);
        b.want(route, B1, 3);
        assertThat(route.promised(1)).isEqualTo(5);
        a.releaseAll();
        assertThat(route.promised(1)).isEqualTo(3);
        b.releaseAll();
        assertThat(route.promised(1)).isZero();
    }
}
