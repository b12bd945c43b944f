package io.lastunit.router.wiring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.router.RouterConfig;
import io.micronaut.context.ApplicationContext;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The balancer pull settings as RouterProperties carries them and RouterConfig checks them. */
class RouterPropertiesTest {

    static RouterProperties properties() {
        RouterProperties p = new RouterProperties();
        p.setTokens(List.of("0".repeat(64) + ":ops:*:admin"));
        return p;
    }

    @Test
    void pullSettings_defaultToOneSecondAndThreePulls() {
        RouterConfig c = properties().toConfig();

        assertThat(c.pullWait()).isEqualTo(Duration.ofMillis(1_000));
        assertThat(c.pullAttemptsMax()).isEqualTo(3);
    }

    @Test
    void pullSettings_bindFromTheirDocumentedKeys() {
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "lastunit.router.tokens", List.of("0".repeat(64) + ":ops:*:admin"),
                "lastunit.router.pull-wait-ms", 250,
                "lastunit.router.pull-attempts-max", 5))) {
            RouterConfig c = ctx.getBean(RouterConfig.class);

            assertThat(c.pullWait()).isEqualTo(Duration.ofMillis(250));
            assertThat(c.pullAttemptsMax()).isEqualTo(5);
        }
    }

    @Test
    void metricsSettings_defaultToOnAtTheRoutersHostOnAnyFreePort() {
        RouterProperties p = properties();
        p.setHost("10.0.0.7");
        RouterConfig c = p.toConfig();

        assertThat(c.metrics()).isEqualTo(new io.lastunit.common.metrics.MetricsConfig(true, "10.0.0.7", 0));
    }

    @Test
    void metricsSettings_bindFromTheirDocumentedKeys() {
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "lastunit.router.tokens", List.of("0".repeat(64) + ":ops:*:admin"),
                "lastunit.router.metrics-enabled", false,
                "lastunit.router.metrics-host", "0.0.0.0",
                "lastunit.router.metrics-port", 9400))) {
            RouterConfig c = ctx.getBean(RouterConfig.class);

            assertThat(c.metrics()).isEqualTo(new io.lastunit.common.metrics.MetricsConfig(false, "0.0.0.0", 9400));
        }
    }

    @Test
    void metricsPort_outsideItsBounds_failsStart() {
        RouterProperties p = properties();
        p.setMetricsPort(65_536);

        assertThatThrownBy(p::toConfig).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metrics port");
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 250, 60_000})
    void pullWaitMs_isAcceptedWithinItsBounds(long ms) {
        RouterProperties p = properties();
        p.setPullWaitMs(ms);

        assertThat(p.toConfig().pullWait()).isEqualTo(Duration.ofMillis(ms));
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, 60_001})
    void pullWaitMs_outsideItsBounds_failsStart(long ms) {
        RouterProperties p = properties();
        p.setPullWaitMs(ms);

        assertThatThrownBy(p::toConfig).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid router config: pullWait=" + Duration.ofMillis(ms) + " is outside [1 ms, 60000 ms]");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 10})
    void pullAttemptsMax_isAcceptedWithinItsBounds(int n) {
        RouterProperties p = properties();
        p.setPullAttemptsMax(n);

        assertThat(p.toConfig().pullAttemptsMax()).isEqualTo(n);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 11})
    void pullAttemptsMax_outsideItsBounds_failsStart(int n) {
        RouterProperties p = properties();
        p.setPullAttemptsMax(n);

        assertThatThrownBy(p::toConfig).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid router config: pullAttemptsMax=" + n + " is outside [1, 10]");
    }
    @Test
    void reserveBatchSettings_defaultAndBindFromTheirDocumentedKeys() {
        RouterConfig d = properties().toConfig();
        assertThat(d.reserveBatchMax()).isEqualTo(256);
        assertThat(d.reserveBatchesInFlightMax()).isEqualTo(16);
        assertThat(d.reserveBatchHoldAbove()).isEqualTo(64);
        assertThat(d.reserveQueueMax()).isEqualTo(65_536);
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "lastunit.router.tokens", List.of("0".repeat(64) + ":ops:*:admin"),
                "lastunit.router.reserve-batch-max", 1,
                "lastunit.router.reserve-batches-in-flight-max", 2,
                "lastunit.router.reserve-batch-hold-above", 0,
                "lastunit.router.reserve-queue-max", 10))) {
            RouterConfig c = ctx.getBean(RouterConfig.class);

            assertThat(c.reserveBatchMax()).isEqualTo(1);
            assertThat(c.reserveBatchesInFlightMax()).isEqualTo(2);
            assertThat(c.reserveBatchHoldAbove()).isEqualTo(0);
            assertThat(c.reserveQueueMax()).isEqualTo(10);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 1_025})
    void reserveBatchMax_outsideItsBounds_failsStart(int n) {
        RouterProperties p = properties();
        p.setReserveBatchMax(n);

        assertThatThrownBy(p::toConfig).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid router config: reserveBatchMax=" + n + " is outside [1, 1024]");
    }

    @Test
    void reserveBatchesInFlightAndQueueMax_belowOne_failStart() {
        RouterProperties p = properties();
        p.setReserveBatchesInFlightMax(0);
        p.setReserveBatchHoldAbove(-1);
        p.setReserveQueueMax(0);

        assertThatThrownBy(p::toConfig).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid router config: reserveBatchesInFlightMax must be >= 1; reserveBatchHoldAbove must be"
                        + " >= 0; reserveQueueMax must be >= 1");
    }

    @Test
    void listenerSettings_defaultToNoConnectionAgeAndNoHealthPort() {
        RouterConfig c = properties().toConfig();

        assertThat(c.maxConnectionAge()).isZero();
        assertThat(c.maxConnectionAgeGrace()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.healthPort()).isEqualTo(-1);
    }

    @Test
    void listenerSettings_bindFromTheirDocumentedKeys() {
        try (ApplicationContext ctx = ApplicationContext.run(Map.of(
                "lastunit.router.tokens", List.of("0".repeat(64) + ":ops:*:admin"),
                "lastunit.router.max-connection-age-ms", 300_000,
                "lastunit.router.max-connection-age-grace-ms", 20_000,
                "lastunit.router.health-port", 7401))) {
            RouterConfig c = ctx.getBean(RouterConfig.class);

            assertThat(c.maxConnectionAge()).isEqualTo(Duration.ofMinutes(5));
            assertThat(c.maxConnectionAgeGrace()).isEqualTo(Duration.ofSeconds(20));
            assertThat(c.healthPort()).isEqualTo(7401);
        }
    }
}
