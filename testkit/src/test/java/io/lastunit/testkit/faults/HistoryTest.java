package io.lastunit.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.testkit.ManualClock;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.testkit.faults.History.Entry;
import io.lastunit.testkit.faults.History.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HistoryTest {
    final ManualClock clock = new ManualClock();
    final History history = new History(clock::nanoTime, 100);

    @Test
    void outcomes_areCounted_andUnknownIsNeitherOkNorFail() {
        history.invoke("c1", "reserve", "k1").ok("hold-1");
        history.invoke("c2", "reserve", "k2").fail("SOLD_OUT");
        history.invoke("c3", "reserve", "k3").unknown("deadline exceeded");
        history.invoke("c4", "confirm", "k1");

        assertThat(history.counts()).containsExactlyInAnyOrderEntriesOf(Map.of(
                Outcome.OK, 1L, Outcome.FAIL, 1L, Outcome.UNKNOWN, 1L, Outcome.PENDING, 1L));
        assertThat(history.count(Outcome.UNKNOWN)).isEqualTo(1);
    }

    @Test
    void entries_recordWhoDidWhat_withTimesSinceTheStart() {
        clock.advance(Duration.ofMillis(3));
        History.Op op = history.invoke("c1", "reserve", "k1");
        clock.advance(Duration.ofMillis(2));
        op.ok(7);

        Entry entry = history.entries().get(0);
        assertThat(entry.index()).isZero();
        assertThat(entry.process()).isEqualTo("c1");
        assertThat(entry.op()).isEqualTo("reserve");
        assertThat(entry.key()).isEqualTo("k1");
        assertThat(entry.outcome()).isEqualTo(Outcome.OK);
        assertThat(entry.value()).isEqualTo(7);
        assertThat(entry.invokeNanos()).isEqualTo(Duration.ofMillis(3).toNanos());
        assertThat(entry.completeNanos()).isEqualTo(Duration.ofMillis(5).toNanos());
    }

    @Test
    void entries_isASnapshot_thatLaterCompletionsDoNotChange() {
        History.Op op = history.invoke("c1", "reserve", "k1");
        List<Entry> before = history.entries();

        op.fail("OUT_OF_STOCK");

        assertThat(before.get(0).outcome()).isEqualTo(Outcome.PENDING);
        assertThat(history.entries().get(0).outcome()).isEqualTo(Outcome.FAIL);
        assertThat(history.entries().get(0).reason()).isEqualTo("OUT_OF_STOCK");
    }

    @Test
    void unknownKeys_listsEachUnknownKeyOnce_inInvokeOrder() {
        history.invoke("c1", "reserve", "b").unknown("cut");
        history.invoke("c2", "reserve", "a").unknown("cut");
        history.invoke("c3", "reserve", "b").unknown("cut again");
        history.invoke("c4", "reserve", "c").ok(null);
        history.invoke("c5", "scan", null).unknown("timeout");

        assertThat(history.unknownKeys()).containsExactly("b", "a");
    }

    @Test
    void assertNoPending_namesTheOperationsThatNeverCompleted() {
        history.invoke("c1", "reserve", "k1").ok("h1");
        History.Op lost = history.invoke("c2", "confirm", "k2");

        assertThatThrownBy(history::assertNoPending).isInstanceOf(AssertionError.class)
                .hasMessageContaining("1 of 2 operations never completed")
                .hasMessageContaining("#1 c2 confirm key=k2");
        assertThat(history.pending()).extracting(Entry::index).containsExactly(1);

        lost.unknown("client gave up");

        assertThatCode(history::assertNoPending).doesNotThrowAnyException();
    }

    @Test
    void assertNoPending_listsABoundedNumber() {
        for (int i = 0; i < History.PENDING_LISTED_MAX + 5; i++) {
            history.invoke("c" + i, "reserve", "k" + i);
        }

        assertThatThrownBy(history::assertNoPending).hasMessageContaining("... and 5 more");
    }

    @Test
    void completingTwice_isRefused_andKeepsTheFirstOutcome() {
        History.Op op = history.invoke("c1", "reserve", "k1");
        op.ok("h1");

        assertThatThrownBy(() -> op.fail("late")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("completed twice");
        assertThat(history.count(Outcome.OK)).isEqualTo(1);
        assertThat(history.count(Outcome.FAIL)).isZero();
    }

    @Test
    void invoke_beyondTheBound_isRefused() {
        History small = new History(clock::nanoTime, 2);
        small.invoke("c1", "reserve", "k1");
        small.invoke("c2", "reserve", "k2");

        assertThatThrownBy(() -> small.invoke("c3", "reserve", "k3")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("entriesMax=2");
    }

    @Test
    void toString_summarisesByOperation() {
        history.invoke("c1", "reserve", "k1").ok("h1");
        history.invoke("c2", "reserve", "k2").unknown("cut");
        history.invoke("c3", "confirm", "k1").fail("NOT_HELD");

        assertThat(history.toString()).isEqualTo(String.join(System.lineSeparator(),
                "History: 3 operations, pending=0 ok=1 fail=1 unknown=1",
                "op            ok     fail  unknown  pending",
                "confirm        0        1        0        0",
                "reserve        1        0        1        0"));
    }

    @Test
    void concurrentClients_recordEveryOperation() throws Exception {
        History shared = new History();
        int clients = 8;
        int perClient = 500;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                String process = "c" + c;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < perClient; i++) {
                        History.Op op = shared.invoke(process, "reserve", process + "-" + i);
                        if (i % 2 == 0) {
                            op.ok(i);
                        } else {
                            op.unknown("timeout");
                        }
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(shared.entries()).hasSize(clients * perClient);
        assertThat(shared.count(Outcome.OK)).isEqualTo(clients * perClient / 2);
        assertThat(shared.count(Outcome.UNKNOWN)).isEqualTo(clients * perClient / 2);
        assertThat(shared.unknownKeys()).hasSize(clients * perClient / 2);
        shared.assertNoPending();
    }
}
