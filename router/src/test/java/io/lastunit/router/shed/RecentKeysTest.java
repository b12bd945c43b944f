package io.lastunit.router.shed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RecentKeysTest {
    /** ttl 900 ns: spans of 100 ns, counted from construction at 1,000. */
    static final long TTL = 900;
    static final long SPAN = 100;
    static final long ORIGIN = 1_000;

    private final AtomicLong now = new AtomicLong(ORIGIN);

    RecentKeys keys(int keysMax) {
        return new RecentKeys(TTL, keysMax, now::get);
    }

    @ParameterizedTest(name = "remembered {0} ns into its span")
    @CsvSource({"0", "1", "50", "99"})
    void rememberedKey_isSeenForTheWholeTtl_andForgottenAfterTtlPlusOneSpan(long offset) {
        RecentKeys keys = keys(10);
        now.set(ORIGIN + offset);
        keys.remember("t", "i", "k");

        for (long t = ORIGIN + offset; t <= ORIGIN + offset + TTL; t += 7) {
            now.set(t);
            assertThat(keys.seen("t", "i", "k")).as("at +%d ns", t - ORIGIN - offset).isTrue();
        }
        now.set(ORIGIN + offset + TTL);
        assertThat(keys.seen("t", "i", "k")).as("at +ttl").isTrue();
        now.set(ORIGIN + TTL + SPAN - 1); // the last instant of the ninth span after the key's own
        assertThat(keys.seen("t", "i", "k")).isTrue();
        assertThat(keys.size()).isEqualTo(1);

        now.set(ORIGIN + TTL + SPAN); // ten spans have begun after the key's span: at most ttl + span after
        assertThat(keys.seen("t", "i", "k")).isFalse();
        assertThat(keys.size()).isZero();
    }

    @Test
    void otherTenantsAndKeysAreNotSeen() {
        RecentKeys keys = keys(10);
        keys.remember("t", "i", "k");

        assertThat(keys.seen("t", "i", "k")).isTrue();
        assertThat(keys.seen("t2", "i", "k")).isFalse();
        assertThat(keys.seen("t", "i", "other")).isFalse();
        assertThat(keys.seen("tk", "i", "")).isFalse();
        assertThat(keys.seen("t", "other-item", "k")).as("another item's key is another Reserve").isFalse();
    }

    @Test
    void rememberingAgainExtendsTheKey_andCountsOncePerGeneration() {
        RecentKeys keys = keys(10);
        keys.remember("t", "i", "k");
        keys.remember("t", "i", "k");
        assertThat(keys.size()).isEqualTo(1);

        now.set(ORIGIN + 5 * SPAN);
        keys.remember("t", "i", "k");
        assertThat(keys.size()).as("one fingerprint in each of two generations").isEqualTo(2);

        now.set(ORIGIN + 10 * SPAN);
        assertThat(keys.seen("t", "i", "k")).isTrue();
        assertThat(keys.size()).isEqualTo(1);
        now.set(ORIGIN + 15 * SPAN - 1);
        assertThat(keys.seen("t", "i", "k")).isTrue();
        now.set(ORIGIN + 15 * SPAN);
        assertThat(keys.seen("t", "i", "k")).isFalse();
    }

    @Test
    void atCapacity_theOldestGenerationIsDroppedEarly_theCurrentOneLast() {
        RecentKeys keys = keys(4);
        keys.remember("t", "i", "a");
        keys.remember("t", "i", "b");
        now.set(ORIGIN + SPAN);
        keys.remember("t", "i", "c");
        keys.remember("t", "i", "d");
        assertThat(keys.size()).isEqualTo(4);

        now.set(ORIGIN + 2 * SPAN);
        keys.remember("t", "i", "e"); // full: the generation of a and b goes
        assertThat(keys.seen("t", "i", "a")).isFalse();
        assertThat(keys.seen("t", "i", "b")).isFalse();
        assertThat(keys.seen("t", "i", "c")).isTrue();
        assertThat(keys.seen("t", "i", "d")).isTrue();
        assertThat(keys.seen("t", "i", "e")).isTrue();
        assertThat(keys.size()).isEqualTo(3);

        keys.remember("t", "i", "f");
        assertThat(keys.size()).isEqualTo(4);
        keys.remember("t", "i", "e"); // already held in the current generation: nothing to make room for
        assertThat(keys.size()).isEqualTo(4);
        assertThat(keys.seen("t", "i", "c")).isTrue();

        keys.remember("t", "i", "g"); // full: the generation of c and d goes
        assertThat(keys.seen("t", "i", "c")).isFalse();
        assertThat(keys.seen("t", "i", "d")).isFalse();
        assertThat(keys.size()).isEqualTo(3);

        keys.remember("t", "i", "h");
        keys.remember("t", "i", "i"); // full, and only the current generation is left: it goes
        assertThat(keys.size()).isEqualTo(1);
        assertThat(keys.seen("t", "i", "i")).isTrue();
        assertThat(keys.seen("t", "i", "h")).isFalse();
    }

    @Test
    void theBoundHoldsUnderAFloodOfThreeTimesKeysMax() {
        int keysMax = 32_768; // 16 stripes of 2,048
        RecentKeys keys = keys(keysMax);

        for (int i = 0; i < 3 * keysMax; i++) {
            if (i % 50 == 0) {
                now.incrementAndGet(); // the flood spans some generations, and time moves on within them
            }
            keys.remember("tenant", "i", "flood-" + i);
            if (i % 1_000 == 0) {
                assertThat(keys.size()).isLessThanOrEqualTo(keysMax);
            }
        }

        int held = keys.size();
        assertThat(held).isLessThanOrEqualTo(keysMax);
        int seen = 0;
        for (int i = 0; i < 3 * keysMax; i++) {
            seen += keys.seen("tenant", "i", "flood-" + i) ? 1 : 0;
        }
        assertThat(seen).as("every key held is seen, no other").isEqualTo(held);
        // The keys of the last ttl (45,000: 50 a nanosecond) do not fit: generations were dropped early.
        assertThat(held).isLessThan(45_000);
        for (int i = 3 * keysMax - 1_000; i < 3 * keysMax; i++) {
            assertThat(keys.seen("tenant", "i", "flood-" + i)).as("key %d of the current generation", i).isTrue();
        }
    }

    @Test
    void concurrentRemembersAreAllSeen() throws Exception {
        RecentKeys keys = new RecentKeys(TimeUnit.MINUTES.toNanos(10), 1_000_000, now::get);
        int threads = 8;
        int perThread = 5_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        keys.remember("t", "i", thread + "-" + i);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(waitMillis(30), TimeUnit.MILLISECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(keys.size()).isEqualTo(threads * perThread);
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                assertThat(keys.seen("t", "i", t + "-" + i)).isTrue();
            }
        }
        assertThat(keys.seen("t", "i", threads + "-0")).isFalse();
    }

    @Test
    void generationsSurviveNanoClockOverflow() {
        now.set(Long.MAX_VALUE - 150);
        RecentKeys keys = keys(10);
        keys.remember("t", "i", "k");

        now.addAndGet(TTL); // wraps
        assertThat(now.get()).isNegative();
        assertThat(keys.seen("t", "i", "k")).isTrue();
        now.addAndGet(SPAN);
        assertThat(keys.seen("t", "i", "k")).isFalse();
    }

    @Test
    void badSettings_areRefused() {
        assertThatThrownBy(() -> new RecentKeys(0, 1, now::get)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RecentKeys(1, 0, now::get)).isInstanceOf(IllegalArgumentException.class);
    }

    /** A bound on how long a thread of this test may take: {@code seconds}, scaled for slow machines. */
    private static long waitMillis(long seconds) {
        return TestTimeouts.scaled(Duration.ofSeconds(seconds)).toMillis();
    }
}
