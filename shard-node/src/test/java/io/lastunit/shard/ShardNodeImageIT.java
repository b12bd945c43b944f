package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.common.metrics.Scrape;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.image.ImageContract;
import io.lastunit.testkit.image.ImageFixture;
import io.lastunit.testkit.image.LastunitImage;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shard node's image as -Pimage-tar builds it (docs/images.md): what every image promises
 * ({@link ImageContract}), and that it runs a shard node — as its non-root user, from its own JRE
 * and classpath, configured by its environment — on a real PostgreSQL, answers health on its
 * health port and serves metrics, and stops cleanly on SIGTERM.
 */
class ShardNodeImageIT extends ImageContract {
    static final LastunitImage EXPECTED = new LastunitImage("lastunit-shard-node", "io.lastunit.shard.ShardNodeMain",
            List.of(), Set.of(7443, 7444, 9443), Map.of("LASTUNIT_SHARD_HOST", "0.0.0.0",
                    "LASTUNIT_SHARD_HEALTH_PORT", "7444", "LASTUNIT_SHARD_METRICS_PORT", "9443"), "Usage: lastunit serve");

    @RegisterExtension
    static final ImageFixture IMAGE = new ImageFixture(EXPECTED);

    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @Override
    protected ImageFixture image() {
        return IMAGE;
    }

    @Test
    void image_runsShardNode_asNonRoot_onPostgres_servesHealthAndMetrics_stopsOnSigterm() throws Exception {
        // 127.0.0.1 and free ports: tests bind loopback only, and other runs may hold the image's ports.
        int healthPort = ImageFixture.freeLoopbackPort();
        Map<String, String> env = Map.of("LASTUNIT_SHARD_ID", "image-check", "LASTUNIT_SHARD_HOST", "127.0.0.1",
                "LASTUNIT_SHARD_PORT", "0", "LASTUNIT_SHARD_HEALTH_PORT", Integer.toString(healthPort),
                "LASTUNIT_SHARD_METRICS_PORT", "0", "LASTUNIT_SHARD_JDBC_URL", PG.jdbcUrl(),
                "LASTUNIT_SHARD_JDBC_USER", PG.user(), "LASTUNIT_SHARD_JDBC_PASSWORD", PG.password());
        try (ImageFixture.Started node = IMAGE.start(List.of(), env, Pattern.compile(
                "shard image-check serving on 127\\.0\\.0\\.1:\\d+ .*; metrics (http://127\\.0\\.0\\.1:\\d+/metrics)"))) {
            assertThat(node.run().ids()).hasValue("Uid: 65532 65532 65532 65532, Gid: 65532 65532 65532 65532");
            assertThat(ImageFixture.health(healthPort, "")).isEqualTo(ServingStatus.SERVING);
            assertThat(ImageFixture.health(healthPort, NodeServer.LIVENESS)).isEqualTo(ServingStatus.SERVING);
            assertThat(Scrape.of(node.startLine().group(1)).samples())
                    .anyMatch(s -> s.name().startsWith("lastunit_") && "image-check".equals(s.labels().get("shard")));

            assertThat(node.stop()).as(node.run().outputOrEmpty()).hasValue(143);
            assertThat(node.run().output()).contains("shard image-check stopped");
        }
    }
}
