package io.lastunit.router.shed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BuyerRateLimiterTest {

    static final long SECOND = 1_000_000_000L;
    static final long MILLI = 1_000_000L;

    final AtomicLong now = new AtomicLong(42 * SECOND);

    BuyerRateLimiter limiter(double ratePerSecond, int burst, int buyersMax) {
        return new BuyerRateLimiter(ratePerSecond, burst, buyersMax, now::get);
    }

    /** How many acquires in a row succeed, up to {@code limit}, at the current fake time. */
    static int drain(BuyerRateLimiter l, String tenant, String buyer, int limit) {
        int n = 0;
        while (n < limit && l.tryAcquire(tenant, buyer)) {
            n++;
        }
        return n;
    }

    @ParameterizedTest(name = "burst {0}")
    @CsvSource({"1", "2", "5", "50"})
    void burstAllowsExactlyBurstImmediateAcquiresThenRefuses(int burst) {
        BuyerRateLimiter l = limiter(1.0, burst, 100);

        for (int i = 0; i < burst; i++) {
            assertThat(l.tryAcquire("t", "buyer")).as("acquire #%d of %d", i + 1, burst).isTrue();
        }
        assertThat(l.tryAcquire("t", "buyer")).isFalse();
        assertThat(l.tryAcquire("t", "buyer")).isFalse();
        assertThat(l.tracked()).isEqualTo(1);
    }

    @ParameterizedTest(name = "rate {0}/s burst {1}: after {2} ns -> {3} tokens")
    @CsvSource({
            "10,   5,  300000000,    3",
            "10,   5,  100000000,    1",
            "10,   5,   99999999,    0",
            "10,   5,  500000000,    5",
            "10,   5, 3600000000000, 5",   // an hour refills no more than the burst
            "2,    4, 1000000000,    2",
            "2,    4, 1499999999,    2",
            "2,    4, 1500000000,    3",
            "1000, 10,   7000000,    7",
            "0.5,  3, 1999999999,    0",
            "0.5,  3, 2000000000,    1",
            "0.5,  3, 6000000000,    3",
    })
    void refillGivesExactlyTheExpectedTokens(double rate, int burst, long advanceNanos, int expected) {
        BuyerRateLimiter l = limiter(rate, burst, 100);
        assertThat(drain(l, "t", "b", 1000)).isEqualTo(burst);

        now.addAndGet(advanceNanos);

        assertThat(drain(l, "t", "b", 1000)).isEqualTo(expected);
    }

    @Test
    void refusedAcquiresDoNotCostTokens() {
        BuyerRateLimiter l = limiter(10, 1, 100);
        assertThat(l.tryAcquire("t", "b")).isTrue();
        for (int i = 0; i < 20; i++) {
            assertThat(l.tryAcquire("t", "b")).isFalse();
        }

        now.addAndGet(100 * MILLI);

        assertThat(drain(l, "t", "b", 10)).isEqualTo(1);
    }

    @Test
    void steadyRateIsSustainedOneTokenPerPeriod() {
        BuyerRateLimiter l = limiter(4, 2, 100); // one token every 250 ms
        assertThat(drain(l, "t", "b", 10)).isEqualTo(2);

        int allowed = 0;
        for (int i = 0; i < 40; i++) {
            now.addAndGet(250 * MILLI);
            allowed += drain(l, "t", "b", 10);
        }

        assertThat(allowed).isEqualTo(40);
    }

    @Test
    void buyersAreIndependent() {
        BuyerRateLimiter l = limiter(1, 3, 100);

        assertThat(drain(l, "t", "alice", 10)).isEqualTo(3);
        assertThat(drain(l, "t", "bob", 10)).isEqualTo(3);
        assertThat(l.tryAcquire("t", "alice")).isFalse();
        assertThat(drain(l, "t", "carol", 1)).isEqualTo(1);
        assertThat(drain(l, "t", "carol", 10)).isEqualTo(2);
        assertThat(l.tracked()).isEqualTo(3);
    }

    @Test
    void sameBuyerIdInTwoTenantsIsIndependent() {
        BuyerRateLimiter l = limiter(1, 2, 100);

        assertThat(drain(l, "tenant-1", "buyer-7", 10)).isEqualTo(2);
        assertThat(drain(l, "tenant-2", "buyer-7", 10)).isEqualTo(2);
        assertThat(l.tryAcquire("tenant-1", "buyer-7")).isFalse();
        assertThat(l.tryAcquire("tenant-2", "buyer-7")).isFalse();
        assertThat(l.tracked()).isEqualTo(2);
    }

    @Test
    void idleBucketsAreForgottenAfterTwoTurns_andAReturningBuyerStartsFull() {
        BuyerRateLimiter l = limiter(10, 5, 100); // horizon 0.5 s; current began at construction
        long t0 = now.get();
        assertThat(drain(l, "t", "a", 10)).isEqualTo(5);
        assertThat(l.tracked()).isEqualTo(1);

        now.set(t0 + 500 * MILLI - 1);
        assertThat(l.tryAcquire("t", "x")).isTrue();
        assertThat(l.tracked()).as("no turn before the horizon").isEqualTo(2);

        now.set(t0 + 500 * MILLI);                             // first turn: a and x go to previous
        assertThat(l.tracked()).isEqualTo(2);
        assertThat(l.tryAcquire("t", "x")).isTrue();           // x moves back to current

        now.set(t0 + SECOND);                                   // second turn: a (idle 1 s) is dropped
        assertThat(l.tracked()).as("only x is left").isEqualTo(1);

        assertThat(drain(l, "t", "a", 10)).as("a starts full").isEqualTo(5);
        assertThat(l.tracked()).isEqualTo(2);
    }

    @Test
    void bucketsOfBothGenerationsGoWhenCurrentIsTwoHorizonsOld() {
        BuyerRateLimiter l = limiter(10, 5, 100); // horizon 0.5 s
        long t0 = now.get();
        assertThat(l.tryAcquire("t", "a")).isTrue();
        now.set(t0 + 600 * MILLI);                              // turn: a in previous
        assertThat(drain(l, "t", "b", 1)).isEqualTo(1);         // b in current, which began at t0 + 0.6 s
        assertThat(l.tracked()).isEqualTo(2);

        now.set(t0 + 1600 * MILLI);                             // current is 2 horizons old: a and b idle >= 0.5 s
        assertThat(l.tracked()).isZero();
        assertThat(drain(l, "t", "b", 10)).isEqualTo(5);
    }

    @Test
    void buyerSeenWithinTheHorizonKeepsItsPartlyEmptyBucketAcrossATurn() {
        BuyerRateLimiter l = limiter(1, 10, 100); // horizon 10 s
        long t0 = now.get();
        assertThat(drain(l, "t", "a", 100)).isEqualTo(10);

        now.set(t0 + 9 * SECOND);
        assertThat(drain(l, "t", "a", 100)).isEqualTo(9);      // empty again at t0 + 9 s

        now.set(t0 + 11 * SECOND);                              // a turn: a moves from previous to current
        assertThat(drain(l, "t", "a", 100)).as("2 s of refill, not a new bucket").isEqualTo(2);
        assertThat(l.tracked()).isEqualTo(1);

        now.set(t0 + 15 * SECOND);                              // the next turn, at t0 + 21 s, is not due
        assertThat(drain(l, "t", "a", 100)).isEqualTo(4);      // empty at t0 + 15 s
        now.set(t0 + 21 * SECOND);
        assertThat(l.tracked()).as("turned: a is in previous").isEqualTo(1);
        now.set(t0 + 24 * SECOND);
        assertThat(drain(l, "t", "a", 100)).as("9 s of refill, not a new bucket").isEqualTo(9);
        assertThat(l.tracked()).isEqualTo(1);
    }

    /**
     * Forgetting is exact: under any single-threaded schedule the limiter answers like a bucket
     * per buyer that is never forgotten (same arithmetic, same epsilon).
     */
    @ParameterizedTest(name = "seed {0}")
    @CsvSource({"1", "2", "3", "4"})
    void answersLikeBucketsThatAreNeverForgotten(long seed) {
        double rate = 10;
        int burst = 5;
        BuyerRateLimiter l = limiter(rate, burst, 1_000);
        Random random = new Random(seed);
        int buyers = 3;
        double[] tokens = new double[buyers];
        long[] last = new long[buyers];
        Arrays.fill(tokens, burst);
        Arrays.fill(last, now.get());
        int refused = 0;
        int forgotten = 0;
        for (int step = 0; step < 20_000; step++) {
            int dice = random.nextInt(20);
            if (dice < 12) {
                now.addAndGet(random.nextInt(10) * MILLI);
            } else if (dice == 12) {
                now.addAndGet(random.nextInt(1_200) * MILLI); // often past the horizon of 0.5 s
            } else if (dice < 15) {
                now.addAndGet(random.nextInt(1_000_000));
            }
            int b = random.nextInt(buyers);
            long t = now.get();
            tokens[b] = Math.min(burst, tokens[b] + (t - last[b]) * (rate / 1e9));
            last[b] = t;
            boolean expected = tokens[b] >= 1 - 1e-12;
            if (expected) {
                tokens[b] = Math.max(0, tokens[b] - 1);
            } else {
                refused++;
            }
            assertThat(l.tryAcquire("t", "buyer-" + b)).as("step %d, buyer %d", step, b).isEqualTo(expected);
            if (l.tracked() < buyers && step > 100) {
                forgotten++;
            }
        }
        assertThat(refused).as("the schedule exercises refusals").isGreaterThan(1_000);
        assertThat(forgotten).as("and forgetting").isGreaterThan(1_000);
    }

    @Test
    void trackedStaysWithinBuyersMaxUnderAFlood_andUntrackedBuyersAreAllowed() {
        BuyerRateLimiter l = limiter(1, 2, 100); // horizon 2 s
        for (int i = 0; i < 1_000; i++) {
            assertThat(l.tryAcquire("t", "buyer-" + i)).as("new buyer %d", i).isTrue();
            assertThat(l.tracked()).isLessThanOrEqualTo(100);
        }
        // The first 100 were tracked; the 101st turned the generations early (nothing to drop yet), the rest were not
        assertThat(l.tracked()).isEqualTo(100);
        assertThat(drain(l, "t", "buyer-0", 10)).as("a tracked buyer is still limited").isEqualTo(1);
        assertThat(drain(l, "t", "buyer-99", 10)).isEqualTo(1);
        assertThat(drain(l, "t", "buyer-500", 10)).as("an untracked buyer is let through").isEqualTo(10);

        // The flood goes on over many horizons: the bound holds throughout.
        for (int i = 0; i < 20_000; i++) {
            now.addAndGet(MILLI);
            assertThat(l.tryAcquire("t", "later-" + i)).isTrue();
            if (i % 97 == 0) {
                assertThat(l.tracked()).isLessThanOrEqualTo(100);
            }
        }
        assertThat(l.tracked()).isLessThanOrEqualTo(100);
    }

    @Test
    void atTheBoundAnEarlyTurnDropsPrevious_whenCurrentHoldsHalfTheBound() {
        BuyerRateLimiter l = limiter(1, 2, 4); // horizon 2 s
        long t0 = now.get();
        assertThat(l.tryAcquire("t", "a")).isTrue();
        assertThat(l.tryAcquire("t", "b")).isTrue();
        now.set(t0 + 2 * SECOND);                               // turn: a, b in previous
        assertThat(l.tryAcquire("t", "c")).isTrue();
        assertThat(l.tryAcquire("t", "d")).isTrue();            // current {c, d}: half the bound
        assertThat(l.tracked()).isEqualTo(4);

        now.set(t0 + 2500 * MILLI);
        assertThat(l.tryAcquire("t", "e")).isTrue();            // early turn: a, b dropped; e tracked

        assertThat(l.tracked()).isEqualTo(3);
        assertThat(drain(l, "t", "e", 10)).as("e is tracked: 1 token left").isEqualTo(1);
        assertThat(drain(l, "t", "c", 10)).as("c kept its bucket: 1.5 tokens").isEqualTo(1);
        assertThat(l.tracked()).isEqualTo(3);
    }

    @Test
    void whenNothingCanBeEvictedANewBuyerIsAllowedUntracked() {
        BuyerRateLimiter l = limiter(1, 2, 2);
        assertThat(l.tryAcquire("t", "a")).isTrue();
        assertThat(l.tryAcquire("t", "b")).isTrue();

        now.addAndGet(SECOND - 1); // neither a nor b has refilled completely
        for (int i = 0; i < 25; i++) {
            assertThat(l.tryAcquire("t", "c")).as("untracked acquire #%d", i + 1).isTrue();
        }

        assertThat(l.tracked()).isEqualTo(2);
        // the tracked buyers are still limited: each has 1.999999999 tokens, so one more acquire
        assertThat(drain(l, "t", "a", 10)).isEqualTo(1);
        assertThat(drain(l, "t", "b", 10)).isEqualTo(1);
    }

    @Test
    void knownBuyerIsServedWhenTheMapIsFull() {
        BuyerRateLimiter l = limiter(1, 2, 1);
        assertThat(l.tryAcquire("t", "a")).isTrue();

        assertThat(l.tryAcquire("t", "a")).isTrue();
        assertThat(l.tryAcquire("t", "a")).isFalse();
        assertThat(l.tracked()).isEqualTo(1);
    }

    @Test
    void expiryArithmeticSurvivesNanoClockOverflow() {
        BuyerRateLimiter l = limiter(10, 2, 10);
        now.set(Long.MAX_VALUE - 50 * MILLI);
        assertThat(drain(l, "t", "b", 10)).isEqualTo(2);

        now.addAndGet(100 * MILLI); // wraps
        assertThat(now.get()).isNegative();

        assertThat(drain(l, "t", "b", 10)).isEqualTo(1);
    }

    @ParameterizedTest(name = "rate {0}, burst {1}, buyersMax {2}")
    @CsvSource({
            "0,    1, 1",
            "-1,   1, 1",
            "1,    0, 1",
            "1,   -3, 1",
            "1,    1, 0",
            "1,    1, -1",
    })
    void constructorRefusesBadSettings(double rate, int burst, int buyersMax) {
        assertThatThrownBy(() -> limiter(rate, burst, buyersMax))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ratePerSecond > 0, burst >= 1, buyersMax >= 1");
    }

    @Test
    void smallSettingsWork() {
        BuyerRateLimiter l = limiter(0.001, 1, 1);
        assertThat(l.tryAcquire("t", "b")).isTrue();
        assertThat(l.tryAcquire("t", "b")).isFalse();
        now.addAndGet(1000 * SECOND); // 0.001/s: one token per 1000 s
        assertThat(l.tryAcquire("t", "b")).isTrue();
        assertThat(l.tryAcquire("t", "b")).isFalse();
    }

    @ParameterizedTest(name = "rate {0}")
    @CsvSource({"NaN", "Infinity"})
    void nonFiniteRate_isRefusedAtConstruction(double rate) {
        assertThatThrownBy(() -> limiter(rate, 2, 10)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void refillIsExactWhenAccumulatedInSmallSteps() {
        BuyerRateLimiter l = limiter(10, 1, 10);
        assertThat(l.tryAcquire("t", "b")).isTrue();

        for (int i = 1; i < 10; i++) {
            now.addAndGet(10 * MILLI);
            assertThat(l.tryAcquire("t", "b")).as("at %d ms", i * 10).isFalse();
        }
        now.addAndGet(10 * MILLI);

        assertThat(l.tryAcquire("t", "b")).as("at 100 ms one token is due").isTrue();
    }

    /** Runs {@code task} on {@code threads} threads started together; returns the sum of their results. */
    static int onThreads(int threads, Callable<Integer> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                results.add(pool.submit(() -> {
                    start.await();
                    return task.call();
                }));
            }
            start.countDown();
            int sum = 0;
            for (Future<Integer> f : results) {
                sum += f.get(waitMillis(30), TimeUnit.MILLISECONDS);
            }
            return sum;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentAcquiresOfOneBuyerGetExactlyTheBurst() throws Exception {
        BuyerRateLimiter l = limiter(20, 40, 1_000); // the clock stands still

        int granted = onThreads(8, () -> drain(l, "t", "flash", 1_000));

        assertThat(granted).isEqualTo(40);
        assertThat(l.tracked()).isEqualTo(1);
    }

    @Test
    void concurrentAcquiresAcrossATurnKeepEveryBucket() throws Exception {
        BuyerRateLimiter l = limiter(1, 5, 1_000); // horizon 5 s
        long t0 = now.get();
        now.set(t0 + 4 * SECOND);
        for (int b = 0; b < 64; b++) {
            assertThat(drain(l, "t", "b" + b, 10)).isEqualTo(5);
        }
        now.set(t0 + 5 * SECOND); // a turn is due: the first calls race to make it and to move the buckets

        int granted = onThreads(8, () -> {
            int n = 0;
            for (int round = 0; round < 5; round++) {
                for (int b = 0; b < 64; b++) {
                    n += l.tryAcquire("t", "b" + b) ? 1 : 0;
                }
            }
            return n;
        });

        assertThat(granted).as("one second of refill per buyer").isEqualTo(64);
        assertThat(l.tracked()).isEqualTo(64);
    }

    /** A bound on how long a thread of this test may take: {@code seconds}, scaled for slow machines. */
    private static long waitMillis(long seconds) {
        return TestTimeouts.scaled(Duration.ofSeconds(seconds)).toMillis();
    }
}
