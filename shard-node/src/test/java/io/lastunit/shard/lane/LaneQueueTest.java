package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The lane's queue, without a lane. Waits that must not end by themselves are an hour long, so
 * the bounded waits of the test ({@link #WAIT_MS}, scaled for slow machines) tell a wake-up from
 * a timeout however slow the host is; a consumer is seen parked in the queue before the test
 * offers, instead of being given a fixed time to get there.
 */
class LaneQueueTest {
    /** Longer than any test: a wait of this length ends only by a wake-up. */
    private static final long NEVER_NANOS = TimeUnit.HOURS.toNanos(1);
    /** How long the test waits for a woken consumer. */
    private static final long WAIT_MS = TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();

    private static Op.Reserve op(int i) {
        return new Op.Reserve(new BucketKey("t", "i", 0), ReserveRequest.newBuilder().setIdempotencyKey("k" + i).build(),
                "fp", 0, null, new CompletableFuture<>());
    }

    /** Waits (bounded) until {@code t} sleeps in {@code q}'s park, not merely on its way there. */
    private static void awaitParked(Thread t, LaneQueue q) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (LockSupport.getBlocker(t) != q || t.getState() != Thread.State.TIMED_WAITING) {
            assertThat(System.nanoTime() - deadline).as("%s parked in the queue (state %s)", t.getName(), t.getState())
                    .isNegative();
            Thread.sleep(1);
        }
    }

    /**
     * Starts a consumer that polls with a timeout of an hour, waits until it is parked, offers op
     * {@code i}, and returns what the consumer took, waiting at most {@link #WAIT_MS} for it.
     */
    private static Op offerToAParkedPoll(LaneQueue q, int i) throws Exception {
        CompletableFuture<Op> taken = new CompletableFuture<>();
        Thread consumer = new Thread(() -> {
            try {
                taken.complete(q.poll(NEVER_NANOS, TimeUnit.NANOSECONDS));
            } catch (InterruptedException e) {
                taken.completeExceptionally(e);
            }
        });
        consumer.start();
        awaitParked(consumer, q);
        q.offer(op(i));
        Op op = taken.get(WAIT_MS, TimeUnit.MILLISECONDS);
        consumer.join();
        return op;
    }

    @Test
    void refusesPastItsCapacity_andTakesAgainAfterADrain() throws Exception {
        LaneQueue q = new LaneQueue(3);
        assertThat(q.offer(op(1))).isTrue();
        assertThat(q.offer(op(2))).isTrue();
        assertThat(q.offer(op(3))).isTrue();
        assertThat(q.offer(op(4))).isFalse();
        assertThat(q.size()).isEqualTo(3);
        List<Op> got = new ArrayList<>();
        assertThat(q.drainTo(got, 2)).isEqualTo(2);
        assertThat(got).extracting(o -> ((Op.Reserve) o).request().getIdempotencyKey()).containsExactly("k1", "k2");
        assertThat(q.offer(op(5))).isTrue();
        assertThat(q.offer(op(6))).isTrue();
        assertThat(q.offer(op(7))).isFalse();
        assertThat(q.poll(1, TimeUnit.MILLISECONDS)).isNotNull();
        assertThat(q.drainTo(got, 10)).isEqualTo(2);
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.size()).isZero();
        assertThat(q.poll(1, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void manyProducers_oneConsumer_everyAcceptedOpArrivesOnce_andNothingPastTheBound() throws Exception {
        int producers = 8;
        int each = 20_000;
        int capacity = 1_000;
        LaneQueue q = new LaneQueue(capacity);
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger maxSize = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(producers);
        Set<String> arrived = new HashSet<>();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int base = p * each;
            Thread t = new Thread(() -> {
                for (int i = 0; i < each; i++) {
                    if (q.offer(op(base + i))) {
                        accepted.incrementAndGet();
                    } else {
                        Thread.onSpinWait();
                    }
                }
                done.countDown();
            });
            threads.add(t);
            t.start();
        }
        List<Op> batch = new ArrayList<>();
        while (done.getCount() > 0 || !q.isEmpty()) {
            Op first = q.poll(5, TimeUnit.MILLISECONDS);
            if (first == null) {
                continue;
            }
            batch.clear();
            batch.add(first);
            q.drainTo(batch, 511);
            for (Op o : batch) {
                assertThat(arrived.add(((Op.Reserve) o).request().getIdempotencyKey())).isTrue();
            }
            // Accepted and not yet taken out: at most what the queue can hold.
            maxSize.accumulateAndGet(accepted.get() - arrived.size(), Math::max);
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(arrived).hasSize(accepted.get());
        assertThat(maxSize.get()).isLessThanOrEqualTo(capacity);
        assertThat(accepted.get()).isLessThan(producers * each); // the bound was reached
        assertThat(q.size()).isZero();
    }

    @Test
    void aSleepingConsumer_isWokenByAnOffer_longBeforeItsTimeout() throws Exception {
        LaneQueue q = new LaneQueue(10);
        // Without the wake-up the consumer would sleep its hour and this would time out.
        assertThat(offerToAParkedPoll(q, 1)).isNotNull();
    }

    @Test
    void awaitSize_sleepsThroughFewerOffers_andWakesAtTheCount() throws Exception {
        LaneQueue q = new LaneQueue(10);
        CompletableFuture<Integer> woke = new CompletableFuture<>();
        Thread consumer = new Thread(() -> {
            q.awaitSize(3, NEVER_NANOS);
            woke.complete(q.size());
        });
        consumer.start();
        awaitParked(consumer, q);
        q.offer(op(1));
        q.offer(op(2));
        // Two of three: still waiting, its deadline an hour away. A wrong wake-up would show within
        // these 200 ms on most hosts; a right one never fails this, however slow the host.
        Thread.sleep(200);
        assertThat(woke).isNotDone();
        q.offer(op(3));
        // Woken by the third offer; without the wake-up it would sleep its hour and this would time out.
        assertThat(woke.get(WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(3);
        consumer.join();
    }

    @Test
    void awaitSize_returnsAtItsDeadline_orAtOnceWhenTheCountIsQueued() throws Exception {
        LaneQueue q = new LaneQueue(10);
        long start = System.nanoTime();
        q.awaitSize(2, TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(q.size()).isZero();

        q.offer(op(1));
        q.offer(op(2));
        CompletableFuture<Void> returned = CompletableFuture.runAsync(() -> q.awaitSize(2, NEVER_NANOS));
        returned.get(WAIT_MS, TimeUnit.MILLISECONDS); // two queued already: no wait for the hour

        // After an awaitSize, a plain poll is woken by a single offer again.
        List<Op> got = new ArrayList<>();
        q.drainTo(got, 10);
        assertThat(offerToAParkedPoll(q, 3)).isNotNull();
    }
}
