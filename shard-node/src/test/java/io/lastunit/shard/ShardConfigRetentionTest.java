package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.shard.wiring.ShardProperties;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The retention settings as the node binds them ({@code lastunit.shard.retention-*}), checked at start. */
class ShardConfigRetentionTest {

    private static ShardProperties properties() {
        ShardProperties p = new ShardProperties();
        p.setJdbcUrl("jdbc:postgresql://127.0.0.1:1/never-reached");
        return p;
    }

    @Test
    void defaults_areValid_andRetentionIsOn() {
        ShardConfig c = properties().toConfig();
        assertThat(c.retention().enabled()).isTrue();
        assertThat(c.retention().holdsAfter()).isEqualTo(Duration.ofDays(7));
        assertThat(c.retention().holdsAfter().toMillis()).isGreaterThanOrEqualTo(2 * c.limits().holdTtlMaxMs());
    }

    @Test
    void everySettingIsBound() {
        ShardProperties p = properties();
        p.setRetentionEnabled(false);
        p.setRetentionIntervalMs(5_000);
        p.setRetentionHoldsAfterMs(Duration.ofDays(3).toMillis());
        p.setRetentionTransfersAfterMs(Duration.ofHours(2).toMillis());
        p.setRetentionBatchMax(250);
        p.setRetentionBatchesPerRunMax(7);
        p.setRetentionBatchPauseMs(0);
        ShardConfig c = p.toConfig();
        assertThat(c.retention().enabled()).isFalse();
        assertThat(c.retention().interval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.retention().holdsAfter()).isEqualTo(Duration.ofDays(3));
        assertThat(c.retention().transfersAfter()).isEqualTo(Duration.ofHours(2));
        assertThat(c.retention().batchMax()).isEqualTo(250);
        assertThat(c.retention().batchesPerRunMax()).isEqualTo(7);
        assertThat(c.retention().batchPause()).isZero();
    }

    @Test
    void theIdempotencyWindow_mustOutliveTheLongestHold() {
        ShardProperties p = properties();
        p.setRetentionHoldsAfterMs(Duration.ofHours(47).toMillis()); // hold-ttl-max-ms is a day: TTL + one Extend = 2 days
        assertThatThrownBy(p::toConfig)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid shard config: ")
                .hasMessageContaining("retention holdsAfter=169200000 ms is below twice holdTtlMaxMs=86400000 ms")
                .hasMessageContaining("a key must outlive the longest hold");
        p.setHoldTtlMaxMs(Duration.ofHours(1).toMillis());
        p.setHoldTtlDefaultMs(Duration.ofMinutes(10).toMillis());
        assertThat(p.toConfig().retention().holdsAfter()).isEqualTo(Duration.ofHours(47));
    }

    @Test
    void aRetentionBoundOutsideItsRange_isRefusedByName() {
        ShardProperties p = properties();
        p.setRetentionBatchMax(0);
        p.setRetentionIntervalMs(0);
        assertThatThrownBy(p::toConfig)
                .hasMessageStartingWith("invalid retention config: ")
                .hasMessageContaining("interval=0 ms is outside [1000, 86400000] ms")
                .hasMessageContaining("batchMax=0 is outside [1, 10000]");
    }
}
