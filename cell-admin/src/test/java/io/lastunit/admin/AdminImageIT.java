package io.lastunit.admin;

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
 * The admin image as -Pimage-tar builds it (docs/images.md): what every image promises
 * ({@link ImageContract}) — its entrypoint is the lastunit command line, whose default arguments
 * run the admin server — and that, given other arguments, it runs them: the admin server (the
 * mover) on loopback as its non-root user against a real ZooKeeper, answering health on its health
 * port, serving metrics and stopping cleanly on SIGTERM.
 */
class AdminImageIT extends ImageContract {
    static final LastunitImage EXPECTED = new LastunitImage("lastunit-admin", "io.lastunit.admin.cli.LastunitCli",
            List.of("admin", "serve", "--host", "0.0.0.0", "--health-port", "7451", "--metrics-port", "9450"),
            Set.of(7450, 7451, 9450), Map.of(), "Usage: lastunit");

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
    void image_runsAdminServer_asNonRoot_onZooKeeper_servesHealthAndMetrics_stopsOnSigterm() throws Exception {
        int healthPort = ImageFixture.freeLoopbackPort();
        List<String> args = List.of("admin", "serve", "--host", "127.0.0.1", "--port", "0",
                "--health-port", Integer.toString(healthPort), "--metrics-port", "0");
        Map<String, String> env = Map.of("LASTUNIT_ZOOKEEPER", zookeeper.getConnectString(),
                "LASTUNIT_ADMIN_TOKEN_GRANTS", Authenticator.sha256Hex("image-check-token") + ":image-check:*:admin");
        try (ImageFixture.Started admin = IMAGE.start(args, env, Pattern.compile(
                "lastunit admin server on 127\\.0\\.0\\.1:\\d+ .*; metrics (http://127\\.0\\.0\\.1:\\d+/metrics)"))) {
            assertThat(admin.run().ids()).hasValue("Uid: 65532 65532 65532 65532, Gid: 65532 65532 65532 65532");
            assertThat(ImageFixture.health(healthPort, "")).isEqualTo(ServingStatus.SERVING);
            assertThat(ImageFixture.health(healthPort, NodeServer.LIVENESS)).isEqualTo(ServingStatus.SERVING);
            assertThat(Scrape.of(admin.startLine().group(1)).samples())
                    .anyMatch(s -> s.name().startsWith("lastunit_") && "admin".equals(s.labels().get("component")));

            assertThat(admin.stop()).as(admin.run().outputOrEmpty()).hasValue(143);
        }
    }
}
