package io.lastunit.router;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.common.metrics.Scrape;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.testkit.image.ImageContract;
import io.lastunit.testkit.image.ImageFixture;
import io.lastunit.testkit.image.LastunitImage;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The router's image as -Pimage-tar builds it (docs/images.md): what every image promises
 * ({@link ImageContract}), and that it runs a router — as its non-root user, configured by its
 * environment — against a real ZooKeeper, answers health on its health port and serves metrics,
 * and stops cleanly on SIGTERM.
 */
class RouterImageIT extends ImageContract {
    static final LastunitImage EXPECTED = new LastunitImage("lastunit-router", "io.lastunit.router.RouterMain",
            List.of(), Set.of(7400, 7401, 9400), Map.of("LASTUNIT_ROUTER_HOST", "0.0.0.0",
                    "LASTUNIT_ROUTER_HEALTH_PORT", "7401", "LASTUNIT_ROUTER_METRICS_PORT", "9400"), "Usage: lastunit router");

    @RegisterExtension
    static final ImageFixture IMAGE = new ImageFixture(EXPECTED);

    private static TestingServer zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"), true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @Override
    protected ImageFixture image() {
        return IMAGE;
    }

    @Test
    void image_runsRouter_asNonRoot_onZooKeeper_servesHealthAndMetrics_stopsOnSigterm() throws Exception {
        int healthPort = ImageFixture.freeLoopbackPort();
        Map<String, String> env = Map.of("LASTUNIT_ROUTER_ID", "image-check", "LASTUNIT_ROUTER_HOST", "127.0.0.1",
                "LASTUNIT_ROUTER_PORT", "0", "LASTUNIT_ROUTER_HEALTH_PORT", Integer.toString(healthPort),
                "LASTUNIT_ROUTER_METRICS_PORT", "0", "LASTUNIT_ROUTER_ZOOKEEPER", zookeeper.getConnectString(),
                "LASTUNIT_ROUTER_TOKENS", Authenticator.sha256Hex("image-check-token") + ":image-check:*");
        try (ImageFixture.Started router = IMAGE.start(List.of(), env, Pattern.compile(
                "router image-check serving on 127\\.0\\.0\\.1:\\d+ .*; metrics (http://127\\.0\\.0\\.1:\\d+/metrics)"))) {
            assertThat(router.run().ids()).hasValue("Uid: 65532 65532 65532 65532, Gid: 65532 65532 65532 65532");
            assertThat(ImageFixture.health(healthPort, "")).isEqualTo(ServingStatus.SERVING);
            assertThat(ImageFixture.health(healthPort, NodeServer.LIVENESS)).isEqualTo(ServingStatus.SERVING);
            assertThat(Scrape.of(router.startLine().group(1)).samples())
                    .anyMatch(s -> s.name().startsWith("lastunit_") && "router".equals(s.labels().get("component")));

            assertThat(router.stop()).as(router.run().outputOrEmpty()).hasValue(143);
            assertThat(router.run().output()).contains("router image-check stopped");
        }
    }
}
