package io.lastunit.common.lifecycle;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What the gRPC server of every node (router, shard node, bucket-balancer) has in common: its
 * handlers run on the transport threads (they never block: they validate and hand work on), it
 * serves health ({@code grpc.health.v1}) and server reflection v1 and v1alpha, and it lets
 * clients ping every 10 s, also without calls. And its stop: NOT_SERVING, no new calls, a bounded
 * wait for the calls in flight, then the rest cut. Stateless.
 */
public final class NodeServer {
    /** How long a stopping server waits for its calls in flight before it cuts them. */
    public static final Duration STOP_WAIT = Duration.ofSeconds(5);

    private NodeServer() {
    }

    /**
     * A server builder for {@code host:port} with the node's common services and settings (see
     * the class comment), taking requests of at most {@code inboundMessageBytesMax} bytes; the node
     * adds its own services and TLS.
     */
    public static NettyServerBuilder builder(String host, int port, HealthStatusManager health,
                                             int inboundMessageBytesMax) {
        return NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                .directExecutor()
                .addService(health.getHealthService())
                .addService(ProtoReflectionServiceV1.newInstance())
                .addService(reflectionV1Alpha())
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxInboundMessageSize(inboundMessageBytesMax);
    }

    /** The older reflection protocol: some clients (older grpcurl releases among them) speak only this one. */
    @SuppressWarnings("deprecation")
    private static BindableService reflectionV1Alpha() {
        return ProtoReflectionService.newInstance();
    }

    /** Health SERVING for each of {@code services} ({@code ""}: the whole server), for probes that ask by name. */
    public static void serving(HealthStatusManager health, String... services) {
        for (String service : services) {
            health.setStatus(service, ServingStatus.SERVING);
        }
    }

    /** Every service NOT_SERVING for good, and no new calls; the calls in flight go on. */
    public static void stopTakingCalls(Server server, HealthStatusManager health) {
        health.enterTerminalState();
        server.shutdown();
    }

    /**
     * Waits up to {@code wait} for a shut-down server's calls in flight, then cuts the rest. An
     * interrupt cuts them at once and is kept.
     */
    public static void awaitCalls(Server server, Duration wait) {
        try {
            if (!server.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** {@link #stopTakingCalls}, then {@link #awaitCalls} for {@link #STOP_WAIT}. */
    public static void stop(Server server, HealthStatusManager health) {
        stopTakingCalls(server, health);
        awaitCalls(server, STOP_WAIT);
    }
}
