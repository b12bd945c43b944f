package io.lastunit.router.shed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RecentKeysTest {
    private final AtomicLong now = new AtomicLong(1_000);

    @Test
    void rememberedKey_isSeenUntilItsTtlPasses() {
        RecentKeys keys = new RecentKeys(100, 10, now::get);
        keys.remember("t", "k");
        assertThat(keys.seen("t", "k")).isTrue();
        assertThat(keys.seen("t2", "k")).isFalse();
        assertThat(keys.seen("t", "other")).isFalse();
        now.addAndGet(99);
        assertThat(keys.seen("t", "k")).isTrue();
        now.addAndGet(1);
        assertThat(keys.seen("t", "k")).isFalse();
    }

    @Test
    void atCapacity_expiredKeysGoFirst_thenTheOlderHalf() {
        RecentKeys keys = new RecentKeys(100, 4, now::get);
        keys.remember("t", "a");
        keys.remember("t", "b");
        now.addAndGet(60);
        keys.remember("t", "c");
        keys.remember("t", "d");
        assertThat(keys.size()).isEqualTo(4);
        keys.remember("t", "e"); // nothing expired: the keys expiring in the next half TTL (a, b) go
        assertThat(keys.seen("t", "a")).isFalse();
        assertThat(keys.seen("t", "b")).isFalse();
        assertThat(keys.seen("t", "c")).isTrue();
        assertThat(keys.seen("t", "e")).isTrue();
        assertThat(keys.size()).isEqualTo(3);
        now.addAndGet(100);
        keys.remember("t", "f");
        keys.remember("t", "g"); // c, d and e expired: dropped to make room
        assertThat(keys.size()).isEqualTo(2);
    }

    @Test
    void badSettings_areRefused() {
        assertThatThrownBy(() -> new RecentKeys(0, 1, now::get)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RecentKeys(1, 0, now::get)).isInstanceOf(IllegalArgumentException.class);
    }
}
