package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.shard.seats.SeatStore;
import io.lastunit.testkit.TestTimeouts;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The writes a seat lane keeps in flight, with statements the test holds and lets go (no
 * database): what a write answered without a hold goes out only once it and the write before it
 * committed, in both orders of finishing; a write before it that was refused holds them back;
 * the lane settles writes in the order it started them; never more than {@link
 * SeatWrites#IN_FLIGHT_MAX} at a time.
 */
class SeatWritesTest {
    private static final long WAIT_MS = TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();
    private static final SeatStore.PlacedBatch PLACED = new SeatStore.PlacedBatch(Map.of(), 42);

    private final Replier replier = new Replier(0);
    private final SeatWrites writes = new SeatWrites(0, replier);

    @AfterEach
    void close() throws InterruptedException {
        writes.close();
        replier.close();
    }

    @Test
    void laterAnswers_waitForTheWriteBefore_thenGoOut() throws Exception {
        CountDownLatch releaseFirst = new CountDownLatch(1);
        CountDownLatch secondWritten = new CountDownLatch(1);
        CountDownLatch laterSent = new CountDownLatch(1);
        AtomicInteger firstLater = new AtomicInteger();
        writes.submit("item", List.of(), List.of(), List.of(), List.of(firstLater::incrementAndGet), () -> {
            assertThat(releaseFirst.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
            return PLACED;
        });
        writes.submit("item", List.of(), List.of(), List.of(), List.of(laterSent::countDown), () -> {
            secondWritten.countDown();
            return PLACED;
        });
        assertThat(writes.full()).isTrue();

        assertThat(secondWritten.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(laterSent.getCount()).as("the second write's later answers wait for the first").isEqualTo(1);
        assertThat(writes.oldest().done()).isNotDone();

        releaseFirst.countDown();
        SeatWrites.Outcome first = writes.poll();
        SeatWrites.Outcome second = writes.poll();
        assertThat(first.placed()).isSameAs(PLACED);
        assertThat(first.write().laterSent()).isTrue();
        assertThat(second.placed()).isSameAs(PLACED);
        assertThat(second.write().laterSent()).isTrue();
        assertThat(laterSent.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(writes.size()).isZero();
    }

    @Test
    void aRefusedWrite_holdsBackTheLaterAnswersOfTheNext_whichTheLaneDecidesAgain() throws Exception {
        CountDownLatch releaseFirst = new CountDownLatch(1);
        AtomicInteger secondLater = new AtomicInteger();
        writes.submit("item", List.of(), List.of(), List.of(), List.of(), () -> {
            assertThat(releaseFirst.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
            throw new SQLException("seat batch refused", SeatStore.REFUSED);
        });
        writes.submit("item", List.of(), List.of(), List.of(), List.of(secondLater::incrementAndGet), () -> PLACED);
        releaseFirst.countDown();

        SeatWrites.Outcome first = writes.poll();
        assertThat(first.failure()).isInstanceOf(SQLException.class);
        assertThat(((SQLException) first.failure()).getSQLState()).isEqualTo(SeatStore.REFUSED);
        SeatWrites.Outcome second = writes.poll();
        assertThat(second.placed()).isSameAs(PLACED);
        assertThat(second.write().laterSent()).as("decided on a write that did not commit").isFalse();
        replier.close(); // every reply handed over has run
        assertThat(secondLater).hasValue(0);
    }

    @Test
    void theWriteBeforeFinishedFirst_laterAnswersGoOutAtOnce() throws Exception {
        writes.submit("item", List.of(), List.of(), List.of(), List.of(), () -> PLACED);
        assertThat(writes.poll().placed()).isSameAs(PLACED);
        CountDownLatch laterSent = new CountDownLatch(1);
        writes.submit("item", List.of(), List.of(), List.of(), List.of(laterSent::countDown), () -> PLACED);
        assertThat(laterSent.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(writes.poll().write().laterSent()).isTrue();
    }

    @Test
    void noMoreThanTheLimitInFlight_andAnEmptyLaneHasNothingToSettle() throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        for (int i = 0; i < SeatWrites.IN_FLIGHT_MAX; i++) {
            writes.submit("item-" + i, List.of(), List.of(), List.of(), List.of(), () -> {
                assertThat(hold.await(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
                return PLACED;
            });
        }
        assertThat(writes.holds("item-0")).isTrue();
        assertThat(writes.holds("other")).isFalse();
        assertThatThrownBy(() -> writes.submit("item", List.of(), List.of(), List.of(), List.of(), () -> PLACED))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("in flight already");
        hold.countDown();
        for (int i = 0; i < SeatWrites.IN_FLIGHT_MAX; i++) {
            assertThat(writes.poll().write().item()).isEqualTo("item-" + i);
        }
        assertThatThrownBy(writes::poll).isInstanceOf(IllegalStateException.class);
    }
}
