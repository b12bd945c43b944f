package io.lastunit.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class LagSamplerTest {

    /** A sampler whose connection never opens: its thread only fails, quietly, once a minute. */
    private static LagSampler idle() {
        return new LagSampler(() -> {
            throw new SQLException("no server");
        }, 60_000);
    }

    @Test
    void aWindow_averagesTheSamplesWithALag_andCountsTheNullOnes() {
        try (LagSampler s = idle()) {
            s.add(0.2, 1.0);
            s.add(0.4, 3.0);
            s.add(0, Double.NaN);

            LagSampler.Window w = s.take();
            assertThat(w.samples()).isEqualTo(3);
            assertThat(w.withLag()).isEqualTo(2);
            assertThat(w.writeMeanMs()).isEqualTo(0.3, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(w.flushMeanMs()).isEqualTo(2.0);
            assertThat(w.flushMaxMs()).isEqualTo(3.0);
        }
    }

    @Test
    void take_startsANewWindow() {
        try (LagSampler s = idle()) {
            s.add(0.2, 1.0);
            s.take();
            LagSampler.Window w = s.take();
            assertThat(w.samples()).isZero();
            assertThat(w.flushMeanMs()).isNaN();
        }
    }

    @Test
    void aPeriodOutsideItsBounds_isRefused() {
        assertThatThrownBy(() -> new LagSampler(() -> null, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("periodMs=1 must be between 10 and 60000");
    }
}
