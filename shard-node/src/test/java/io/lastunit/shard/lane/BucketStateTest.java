package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.escrow.ItemLedger;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a lane subtracts for borrows its cached row does not show ({@link BucketState#unseenLent}). */
class BucketStateTest {
    private static final BucketKey B1 = new BucketKey("acme", "hat", 1);

    private static ItemLedger ledger() {
        return new ItemLedger("acme", "hat", 4, "local", List.of("local"), new int[] {0, 1, 2, 3}, false);
    }

    @Test
    void unseenLent_isWhatCommittedBorrowsTookAfterTheCachedRow() {
        ItemLedger route = ledger();
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
        assertThat(b.unseenLent(ledger())).as("a ledger that saw no borrow").isZero();
    }
}
