package io.lastunit.router.shed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.testkit.TestTimeouts;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class InFlightLimiterTest {

    static final ItemKey ITEM = new ItemKey("tenant-1", "sku-1", "eu");
    static final ItemKey OTHER = new ItemKey("tenant-1", "sku-2", "eu");

    /** The limiter's private map, to check that idle items leave no entry behind. */
    static Map<?, ?> entries(InFlightLimiter l) {
        try {
            Field f = InFlightLimiter.class.getDeclaredField("inFlight");
            f.setAccessible(true);
            return (Map<?, ?>) f.get(l);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest(name = "max {0}")
    @ValueSource(ints = {1, 2, 7, 100})
    void exactlyPerItemMaxAcquiresSucceed(int max) {
        InFlightLimiter l = new InFlightLimiter(max);

        for (int i = 0; i < max; i++) {
            assertThat(l.tryAcquire(ITEM)).as("acquire #%d of %d", i + 1, max).isTrue();
            assertThat(l.inFlight(ITEM)).isEqualTo(i + 1);
        }
        assertThat(l.tryAcquire(ITEM)).isFalse();
        assertThat(l.tryAcquire(ITEM)).isFalse();
        assertThat(l.inFlight(ITEM)).as("refusals do not count").isEqualTo(max);
    }

    @Test
    void releaseFreesExactlyOneSlot() {
        InFlightLimiter l = new InFlightLimiter(3);
        for (int i = 0; i < 3; i++) {
            assertThat(l.tryAcquire(ITEM)).isTrue();
        }

        l.release(ITEM);

        assertThat(l.inFlight(ITEM)).isEqualTo(2);
        assertThat(l.tryAcquire(ITEM)).isTrue();
        assertThat(l.tryAcquire(ITEM)).isFalse();
        assertThat(l.inFlight(ITEM)).isEqualTo(3);
    }

    @Test
    void entryDisappearsWhenTheCountDropsToZero() {
        InFlightLimiter l = new InFlightLimiter(5);
        assertThat(entries(l)).isEmpty();
        assertThat(l.tryAcquire(ITEM)).isTrue();
        assertThat(l.tryAcquire(ITEM)).isTrue();
        assertThat(entries(l)).hasSize(1);

        l.release(ITEM);
        assertThat(l.inFlight(ITEM)).isEqualTo(1);
        assertThat(entries(l)).hasSize(1);

        l.release(ITEM);
        assertThat(l.inFlight(ITEM)).isZero();
        assertThat(entries(l)).isEmpty();
    }

    @Test
    void releaseWithoutAcquireIsHarmlessAndNeverGoesNegative() {
        InFlightLimiter l = new InFlightLimiter(2);

        l.release(ITEM);
        assertThat(l.inFlight(ITEM)).isZero();
        assertThat(entries(l)).isEmpty();

        assertThat(l.tryAcquire(ITEM)).isTrue();
        l.release(ITEM);
        l.release(ITEM); // one too many
        assertThat(l.inFlight(ITEM)).isZero();
        assertThat(entries(l)).isEmpty();

        // the extra release did not buy an extra slot
        assertThat(l.tryAcquire(ITEM)).isTrue();
        assertThat(l.tryAcquire(ITEM)).isTrue();
        assertThat(l.tryAcquire(ITEM)).isFalse();
    }

    @Test
    void itemsAreIndependent() {
        InFlightLimiter l = new InFlightLimiter(2);
        assertThat(l.tryAcquire(ITEM)).isTrue();
        assertThat(l.tryAcquire(ITEM)).isTrue();
        assertThat(l.tryAcquire(ITEM)).isFalse();

        assertThat(l.tryAcquire(OTHER)).isTrue();
        assertThat(l.tryAcquire(OTHER)).isTrue();
        assertThat(l.tryAcquire(OTHER)).isFalse();
        assertThat(l.inFlight(ITEM)).isEqualTo(2);
        assertThat(l.inFlight(OTHER)).isEqualTo(2);
        assertThat(l.inFlight(new ItemKey("tenant-1", "never-seen", "eu"))).isZero();

        l.release(OTHER);
        assertThat(l.inFlight(OTHER)).isEqualTo(1);
        assertThat(l.inFlight(ITEM)).isEqualTo(2);
        assertThat(l.tryAcquire(ITEM)).isFalse();
        assertThat(entries(l)).hasSize(2);
    }

    @ParameterizedTest(name = "max {0}")
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void badMaxIsRefused(int max) {
        assertThatThrownBy(() -> new InFlightLimiter(max))
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("perItemMax must be >= 1, got " + max);
    }

    @Test
    void manyThreadsAtOnceGetExactlyPerItemMaxSlots() throws Exception {
        int threads = 16;
        int attemptsPerThread = 1000;
        int max = 100;
        InFlightLimiter l = new InFlightLimiter(max);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    int ok = 0;
                    for (int i = 0; i < attemptsPerThread; i++) {
                        if (l.tryAcquire(ITEM)) {
                            ok++;
                        }
                    }
                    return ok;
                }));
            }
            assertThat(ready.await(waitMillis(10), TimeUnit.MILLISECONDS)).isTrue();
            go.countDown();
            int successes = 0;
            for (Future<Integer> f : results) {
                successes += f.get(waitMillis(30), TimeUnit.MILLISECONDS);
            }

            assertThat(successes).isEqualTo(max);
            assertThat(l.inFlight(ITEM)).isEqualTo(max);

            // release all of them from many threads at once
            CountDownLatch go2 = new CountDownLatch(1);
            List<Future<?>> releases = new ArrayList<>();
            for (int t = 0; t < 10; t++) {
                releases.add(pool.submit(() -> {
                    go2.await();
                    for (int i = 0; i < max / 10; i++) {
                        l.release(ITEM);
                    }
                    return null;
                }));
            }
            go2.countDown();
            for (Future<?> f : releases) {
                f.get(waitMillis(30), TimeUnit.MILLISECONDS);
            }
            assertThat(l.inFlight(ITEM)).isZero();
            assertThat(entries(l)).isEmpty();
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(waitMillis(10), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    @Test
    void manyRoundsOfRacingAcquiresNeverOvershootTheCap() throws Exception {
        int threads = 8;
        int max = 3;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 300; round++) {
                InFlightLimiter l = new InFlightLimiter(max);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        go.await();
                        int ok = 0;
                        for (int i = 0; i < 20; i++) {
                            ok += l.tryAcquire(ITEM) ? 1 : 0;
                        }
                        return ok;
                    }));
                }
                go.countDown();
                int successes = 0;
                for (Future<Integer> f : results) {
                    successes += f.get(waitMillis(30), TimeUnit.MILLISECONDS);
                }
                assertThat(successes).as("round %d", round).isEqualTo(max);
                assertThat(l.inFlight(ITEM)).as("round %d", round).isEqualTo(max);
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(waitMillis(10), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    @Test
    void concurrentAcquireAndReleaseNeverExceedsTheCapAndEndsEmpty() throws Exception {
        int threads = 16;
        int max = 5;
        InFlightLimiter l = new InFlightLimiter(max);
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger worst = new AtomicInteger();
        AtomicInteger worstCounted = new AtomicInteger();
        AtomicInteger acquired = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                ItemKey item = t % 2 == 0 ? ITEM : OTHER;
                results.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 2000; i++) {
                        if (l.tryAcquire(ITEM)) {
                            acquired.incrementAndGet();
                            worst.accumulateAndGet(holding.incrementAndGet(), Math::max);
                            worstCounted.accumulateAndGet(l.inFlight(ITEM), Math::max);
                            holding.decrementAndGet();
                            l.release(ITEM);
                        }
                        if (l.tryAcquire(item)) {
                            l.release(item);
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : results) {
                f.get(waitMillis(60), TimeUnit.MILLISECONDS);
            }

            assertThat(worst.get()).isBetween(1, max);
            assertThat(worstCounted.get()).isBetween(1, max);
            assertThat(acquired.get()).isPositive();
            assertThat(l.inFlight(ITEM)).isZero();
            assertThat(l.inFlight(OTHER)).isZero();
            assertThat(entries(l)).isEmpty();
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(waitMillis(10), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    /** A bound on how long a thread of this test may take: {@code seconds}, scaled for slow machines. */
    private static long waitMillis(long seconds) {
        return TestTimeouts.scaled(Duration.ofSeconds(seconds)).toMillis();
    }
}
