package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LaneConfigTest {

    private static LaneConfig pacing(long intervalMicros, int paceBelow) {
        return new LaneConfig(4, 16_384, 512, intervalMicros, paceBelow, 3, 1_000_000, 1_000, 50, 256, 1_024, 8);
    }

    @Test
    void pacingIsOffByDefault() {
        assertThat(LaneConfig.defaults().batchIntervalMicros()).isZero();
        assertThat(LaneConfig.defaults().paceBelow()).isEqualTo(64);
    }

    @Test
    void pacingBounds_areCheckedAndEveryProblemIsNamed() {
        assertThat(pacing(0, 1).batchIntervalMicros()).isZero();
        assertThat(pacing(1_000_000, 10_000).paceBelow()).isEqualTo(10_000);
        assertThatThrownBy(() -> pacing(-1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("batchIntervalMicros=-1 is outside [0, 1000000]")
                .hasMessageContaining("paceBelow=0 is outside [1, 10000]");
        assertThatThrownBy(() -> pacing(1_000_001, 64))
                .hasMessageContaining("batchIntervalMicros=1000001 is outside [0, 1000000]");
    }
}
