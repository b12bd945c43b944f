package io.lastunit.shard.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.common.invariant.CrossShardChecker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetentionConfigTest {

    private static RetentionConfig with(Duration interval, Duration holdsAfter, Duration transfersAfter, int batchMax,
                                        int batchesPerRunMax, Duration pause) {
        return new RetentionConfig(true, interval, holdsAfter, transfersAfter, batchMax, batchesPerRunMax, pause);
    }

    @Test
    void defaults_keepAWeek_inBatchesOfAThousand() {
        RetentionConfig d = RetentionConfig.defaults();
        assertThat(d.enabled()).isTrue();
        assertThat(d.interval()).isEqualTo(Duration.ofMinutes(1));
        assertThat(d.holdsAfter()).isEqualTo(Duration.ofDays(7));
        assertThat(d.transfersAfter()).isEqualTo(Duration.ofDays(7));
        assertThat(d.batchMax()).isEqualTo(1_000);
        assertThat(d.batchesPerRunMax()).isEqualTo(100);
        assertThat(d.batchPause()).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void transferRetention_outlivesTheCrossShardChecksWindow_byFar() {
        assertThat(RetentionConfig.TRANSFERS_AFTER_MIN)
                .isGreaterThanOrEqualTo(CrossShardChecker.TRANSFER_WINDOW.multipliedBy(100))
                .isGreaterThanOrEqualTo(Duration.ofHours(1));
        assertThatThrownBy(() -> with(Duration.ofMinutes(1), Duration.ofDays(7), Duration.ofMinutes(59), 1_000, 100,
                Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("transfersAfter=3540000 ms is outside [3600000, 315360000000] ms")
                .hasMessageContaining("cross-shard check's 30 s transfer window");
    }

    @Test
    void everyBoundIsChecked_andEveryProblemNamed() {
        assertThatThrownBy(() -> with(Duration.ofMillis(999), Duration.ofMinutes(59), Duration.ofDays(3_651), 0,
                10_001, Duration.ofSeconds(11)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid retention config: ")
                .hasMessageContaining("interval=999 ms is outside [1000, 86400000] ms")
                .hasMessageContaining("holdsAfter=3540000 ms is outside [3600000, 315360000000] ms (the idempotency window")
                .hasMessageContaining("transfersAfter=315446400000 ms is outside")
                .hasMessageContaining("batchMax=0 is outside [1, 10000]")
                .hasMessageContaining("batchesPerRunMax=10001 is outside [1, 10000]")
                .hasMessageContaining("batchPause=11000 ms is outside [0, 10000] ms");
        assertThatThrownBy(() -> with(null, Duration.ofDays(7), Duration.ofDays(7), 1, 1, Duration.ZERO))
                .hasMessageContaining("interval is required");
    }

    @Test
    void theSmallestAndLargestValues_areAccepted() {
        RetentionConfig low = with(Duration.ofSeconds(1), Duration.ofHours(1), Duration.ofHours(1), 1, 1, Duration.ZERO);
        assertThat(low.batchMax()).isEqualTo(1);
        RetentionConfig high = with(Duration.ofDays(1), Duration.ofDays(3_650), Duration.ofDays(3_650), 10_000, 10_000,
                Duration.ofSeconds(10));
        assertThat(high.batchesPerRunMax()).isEqualTo(10_000);
    }
}
