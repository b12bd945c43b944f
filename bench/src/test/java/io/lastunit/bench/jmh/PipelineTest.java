package io.lastunit.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class PipelineTest {

    private static Pipeline pipeline(int n) {
        Pipeline p = new Pipeline();
        p.pipeline = n;
        p.setUp();
        return p;
    }

    private static ReserveResponse reserved(String holdId) {
        return ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                .setHold(Hold.newBuilder().setHoldId(holdId)).build();
    }

    /** Sends Reserves whose futures the test completes; counts what is in flight. */
    private static final class Sender implements Supplier<CompletableFuture<ReserveResponse>> {
        final List<CompletableFuture<ReserveResponse>> sent = new ArrayList<>();
        final AtomicInteger inFlight = new AtomicInteger();
        int maxInFlight;

        @Override
        public CompletableFuture<ReserveResponse> get() {
            CompletableFuture<ReserveResponse> f = new CompletableFuture<>();
            f.whenComplete((r, e) -> inFlight.decrementAndGet());
            sent.add(f);
            maxInFlight = Math.max(maxInFlight, inFlight.incrementAndGet());
            return f;
        }

        /** Answers every request sent so far with a hold named after its send order. */
        void answerAll() {
            for (int i = 0; i < sent.size(); i++) {
                sent.get(i).complete(reserved("h" + i));
            }
        }
    }

    @Test
    void pipelineOfOne_sendsAndWaits() {
        Pipeline p = pipeline(1);
        ReserveResponse r = p.call(() -> CompletableFuture.completedFuture(reserved("h0")));
        assertThat(r.getHold().getHoldId()).isEqualTo("h0");
    }

    @Test
    void keepsExactlyNInFlight_andAnswersTheOldestFirst() {
        Pipeline p = pipeline(3);
        Sender s = new Sender();
        // Filling: three sends, nothing to wait for yet.
        for (int i = 0; i < 3; i++) {
            assertThat(p.call(s)).isNull();
        }
        assertThat(s.inFlight.get()).isEqualTo(3);
        s.answerAll();
        // Each further call waits for the oldest request, then sends one in its place.
        List<String> answered = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            answered.add(p.call(s).getHold().getHoldId());
            s.answerAll();
        }
        assertThat(answered).containsExactly("h0", "h1", "h2", "h3", "h4", "h5");
        assertThat(s.sent).hasSize(9);
        assertThat(s.maxInFlight).isEqualTo(3);
    }

    @Test
    void drain_waitsForWhatIsInFlight_andStartsOver() {
        Pipeline p = pipeline(2);
        Sender s = new Sender();
        p.call(s);
        p.call(s);
        s.answerAll();
        p.drain();
        assertThat(s.inFlight.get()).isZero();
        // After a drain the pipeline fills again before answering.
        assertThat(p.call(s)).isNull();
    }

    @Test
    void anAnswerOtherThanReserved_failsTheRun() {
        Pipeline one = pipeline(1);
        ReserveResponse soldOut = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).build();
        assertThatThrownBy(() -> one.call(() -> CompletableFuture.completedFuture(soldOut)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("SOLD_OUT");

        Pipeline two = pipeline(2);
        two.call(() -> CompletableFuture.completedFuture(soldOut));
        two.call(() -> CompletableFuture.completedFuture(reserved("h1")));
        assertThatThrownBy(() -> two.call(() -> CompletableFuture.completedFuture(reserved("h2"))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("SOLD_OUT");
    }

    @Test
    void aFailedReserve_failsTheRunWithItsCause() {
        Pipeline p = pipeline(1);
        assertThatThrownBy(() -> p.call(() -> CompletableFuture.failedFuture(new IllegalArgumentException("boom"))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("boom")
                .hasCauseInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void pipelineDepth_isBounded() {
        assertThatThrownBy(() -> pipeline(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pipeline(4097)).isInstanceOf(IllegalArgumentException.class);
        assertThat(pipeline(4096).pipeline).isEqualTo(4096);
    }
}
