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
 *
 * <p>Health has two meanings. The whole server ({@code ""}) and the node's own services say whether
 * the node can do its work now (readiness: a node whose database or ZooKeeper is away says
 * NOT_SERVING). {@link #LIVENESS} says only that the process runs and answers: it is SERVING from
 * the start until the node stops, whatever its dependencies do, so a probe that restarts processes
 * does not restart every node of a platform while a dependency is away. A node may also serve health
 * alone on a plaintext port of its own ({@link #startHealthListener}): probes that cannot speak TLS,
 * such as Kubernetes' native gRPC probes, reach it while the main port serves TLS only.
 */
public final class NodeServer {
    /** How long a stopping server waits for its calls in flight before it cuts them. */
    public static final Duration STOP_WAIT = Duration.ofSeconds(5);
    /** The health service name that is SERVING while the process runs (see the class comment). */
    public static final String LIVENESS = "liveness";
    /** A {@code health-port} setting with this value opens no health listener. */
    public static final int HEALTH_PORT_OFF = -1;

    private NodeServer() {
    }

    /**
     * A server builder for {@code host:port} with the node's common services and settings (see
     * the class comment), taking requests of at most {@code inboundMessageBytesMax} bytes; the node
     * adds its own services and TLS.
     */
    public static NettyServerBuilder builder(String host, int port, HealthStatusManager health,
                                             int inboundMessageBytesMax) {
        health.setStatus(LIVENESS, ServingStatus.SERVING);
        return NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                .directExecutor()
                .addService(health.getHealthService())
                .addService(ProtoReflectionServiceV1.newInstance())
                .addService(reflectionV1Alpha())
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxInboundMessageSize(inboundMessageBytesMax);
    }

    /**
     * Starts a plaintext server on {@code host:port} that serves only {@code health} (the node's own
     * health manager, so it says what the main port's health says); {@code port} 0 takes a free one.
     * Returns null when {@code port} is {@link #HEALTH_PORT_OFF}. It takes no other call, so it
     * needs no TLS: it tells nothing but the serving states. Stop it after the main server, so a
     * probe sees the node's NOT_SERVING while it drains: {@code shutdownNow()}.
     */
    public static Server startHealthListener(String host, int port, HealthStatusManager health) throws java.io.IOException {
        if (port == HEALTH_PORT_OFF) {
            return null;
        }
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("health port must be -1 (none), 0 (any free one) or up to 65535, got "
                    + port);
        }
        return NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                .directExecutor()
                .addService(health.getHealthService())
                .maxInboundMessageSize(1 << 12)
                .build()
                .start();
    }

    /** Checks a {@code health-port} setting: -1 (none), 0 (any free port) or a port. */
    public static boolean isHealthPort(int port) {
        return port >= HEALTH_PORT_OFF && port <= 65_535;
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
