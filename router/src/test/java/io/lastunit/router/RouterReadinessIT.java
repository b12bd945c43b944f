package io.lastunit.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.wiring.RouterProperties;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * A router's gRPC health (docs/operations.md, "Health"): NOT_SERVING while ZooKeeper has been gone
 * past the topology's staleness bound (it answers TOPOLOGY_UNAVAILABLE then), SERVING when it is
 * back; on shutdown NOT_SERVING for the grace while it still takes calls.
 */
class RouterReadinessIT {
    private static ServingStatus health(ManagedChannel c) {
        return HealthGrpc.newBlockingStub(c).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(InventoryServiceGrpc.SERVICE_NAME).build()).getStatus();
    }

    private static void awaitHealth(ManagedChannel c, ServingStatus s) {
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).pollInterval(Duration.ofMillis(100))
                .until(() -> health(c) == s);
    }

    private static RouterProperties props(TestingServer zk, long staleMs, long graceMs) {
        RouterProperties p = new RouterProperties();
        p.setId("router-ready");
        p.setHost("127.0.0.1");
        p.setPort(0);
        p.setZookeeper(zk.getConnectString());
        p.setNamespace("/router-ready");
        p.setTokens(List.of(Authenticator.sha256Hex("t") + ":it:*"));
        p.setTopologyStaleMaxMs(staleMs);
        p.setShutdownGraceMs(graceMs);
        p.setMetricsEnabled(false);
        return p;
    }

    @Test
    void zooKeeperGonePastTheStalenessBound_isNotServing_untilItIsBack() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        try (TestingServer zk = new TestingServer(spec, true)) {
            RouterNode router = new RouterNode(props(zk, 1_000, 0).toConfig()).start();
            ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
            try {
                assertThat(health(c)).isEqualTo(ServingStatus.SERVING);
                zk.stop();
                awaitHealth(c, ServingStatus.NOT_SERVING);
                zk.restart();
                awaitHealth(c, ServingStatus.SERVING);
            } finally {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                router.close();
            }
        }
    }

    @Test
    void shutdown_saysNotServingForTheGrace_whileStillTakingCalls() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        try (TestingServer zk = new TestingServer(spec, true)) {
            RouterNode router = new RouterNode(props(zk, 10_000,
                    TestTimeouts.scaled(Duration.ofSeconds(3)).toMillis()).toConfig()).start();
            ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
            try {
                CompletableFuture<Void> closing = CompletableFuture.runAsync(router::close);
                awaitHealth(c, ServingStatus.NOT_SERVING);
                assertThat(closing).as("still in its grace").isNotDone();
                // A call is still answered (health itself is a call on the same server).
                assertThat(health(c)).isEqualTo(ServingStatus.NOT_SERVING);
                closing.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            } finally {
                c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                router.close();
            }
        }
    }
}
