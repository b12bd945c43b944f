package io.lastunit.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The management port and the registry's naming, over real sockets. */
class MetricsServerTest {
    private static HttpResponse<String> get(String url, String method) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        return http.send(HttpRequest.newBuilder(URI.create(url)).method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void metrics_areServedInPrometheusTextFormat_withOurPrefixServiceTagAndJvmMeters() throws Exception {
        PrometheusMeterRegistry registry = Metrics.newRegistry("test", "cell", "shared");
        registry.counter("lastunit.things", "outcome", "ok").increment(3);
        try (MetricsServer server = MetricsServer.start("127.0.0.1", 0, registry)) {
            HttpResponse<String> r = get(server.url(), "GET");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
            assertThat(r.body()).contains("lastunit_things_total{cell=\"shared\",component=\"test\",outcome=\"ok\"} 3.0")
                    .contains("jvm_memory_used_bytes").contains("jvm_gc_").contains("process_uptime_seconds");
            assertThat(server.url()).isEqualTo("http://127.0.0.1:" + server.port() + "/metrics");
        }
    }

    @Test
    void otherPathsAre404_otherMethods405() throws Exception {
        PrometheusMeterRegistry registry = Metrics.newRegistry("test");
        try (MetricsServer server = MetricsServer.start("127.0.0.1", 0, registry)) {
            String base = "http://127.0.0.1:" + server.port();
            assertThat(get(base + "/", "GET").statusCode()).isEqualTo(404);
            assertThat(get(base + "/metrics/x", "GET").statusCode()).isEqualTo(404);
            assertThat(get(base + "/metrics", "POST").statusCode()).isEqualTo(405);
            assertThat(get(base + "/metrics", "HEAD").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void grpcCalls_areCountedAndTimedPerMethodAndStatus_inFixedBuckets() throws Exception {
        PrometheusMeterRegistry registry = Metrics.newRegistry("test");
        HealthStatusManager health = new HealthStatusManager();
        Server grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(ServerInterceptors.intercept(health.getHealthService(),
                        Metrics.grpcServerInterceptor(registry)))
                .build().start();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpc.getPort()).usePlaintext().build();
        try (MetricsServer server = MetricsServer.start("127.0.0.1", 0, registry)) {
            HealthGrpc.HealthBlockingStub stub = HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS);
            for (int i = 0; i < 5; i++) {
                stub.check(HealthCheckRequest.getDefaultInstance());
            }
            String body = get(server.url(), "GET").body();
            assertThat(body).contains("lastunit_grpc_server_responses_sent_messages_total{component=\"test\","
                    + "method=\"Check\",methodType=\"UNARY\",service=\"grpc.health.v1.Health\"} 5.0")
                    .doesNotContain("\ngrpc_server_");
            assertThat(body.lines().filter(l -> l.startsWith("lastunit_grpc_server_processing_duration_seconds_bucket")
                    && l.contains("method=\"Check\"") && l.contains("statusCode=\"OK\""))
                    .count()).isEqualTo(Metrics.LATENCY_BUCKETS.size() + 1); // and +Inf
            assertThat(body).contains("le=\"0.1\"");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
