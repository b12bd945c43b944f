package io.lastunit.router.shed;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The primitive table behind each generation of {@link BuyerRateLimiter}, against a map as its model. */
class BuyerRateLimiterStripeTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42})
    void findsWhatWasPutAndNothingElse_throughGrowthAndBackwardShiftDeletion(long seed) {
        Random r = new Random(seed);
        BuyerRateLimiter.Stripe s = new BuyerRateLimiter.Stripe();
        Map<Long, Long> model = new HashMap<>();
        // Few distinct low bits, so keys share home slots and probe chains wrap around the table.
        long[] pool = new long[300];
        for (int i = 0; i < pool.length; i++) {
            pool[i] = ((long) (r.nextInt(1 << 20) + 1) << 20) | r.nextInt(8) | (r.nextInt(4) << 10);
        }
        for (int step = 0; step < 20_000; step++) {
            long k = pool[r.nextInt(pool.length)];
            int slot = s.find(k);
            assertThat(slot >= 0).as("key %d present", k).isEqualTo(model.containsKey(k));
            if (slot >= 0) {
                assertThat(s.lastNanosAt(slot)).isEqualTo(model.get(k)); // values move with their keys
            }
            if (slot >= 0 && r.nextBoolean()) {
                s.removeAt(slot);
                model.remove(k);
            } else if (slot < 0) {
                long v = r.nextLong();
                int at = s.insert(k, 0.5, v);
                assertThat(s.find(k)).isEqualTo(at);
                model.put(k, v);
            }
            assertThat(s.size()).isEqualTo(model.size());
        }
        for (long k : pool) {
            assertThat(s.find(k) >= 0).isEqualTo(model.containsKey(k));
        }
    }
}
