package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.common.metrics.Scrape;
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
 * The bucket-balancer's image as -Pimage-tar builds it (docs/images.md): what every image promises
 * ({@link ImageContract}), and that it runs a balancer — as its non-root user, configured by its
 * environment — that joins the election in a real ZooKeeper, answers liveness on its health port,
 * serves metrics, and stops cleanly on SIGTERM.
 */
class BalancerImageIT extends ImageContract {
    static final LastunitImage EXPECTED = new LastunitImage("lastunit-bucket-balancer",
            "io.lastunit.balancer.BalancerMain", List.of(), Set.of(7500, 7501, 9500), Map.of("LASTUNIT_BALANCER_HOST",
                    "0.0.0.0", "LASTUNIT_BALANCER_HEALTH_PORT", "7501", "LASTUNIT_BALANCER_METRICS_PORT", "9500"),
            "Usage: lastunit balancer");

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
    void image_runsBalancer_asNonRoot_onZooKeeper_servesHealthAndMetrics_stopsOnSigterm() throws Exception {
        int healthPort = ImageFixture.freeLoopbackPort();
        Map<String, String> env = Map.of("LASTUNIT_BALANCER_HOST", "127.0.0.1", "LASTUNIT_BALANCER_PORT", "0",
                "LASTUNIT_BALANCER_HEALTH_PORT", Integer.toString(healthPort), "LASTUNIT_BALANCER_METRICS_PORT", "0",
                "LASTUNIT_BALANCER_ZOOKEEPER", zookeeper.getConnectString());
        try (ImageFixture.Started balancer = IMAGE.start(List.of(), env, Pattern.compile(
                "balancer (127\\.0\\.0\\.1:\\d+) started .*; metrics (http://127\\.0\\.0\\.1:\\d+/metrics)"))) {
            assertThat(balancer.run().ids()).hasValue("Uid: 65532 65532 65532 65532, Gid: 65532 65532 65532 65532");
            // Its BalancerService follows leadership; liveness only says the process answers.
            assertThat(ImageFixture.health(healthPort, NodeServer.LIVENESS)).isEqualTo(ServingStatus.SERVING);
            assertThat(Scrape.of(balancer.startLine().group(2)).samples())
                    .anyMatch(s -> s.name().startsWith("lastunit_") && "balancer".equals(s.labels().get("component")));

            assertThat(balancer.stop()).as(balancer.run().outputOrEmpty()).hasValue(143);
            assertThat(balancer.run().output()).contains("balancer " + balancer.startLine().group(1) + " stopped");
        }
    }
}
