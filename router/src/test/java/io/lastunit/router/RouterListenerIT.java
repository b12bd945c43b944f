package io.lastunit.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.wiring.RouterProperties;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a real router's listeners do for a deployment behind a Service (k8s/README.md): a client
 * connection older than max-connection-age-ms is closed with a GOAWAY, so the client connects anew
 * (to any router); the plaintext health port serves health and nothing else, and its
 * {@value NodeServer#LIVENESS} status stays SERVING while the router is not ready.
 */
class RouterListenerIT {
    private static TestingServer zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        zookeeper = new TestingServer(spec, true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    private static RouterProperties props(String root) {
        RouterProperties p = new RouterProperties();
        p.setId("router-listener");
        p.setHost("127.0.0.1");
        p.setPort(0);
        p.setZookeeper(zookeeper.getConnectString());
        p.setNamespace(root);
        p.setTokens(List.of(Authenticator.sha256Hex("t") + ":it:*"));
        p.setMetricsEnabled(false);
        return p;
    }

    private static ServingStatus health(ManagedChannel c, String service) {
        return HealthGrpc.newBlockingStub(c).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
    }

    @Test
    void aConnectionOlderThanMaxConnectionAge_isClosedByTheRouter_andTheClientConnectsAgain() throws Exception {
        RouterProperties p = props("/router-listener-age");
        p.setMaxConnectionAgeMs(1_000);
        p.setMaxConnectionAgeGraceMs(1_000);
        RouterNode router = new RouterNode(p.toConfig()).start();
        ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
        try {
            assertThat(health(c, "")).isEqualTo(ServingStatus.SERVING);
            assertThat(c.getState(false)).isEqualTo(ConnectivityState.READY);
            CountDownLatch leftReady = new CountDownLatch(1);
            c.notifyWhenStateChanged(ConnectivityState.READY, leftReady::countDown);

            // The router sends a GOAWAY once the connection is 1 s old: the channel leaves READY by
            // itself, without any call failing.
            assertThat(leftReady.await(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the channel left READY: the router closed the aged connection").isTrue();
            assertThat(health(c, "")).as("a new connection serves").isEqualTo(ServingStatus.SERVING);
        } finally {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            router.close();
        }
    }

    @Test
    void theHealthPort_servesOnlyHealth_andLivenessStaysServingWhileTheRouterIsNotReady() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        try (TestingServer zk = new TestingServer(spec, true)) {
            RouterProperties p = props("/router-listener-health");
            p.setZookeeper(zk.getConnectString());
            p.setTopologyStaleMaxMs(1_000);
            p.setHealthPort(0);
            RouterNode router = new RouterNode(p.toConfig()).start();
            assertThat(router.healthPort()).isPositive().isNotEqualTo(router.port());
            ManagedChannel h = NettyChannelBuilder.forAddress("127.0.0.1", router.healthPort()).usePlaintext().build();
            try {
                assertThat(health(h, "")).isEqualTo(ServingStatus.SERVING);
                assertThat(health(h, NodeServer.LIVENESS)).isEqualTo(ServingStatus.SERVING);
                StatusRuntimeException noApi = catchThrowableOfType(StatusRuntimeException.class,
                        () -> InventoryServiceGrpc.newBlockingStub(h).withDeadlineAfter(10, TimeUnit.SECONDS)
                                .getStock(GetStockRequest.newBuilder().setTenantId("t").setItemId("i").build()));
                assertThat(noApi.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);

                zk.stop();
                await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).pollInterval(Duration.ofMillis(100))
                        .until(() -> health(h, "") == ServingStatus.NOT_SERVING);
                assertThat(health(h, NodeServer.LIVENESS)).as("alive though not ready").isEqualTo(ServingStatus.SERVING);
            } finally {
                h.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                router.close();
            }
        }
    }

    @Test
    void badListenerSettings_areRefusedAtStart_naming_theSetting() {
        RouterProperties age = props("/router-listener-bad");
        age.setMaxConnectionAgeMs(500);
        RouterProperties grace = props("/router-listener-bad");
        grace.setMaxConnectionAgeGraceMs(-1);
        RouterProperties port = props("/router-listener-bad");
        port.setHealthPort(70_000);

        assertThat(catchThrowableOfType(IllegalArgumentException.class, age::toConfig))
                .hasMessageContaining("maxConnectionAge=PT0.5S is neither 0 (off) nor within [1000 ms, 86400000 ms]");
        assertThat(catchThrowableOfType(IllegalArgumentException.class, grace::toConfig))
                .hasMessageContaining("maxConnectionAgeGrace=PT-0.001S is outside [0, 600000 ms]");
        assertThat(catchThrowableOfType(IllegalArgumentException.class, port::toConfig))
                .hasMessageContaining("healthPort=70000");
    }
}
