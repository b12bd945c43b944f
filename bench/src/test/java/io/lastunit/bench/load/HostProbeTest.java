package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HostProbeTest {

    @Test
    void measuresWakeUpsForAsLongAsAsked() {
        HostProbe p = HostProbe.measure(0.2);
        assertThat(p.seconds()).isGreaterThanOrEqualTo(0.2);
        // no upper bound on the count: parkNanos may return early, and each early return is a sample too
        assertThat(p.samples()).isPositive();
        assertThat(p.p50Ms()).isGreaterThanOrEqualTo(0);
        assertThat(p.p99Ms()).isGreaterThanOrEqualTo(p.p50Ms());
        assertThat(p.p999Ms()).isGreaterThanOrEqualTo(p.p99Ms());
        assertThat(p.maxMs()).isGreaterThanOrEqualTo(p.p999Ms());
        assertThat(p.toMap()).containsEntry("sleep_ms", 0.5).containsEntry("samples", p.samples());
    }

    @Test
    void refusesAProbeOutsideItsBounds() {
        for (double s : new double[] {0, -1, 61, Double.NaN}) {
            assertThatThrownBy(() -> HostProbe.measure(s)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("outside (0, 60]");
        }
    }
}
