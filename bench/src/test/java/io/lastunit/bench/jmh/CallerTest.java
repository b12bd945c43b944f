package io.lastunit.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CallerTest {

    @Test
    void everyCall_hasANewKeyAndBuyer_acrossThreads() {
        Caller a = new Caller();
        a.init(1, 12345);
        Caller b = new Caller();
        b.init(2, 12345);
        Set<String> keys = new HashSet<>();
        Set<String> buyers = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            for (Caller c : new Caller[] {a, b}) {
                c.next();
                assertThat(keys.add(c.key())).isTrue();
                assertThat(buyers.add(c.buyer())).isTrue();
            }
        }
    }

    @Test
    void keysAndBuyers_fitTheRequestLimits() {
        Caller c = new Caller();
        c.init(Integer.MAX_VALUE, (1 << 30) - 1);
        for (int i = 0; i < 3; i++) {
            c.next();
        }
        // Limits: idempotency keys and buyer ids are 1..128 printable ASCII characters.
        assertThat(c.key()).hasSizeLessThan(128).matches("[ -~]+");
        assertThat(c.buyer()).hasSizeLessThan(128).matches("[ -~]+");
        assertThat(c.key()).endsWith("-3");
    }

    @Test
    void theKeyStays_untilTheNextCall() {
        Caller c = new Caller();
        c.init(3, 9);
        c.next();
        String key = c.key();
        assertThat(c.key()).isEqualTo(key);
        assertThat(c.next().key()).isNotEqualTo(key);
    }

    @Test
    void pickItem_isTheHotItem_orUniform() {
        for (int i = 0; i < 100; i++) {
            assertThat(Caller.pickItem(1)).isZero();
        }
        int[] seen = new int[1000];
        for (int i = 0; i < 100_000; i++) {
            seen[Caller.pickItem(1000)]++;
        }
        for (int count : seen) {
            assertThat(count).isPositive();
        }
    }
}
