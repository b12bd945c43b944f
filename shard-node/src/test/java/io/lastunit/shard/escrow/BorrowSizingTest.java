package io.lastunit.shard.escrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** How many units one borrow takes ({@link BorrowSizing}): the need, half the spare if more, never past the cap. */
class BorrowSizingTest {
    @ParameterizedTest(name = "need={0} cap={1} available={2} promised={3} -> {4}")
    @CsvSource({
            // the need when half of the spare is less
            "3, 9223372036854775807, 4, 0, 3",
            // half of the spare when that is more than the need
            "3, 9223372036854775807, 100, 0, 50",
            // all of the spare when the need is more
            "30, 9223372036854775807, 20, 0, 20",
            // the cap bounds every case
            "3, 10, 100, 0, 10",
            "30, 5, 20, 0, 5",
            // the lender's promised units stay in the row
            "3, 9223372036854775807, 100, 60, 20",
            "3, 9223372036854775807, 10, 8, 2",
            // nothing to spare
            "3, 9223372036854775807, 10, 10, 0",
            "3, 9223372036854775807, 0, 0, 0",
            "3, 9223372036854775807, 5, 9, 0",
            // a negative promise (a release under way) spares no more than the row has
            "3, 9223372036854775807, 10, -4, 5",
            // odd spares round half down
            "1, 9223372036854775807, 7, 0, 3",
            "1, 9223372036854775807, 1, 0, 1",
    })
    void units(long need, long cap, long available, long promised, long expected) {
        assertThat(new BorrowSizing(need, cap).units(available, promised)).isEqualTo(expected);
    }

    @Test
    void refusesANeedOrCapBelowOne() {
        assertThatThrownBy(() -> new BorrowSizing(0, 5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BorrowSizing(3, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
