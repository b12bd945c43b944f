package io.lastunit.shard.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.lastunit.shard.store.local.PostgresServer;
import io.lastunit.shard.store.local.ServerSettings;
import io.lastunit.shard.store.local.ShutdownMode;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.common.metrics.Scrape;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shard node's gRPC health means something (docs/operations.md, "Health"): NOT_SERVING while its
 * database is gone past its bound, while ZooKeeper is gone past the staleness bound, or while a
 * lane holds queued work without finishing a batch; SERVING again when they are back; and on
 * shutdown NOT_SERVING for the grace before it stops taking calls.
 */
class ShardReadinessIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @TempDir
    Path state;

    private static ServingStatus health(ManagedChannel channel) {
        return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(InventoryServiceGrpc.SERVICE_NAME).build()).getStatus();
    }

    private static void awaitHealth(ManagedChannel channel, ServingStatus expected) {
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).pollInterval(Duration.ofMillis(100))
                .until(() -> health(channel) == expected);
    }

    private static ReserveRequest reserve(String key) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("hot").setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("b-" + key).setRegion("local").build();
    }

    @Test
    void databaseGonePastItsBound_isNotServing_untilItIsBack() throws Exception {
        ServerSettings settings = ShardNodeHarness.faultTestServer(state);
        try (PostgresServer server = PostgresServer.initPrimary("ready", PostgresBinaries.find(), settings)) {
            server.start();
            server.createDatabase("shard");
            try (ShardNodeHarness shard = new ShardNodeHarness(PG, server.jdbcUrl("shard"), Map.of(
                    "lastunit.shard.id", "ready-db", "lastunit.shard.jdbc-user", PostgresServer.SUPERUSER,
                    "lastunit.shard.jdbc-password", "", "lastunit.shard.readiness-database-down-max-ms", 1_000)).start();
                 Channel channel = new Channel(shard.node().port())) {
                assertThat(health(channel.c)).isEqualTo(ServingStatus.SERVING);
                server.stop(ShutdownMode.FAST);
                awaitHealth(channel.c, ServingStatus.NOT_SERVING);
                server.start();
                awaitHealth(channel.c, ServingStatus.SERVING);
                shard.createItem("acme", "hot", 5);
                assertThat(shard.blocking().reserve(reserve("after")).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            }
        }
    }

    @Test
    void zooKeeperGonePastTheStalenessBound_isNotServing_untilItIsBack() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        try (TestingServer zk = new TestingServer(spec, true);
             CuratorFramework client = Curators.newClient(zk.getConnectString(), Duration.ofSeconds(10))) {
            client.start();
            assertThat(client.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(),
                    TimeUnit.MILLISECONDS)).isTrue();
            new TopologyStore(client, TopologyStore.ROOT_DEFAULT, InstantSource.system()).createCell("shared",
                    List.of("local"), List.of(ShardInfo.newBuilder().setShardId("ready-zk").setCell("shared")
                            .setRegion("local").setAddress("127.0.0.1:1").build()));
            try (ShardNodeHarness shard = new ShardNodeHarness(PG, PG.newDatabase("ready_zk"), Map.of(
                    "lastunit.shard.id", "ready-zk", "lastunit.shard.zookeeper", zk.getConnectString(),
                    "lastunit.shard.topology-stale-max-ms", 1_000)).start();
                 Channel channel = new Channel(shard.node().port())) {
                assertThat(health(channel.c)).isEqualTo(ServingStatus.SERVING);
                assertThat(Scrape.of(shard.node().metricsUrl().orElseThrow()).value("lastunit_shard_info"))
                        .as("the shard's cell as a label").isEqualTo(1);
                assertThat(Scrape.of(shard.node().metricsUrl().orElseThrow()).all("lastunit_shard_info").get(0)
                        .labels()).containsEntry("cell", "shared").containsEntry("shard", "ready-zk");
                client.close();
                zk.stop();
                awaitHealth(channel.c, ServingStatus.NOT_SERVING);
                zk.restart();
                awaitHealth(channel.c, ServingStatus.SERVING);
            }
        }
    }

    @Test
    void aLaneHoldingQueuedWorkWithoutABatch_isNotServing_untilItMovesAgain() throws Exception {
        String url = PG.newDatabase("ready_lanes");
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, url, Map.of("lastunit.shard.id", "ready-lanes",
                "lastunit.shard.readiness-lane-stuck-max-ms", 300, "lastunit.shard.jdbc-lock-timeout-ms", 120_000,
                "lastunit.shard.jdbc-socket-timeout-ms", 180_000)).start();
             Channel channel = new Channel(shard.node().port())) {
            shard.createItem("acme", "hot", 100);
            assertThat(shard.blocking().reserve(reserve("k0")).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            List<Future<ReserveResponse>> waiting = new ArrayList<>();
            try (Connection locker = DriverManager.getConnection(url, PG.user(), PG.password())) {
                locker.setAutoCommit(false);
                // The item's buckets locked: the lane's next batch waits on them, and calls queue behind it.
                locker.createStatement().execute("SELECT * FROM buckets WHERE tenant_id = 'acme' FOR UPDATE");
                for (int i = 1; i <= 20; i++) {
                    waiting.add(shard.async().withDeadlineAfter(TestTimeouts.scaled(Duration.ofMinutes(2)).toMillis(),
                            TimeUnit.MILLISECONDS).reserve(reserve("k" + i)));
                }
                awaitHealth(channel.c, ServingStatus.NOT_SERVING);
                locker.rollback();
            }
            for (Future<ReserveResponse> f : waiting) {
                assertThat(f.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)
                        .getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            }
            awaitHealth(channel.c, ServingStatus.SERVING);
        }
    }

    @Test
    void shutdown_saysNotServingForTheGrace_whileStillTakingCalls() throws Exception {
        String url = PG.newDatabase("ready_grace");
        ShardNodeHarness shard = new ShardNodeHarness(PG, url, Map.of("lastunit.shard.id", "ready-grace",
                "lastunit.shard.shutdown-grace-ms", TestTimeouts.scaled(Duration.ofSeconds(3)).toMillis())).start();
        try (Channel channel = new Channel(shard.node().port())) {
            shard.createItem("acme", "hot", 5);
            CompletableFuture<Void> closing = CompletableFuture.runAsync(shard::close);
            awaitHealth(channel.c, ServingStatus.NOT_SERVING);
            assertThat(closing).as("still in its grace").isNotDone();
            ReserveResponse during = InventoryServiceGrpc.newBlockingStub(channel.c).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .reserve(reserve("during-grace"));
            assertThat(during.getOutcome()).as("calls are still taken during the grace").isEqualTo(ReserveOutcome.RESERVED);
            closing.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            shard.close();
        }
    }

    /** A plaintext channel to the node, closed with the test. */
    private static final class Channel implements AutoCloseable {
        final ManagedChannel c;

        Channel(int port) {
            c = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        }

        @Override
        public void close() throws InterruptedException {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
