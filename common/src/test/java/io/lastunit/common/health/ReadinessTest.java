package io.lastunit.common.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ReadinessTest {
    private static final long MS = 1_000_000;

    @Test
    void aConditionFailingWithinItsBound_keepsServing_pastItNot() {
        Map<String, Duration> bounds = Map.of("database", Duration.ofSeconds(5), "zookeeper", Duration.ofSeconds(10));
        assertThat(Readiness.verdict(Map.of(), bounds, 0)).isEqualTo(Readiness.Verdict.SERVING);
        assertThat(Readiness.verdict(Map.of("database", 0L), bounds, 5_000 * MS).serving()).isTrue();
        Readiness.Verdict v = Readiness.verdict(Map.of("database", 0L, "zookeeper", 0L), bounds, 5_001 * MS);
        assertThat(v.serving()).isFalse();
        assertThat(v.reasons()).containsExactly("database failing for 5001 ms (bound 5000 ms)");
        assertThat(Readiness.verdict(Map.of("database", 0L, "zookeeper", 0L), bounds, 10_001 * MS).reasons())
                .hasSize(2);
    }

    private static ServingStatus status(HealthStatusManager health, String service) {
        AtomicReference<ServingStatus> s = new AtomicReference<>();
        ((io.grpc.health.v1.HealthGrpc.HealthImplBase) health.getHealthService()).check(
                HealthCheckRequest.newBuilder().setService(service).build(),
                new StreamObserver<HealthCheckResponse>() {
                    @Override
                    public void onNext(HealthCheckResponse r) {
                        s.set(r.getStatus());
                    }

                    @Override
                    public void onError(Throwable t) {
                        throw new AssertionError(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        return s.get();
    }

    @Test
    void theWatch_setsHealthByItsConditionsOnAControlledClock_andDrainsForGood() {
        HealthStatusManager health = new HealthStatusManager();
        AtomicLong now = new AtomicLong();
        AtomicBoolean database = new AtomicBoolean(true);
        ReadinessWatch watch = new ReadinessWatch("test", health, List.of("", "svc"), List.of(
                new ReadinessWatch.Condition("database", Duration.ofSeconds(5), database::get)),
                Duration.ofHours(1), now::get).start();
        try {
            assertThat(status(health, "svc")).isEqualTo(ServingStatus.SERVING);
            database.set(false);
            watch.look();
            now.set(5_000 * MS);
            watch.look();
            assertThat(status(health, "")).isEqualTo(ServingStatus.SERVING);
            now.set(5_001 * MS);
            watch.look();
            assertThat(status(health, "")).isEqualTo(ServingStatus.NOT_SERVING);
            assertThat(watch.verdict().reasons()).singleElement().asString().startsWith("database failing");
            database.set(true);
            watch.look();
            assertThat(status(health, "svc")).isEqualTo(ServingStatus.SERVING);
            watch.drain(Duration.ZERO);
            watch.look();
            assertThat(status(health, "svc")).isEqualTo(ServingStatus.NOT_SERVING);
            assertThat(watch.verdict().reasons()).containsExactly("shutting down");
        } finally {
            watch.close();
        }
    }

    @Test
    void aConditionThatThrows_countsAsFailing() {
        HealthStatusManager health = new HealthStatusManager();
        AtomicLong now = new AtomicLong();
        ReadinessWatch watch = new ReadinessWatch("test", health, List.of(""), List.of(
                new ReadinessWatch.Condition("lanes", Duration.ZERO, () -> {
                    throw new IllegalStateException("boom");
                })), Duration.ofHours(1), now::get).start();
        try {
            watch.look();
            now.set(1);
            watch.look();
            assertThat(status(health, "")).isEqualTo(ServingStatus.NOT_SERVING);
        } finally {
            watch.close();
        }
    }
}
