package io.lastunit.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class SkewedClockTest {
    static final Instant BASE = Instant.parse("2030-01-01T00:00:00Z");

    final SkewedClock clock = new SkewedClock(Clock.fixed(BASE, ZoneOffset.UTC));

    @Test
    void unskewed_readsItsBase() {
        assertThat(clock.instant()).isEqualTo(BASE);
        assertThat(clock.millis()).isEqualTo(BASE.toEpochMilli());
        assertThat(clock.offset()).isZero();
    }

    @Test
    void skew_shiftsTheTime_andReplacesThePreviousOffset() {
        clock.skew(Duration.ofSeconds(5));
        assertThat(clock.instant()).isEqualTo(BASE.plusSeconds(5));

        clock.skew(Duration.ofMillis(-1500));
        assertThat(clock.instant()).isEqualTo(BASE.minusMillis(1500));
        assertThat(clock.offset()).isEqualTo(Duration.ofMillis(-1500));
    }

    @Test
    void asAnInstantSource_readsTheSkewedTime() {
        InstantSource source = clock;
        clock.skew(Duration.ofMinutes(2));

        assertThat(source.instant()).isEqualTo(BASE.plusSeconds(120));
    }

    @Test
    void withZone_sharesTheOffset_soLaterSkewsMoveBoth() {
        Clock paris = clock.withZone(ZoneId.of("Europe/Paris"));

        clock.skew(Duration.ofHours(1));

        assertThat(paris.getZone()).isEqualTo(ZoneId.of("Europe/Paris"));
        assertThat(paris.instant()).isEqualTo(BASE.plusSeconds(3600));
        assertThat(clock.withZone(ZoneOffset.UTC)).isSameAs(clock);
    }

    @Test
    void overTheSystemClock_isAheadByAtLeastTheSkew() {
        SkewedClock system = new SkewedClock();
        Instant before = Instant.now();

        system.skew(Duration.ofHours(1));

        assertThat(system.instant()).isAfterOrEqualTo(before.plus(Duration.ofHours(1)));
    }

    @Test
    void skew_beyondTheBound_isRefused() {
        assertThatThrownBy(() -> clock.skew(SkewedClock.SKEW_MAX.plusSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> clock.skew(SkewedClock.SKEW_MAX.negated().minusSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(clock.offset()).isZero();
    }
}
