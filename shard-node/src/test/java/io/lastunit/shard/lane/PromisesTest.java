package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a lane's batch holds against other lanes' borrows ({@link Promises}, {@link ItemRoute#promise})
 * and what a lane subtracts for borrows its cached row does not show ({@link BucketState#unseenLent}).
 */
class PromisesTest {
    private static final BucketKey B1 = new BucketKey("acme", "hat", 1);
    private static final BucketKey B2 = new BucketKey("acme", "hat", 2);

    private static ItemRoute route() {
        return new ItemRoute("acme", "hat", 4, "local", List.of("local"), new int[] {0, 1, 2, 3}, false);
    }

    @Test
    void eachAcceptedReserveHoldsItsUnitsAtOnce_untilTheBatchEnds() {
        ItemRoute route = route();
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
        assertThat(p.registered(B1)).isZero();
    }

    @Test
    void aRedoKeepsHoldingUntilItHasDecided_andNeverHoldsTwice() {
        ItemRoute route = route();
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
        ItemRoute route = route();
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

    @Test
    void unseenLent_isWhatCommittedBorrowsTookAfterTheCachedRow() {
        ItemRoute route = route();
        BucketState b = new BucketState(B1, null, 16);
        b.setCounters(10, 10, 0, 0, -1);
        route.lentUpTo(1, 7);
        assertThat(b.unseenLent(route)).as("row read without its lent total").isZero();

        b.setCounters(10, 6, 4, 0, 7); // a row that shows the 7 lent so far
        assertThat(b.unseenLent(route)).isZero();
        route.lentUpTo(1, 9); // a borrow took 2 after it
        assertThat(b.unseenLent(route)).isEqualTo(2);
        route.lentUpTo(1, 8); // an older borrow's total arriving late lowers nothing
        assertThat(route.lent(1)).isEqualTo(9);
        assertThat(b.unseenLent(route)).isEqualTo(2);
        b.setCounters(8, 4, 4, 0, 9); // the lane's next row shows them
        assertThat(b.unseenLent(route)).isZero();
        assertThat(b.unseenLent(null)).isZero();
        assertThat(b.unseenLent(route())).as("a route that saw no borrow").isZero();
    }
}
