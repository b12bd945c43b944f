package io.lastunit.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class NemesisTest {

    @Test
    void of_runsEachActionOnlyOnChangeOfState() {
        List<String> calls = new ArrayList<>();
        Nemesis nemesis = Nemesis.of("fault", () -> calls.add("start"), () -> calls.add("stop"));

        nemesis.stop();
        nemesis.start();
        nemesis.start();
        nemesis.stop();
        nemesis.stop();
        nemesis.start();

        assertThat(calls).containsExactly("start", "stop", "start");
        assertThat(nemesis.name()).isEqualTo("fault");
    }

    @Test
    void of_staysHealed_whenStartThrows_andTriesAgainNextTime() {
        AtomicInteger attempts = new AtomicInteger();
        AtomicInteger stops = new AtomicInteger();
        Nemesis nemesis = Nemesis.of("flaky", () -> {
            if (attempts.incrementAndGet() == 1) {
                throw new IllegalStateException("first start fails");
            }
        }, stops::incrementAndGet);

        assertThatThrownBy(nemesis::start).hasMessage("first start fails");
        nemesis.stop();
        nemesis.start();
        nemesis.stop();

        assertThat(attempts).hasValue(2);
        assertThat(stops).hasValue(1);
    }

    @Test
    void proxyNemeses_setTheirToxic_andClearOnlyTheirs() throws Exception {
        try (TcpProxy proxy = TcpProxy.start("nemesis", new InetSocketAddress(InetAddress.getLoopbackAddress(), 9))) {
            Nemesis cut = ProxyNemesis.cut(proxy);
            Nemesis blackhole = ProxyNemesis.blackhole(proxy);
            Nemesis latency = ProxyNemesis.latency(proxy, Duration.ofMillis(50), Duration.ofMillis(5));
            Nemesis throttle = ProxyNemesis.throttle(proxy, 1_000);

            cut.start();
            blackhole.start();
            latency.start();
            throttle.start();
            assertThat(proxy.toxics()).containsExactlyInAnyOrder(Toxic.values());

            latency.stop();
            assertThat(proxy.toxics()).containsExactlyInAnyOrder(Toxic.CUT, Toxic.BLACKHOLE, Toxic.THROTTLE);
            cut.stop();
            blackhole.stop();
            throttle.stop();
            assertThat(proxy.toxics()).isEmpty();
            assertThat(cut.name()).isEqualTo("cut nemesis");
        }
    }

    @Test
    void proxyNemeses_refuseBadParameters_whenMade() throws Exception {
        try (TcpProxy proxy = TcpProxy.start("bad", new InetSocketAddress(InetAddress.getLoopbackAddress(), 9))) {
            assertThatThrownBy(() -> ProxyNemesis.latency(proxy, Duration.ofMillis(-1), Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> ProxyNemesis.throttle(proxy, 0)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void clockSkewNemesis_skewsWhileInForce_andPutsBackThePreviousOffset() {
        Instant base = Instant.parse("2030-01-01T00:00:00Z");
        SkewedClock clock = new SkewedClock(Clock.fixed(base, ZoneOffset.UTC));
        clock.skew(Duration.ofSeconds(1));
        Nemesis ahead = new ClockSkewNemesis(clock, Duration.ofMinutes(5));

        ahead.start();
        ahead.start();
        assertThat(clock.instant()).isEqualTo(base.plusSeconds(300));

        ahead.stop();
        ahead.stop();
        assertThat(clock.instant()).isEqualTo(base.plusSeconds(1));
    }

    @Test
    void pauseNemesis_pausesTheSuppliedProcess_untilStopped() throws Exception {
        try (SleepingChild child = new SleepingChild()) {
            Nemesis pause = new PauseNemesis("pause sleeper", child::pid);

            pause.start();
            pause.start();
            assertThat(ProcessPause.isPaused(child.pid())).isTrue();

            pause.stop();
            pause.stop();
            assertThat(ProcessPause.isPaused(child.pid())).isFalse();
        }
    }
}
