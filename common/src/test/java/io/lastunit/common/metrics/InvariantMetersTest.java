package io.lastunit.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** The six invariant meters: what a check that ran, one that could not, and standing by leave. */
class InvariantMetersTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InvariantMeters meters = new InvariantMeters(registry, "cross_shard", Tags.of("cell", "vip"), 1_000);

    private double gauge(String name) {
        return registry.get(name).tags("scope", "cross_shard", "cell", "vip").gauge().value();
    }

    private double checks(String result) {
        return registry.get("lastunit.invariant.checks").tags("scope", "cross_shard", "cell", "vip", "result", result)
                .counter().count();
    }

    @Test
    void beforeAnyCheck_theLastCheckIsWhenCheckingStarted_notTheEpoch() {
        assertThat(gauge("lastunit.invariant.last.check.timestamp")).isEqualTo(1_000);
        assertThat(gauge("lastunit.invariant.drift.units")).isZero();
        assertThat(checks("ok") + checks("drift") + checks("failed")).isZero();
    }

    @Test
    void drifts_countAStreak_aFailedCheckKeepsTheLastDrift_aCleanCheckEndsIt() {
        meters.checked(5, 2, 1_010);
        meters.checked(7, 3, 1_020);
        assertThat(gauge("lastunit.invariant.drift.streak")).isEqualTo(2);
        assertThat(gauge("lastunit.invariant.drift.units")).isEqualTo(7);
        assertThat(gauge("lastunit.invariant.drifting.items")).isEqualTo(3);

        meters.failed();
        assertThat(gauge("lastunit.invariant.check.failed")).isEqualTo(1);
        assertThat(gauge("lastunit.invariant.drift.units")).as("of the last check that ran").isEqualTo(7);
        assertThat(gauge("lastunit.invariant.last.check.timestamp")).isEqualTo(1_020);
        assertThat(gauge("lastunit.invariant.drift.streak")).isEqualTo(2);

        meters.checked(0, 0, 1_030);
        assertThat(gauge("lastunit.invariant.check.failed")).isZero();
        assertThat(gauge("lastunit.invariant.drift.streak")).isZero();
        assertThat(gauge("lastunit.invariant.drift.units")).isZero();
        assertThat(checks("drift")).isEqualTo(2);
        assertThat(checks("failed")).isEqualTo(1);
        assertThat(checks("ok")).isEqualTo(1);
    }

    @Test
    void standingBy_claimsNoFailureAndNoStreak_butKeepsTheLastDriftSeen() {
        meters.checked(4, 1, 1_010);
        meters.failed();
        meters.standingBy();
        assertThat(gauge("lastunit.invariant.check.failed")).isZero();
        assertThat(gauge("lastunit.invariant.drift.streak")).isZero();
        assertThat(gauge("lastunit.invariant.drift.units")).isEqualTo(4);
    }
}
