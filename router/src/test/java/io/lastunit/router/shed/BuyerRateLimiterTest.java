package io.lastunit.router.shed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    void atBuyersMaxIdleBucketsAreEvictedToAdmitANewBuyer() {
        BuyerRateLimiter l = limiter(1, 2, 2); // refills fully 1 s after a single acquire
        long t0 = now.get();
        assertThat(l.tryAcquire("t", "a")).isTrue();           // a: 1 token at t0
        now.set(t0 + 500 * MILLI);
        assertThat(l.tryAcquire("t", "b")).isTrue();           // b: 1 token at t0 + 0.5 s
        assertThat(l.tracked()).isEqualTo(2);

        now.set(t0 + SECOND);                                   // a is full again (idle), b has 1.5
        assertThat(l.tryAcquire("t", "c")).isTrue();

        assertThat(l.tracked()).as("a evicted, c admitted").isEqualTo(2);
        // b kept its state: 1.5 tokens -> one acquire, then refused
        assertThat(drain(l, "t", "b", 10)).isEqualTo(1);
        // c is tracked: it had burst 2, used 1
        assertThat(drain(l, "t", "c", 10)).isEqualTo(1);
        assertThat(l.tracked()).isEqualTo(2);
    }

    @Test
    void evictionDropsEveryIdleBucket() {
        BuyerRateLimiter l = limiter(1, 2, 3);
        assertThat(l.tryAcquire("t", "a")).isTrue();
        assertThat(l.tryAcquire("t", "b")).isTrue();
        assertThat(l.tryAcquire("t", "c")).isTrue();
        assertThat(l.tracked()).isEqualTo(3);

        now.addAndGet(SECOND);
        assertThat(l.tryAcquire("t", "d")).isTrue();

        assertThat(l.tracked()).isEqualTo(1);
        assertThat(drain(l, "t", "d", 10)).as("d is tracked and limited").isEqualTo(1);
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
}
