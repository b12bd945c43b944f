package io.lastunit.router.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.router.route.RouterObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The router's answer and shed counters by cell, and the bound on the cell label. */
class RouterMetricsTest {
    private static final ReserveResponse RESERVED =
            ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).build();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RouterMetrics metrics = new RouterMetrics(registry);

    private double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    @Test
    void answersAndSheds_countUnderTheirCell_andTheSharedCellExistsAtZeroFromTheStart() {
        assertThat(count("lastunit.router.reserves", "cell", "shared")).isZero();
        assertThat(registry.find("lastunit.router.reserves").tags("cell", "shared", "outcome", "RESERVED").counter())
                .isNotNull();

        metrics.reserveAnswered("vip", RESERVED, null);
        metrics.reserveAnswered("vip", null, new CompletionException(
                Failure.retryable(Reason.RATE_LIMITED, "over its rate", Duration.ofMillis(100))));
        metrics.reserveAnswered("vip", null, Status.DEADLINE_EXCEEDED.asRuntimeException());
        metrics.shed("vip", RouterObserver.Shed.SOLD_OUT_CACHE);
        metrics.reserveAnswered("shared", RESERVED, null);

        assertThat(count("lastunit.router.reserves", "cell", "vip", "outcome", "RESERVED")).isEqualTo(1);
        assertThat(count("lastunit.router.reserves", "cell", "vip", "outcome", "RATE_LIMITED")).isEqualTo(1);
        assertThat(count("lastunit.router.reserves", "cell", "vip", "outcome", "DEADLINE_EXCEEDED")).isEqualTo(1);
        assertThat(count("lastunit.router.reserves", "cell", "vip")).isEqualTo(3);
        assertThat(count("lastunit.router.reserves", "cell", "shared")).isEqualTo(1);
        assertThat(count("lastunit.router.sheds", "cell", "vip", "cause", "sold_out_cache")).isEqualTo(1);
        assertThat(count("lastunit.router.sheds", "cell", "shared")).isZero();
    }

    @Test
    void pastTheBound_furtherCellsCountAsOther_soTheLabelStaysBounded() {
        for (int i = 0; i < RouterMetrics.CELLS_MAX + 50; i++) {
            metrics.reserveAnswered("c" + i, RESERVED, null);
        }
        Set<String> cells = registry.find("lastunit.router.reserves").counters().stream()
                .map(c -> c.getId().getTag("cell")).collect(Collectors.toSet());
        assertThat(cells).hasSize(RouterMetrics.CELLS_MAX + 1).contains(RouterMetrics.CELL_OTHER, "shared");
        assertThat(count("lastunit.router.reserves", "outcome", "RESERVED"))
                .as("every answer counted once, labelled or not").isEqualTo(RouterMetrics.CELLS_MAX + 50);
        assertThat(count("lastunit.router.reserves", "cell", RouterMetrics.CELL_OTHER, "outcome", "RESERVED"))
                .isEqualTo(50 + 1);
    }
}
