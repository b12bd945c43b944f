package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.testkit.ManualClock;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.common.metrics.Scrape;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.TopologyStore;
import java.time.InstantSource;
import org.apache.curator.framework.CuratorFramework;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A router's /metrics over real shard nodes, scraped over HTTP (docs/observability.md, "Router"):
 * Reserve answers by outcome, sheds by cause (a cached SOLD_OUT, a buyer over its rate), retries
 * and re-routes (none on a steady topology), the gRPC meters of the router's own server and of its
 * calls to the shards, per method, status and shard, and the topology's staleness and the ZooKeeper
 * connection — before and while ZooKeeper is down. The router runs on the test's clock
 * ({@link ManualClock}), which stands still: the sold-out TTL never passes and the buyer's tokens
 * never refill, so every count is exact.
 */
class RouterMetricsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final ManualClock ROUTER_CLOCK = new ManualClock();
    private static final int BUYER_BURST = 3;

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;
    private static InventoryServiceGrpc.InventoryServiceBlockingStub api;

    @BeforeAll
    static void start() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", List.of("local"), 1)
                .cell("vip", List.of("local"), 1)
                .routerSetting("lastunit.router.buyer-burst", BUYER_BURST)
                .routerClock(ROUTER_CLOCK::nanoTime)
                .start();
        try (CuratorFramework zk = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15))) {
            zk.start();
            new TopologyStore(zk, TopologyStore.ROOT_DEFAULT, InstantSource.system()).assignTenant("star", "vip", -1);
        }
        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf("star").equals("vip"),
                "the router sees star in cell vip");
        router = clients.routerChannel(platform);
        api = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
    }

    @AfterAll
    static void stop() throws Exception {
        if (platform != null) {
            platform.close();
        }
        if (clients != null) {
            clients.close();
        }
    }

    @Test
    void answersShedsAndCalls_areExportedWithExactCounts_andStalenessWhileZooKeeperIsDown() throws Exception {
        String url = platform.router().metricsUrl().orElseThrow();
        createItem("tee", 2);
        createItem("cap", 100);
        createItem("star", "gem", 1);
        // CreateItem may have been re-routed or retried while the shard caught up with the topology.
        Scrape before = Scrape.of(url);
        assertThat(reserve("tee", "b1").getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(reserve("tee", "b2").getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(reserve("tee", "b3").getOutcome()).as("from the shard").isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(reserve("tee", "b4").getOutcome()).as("from the cache").isEqualTo(ReserveOutcome.SOLD_OUT);
        for (int i = 0; i < BUYER_BURST; i++) {
            assertThat(reserve("cap", "greedy", "g" + i).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
        Throwable limited = catchThrowable(() -> reserve("cap", "greedy", "g-over"));
        assertThat(ClusterClients.reason(limited)).isEqualTo("RATE_LIMITED");
        // Tenant star lives in cell vip: its one unit, then the shard's SOLD_OUT, then two from the cache.
        assertThat(reserve("star", "gem", "s1", "s1").getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(reserve("star", "gem", "s2", "s2").getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(reserve("star", "gem", "s3", "s3").getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(reserve("star", "gem", "s4", "s4").getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);

        Scrape s = Scrape.of(url);
        assertThat(s.value("lastunit_router_reserves_total", "outcome", "RESERVED", "cell", "shared")).isEqualTo(5);
        assertThat(s.value("lastunit_router_reserves_total", "outcome", "SOLD_OUT", "cell", "shared")).isEqualTo(2);
        assertThat(s.value("lastunit_router_reserves_total", "outcome", "RATE_LIMITED", "cell", "shared"))
                .isEqualTo(1);
        assertThat(s.sum("lastunit_router_reserves_total", "cell", "shared")).as("every answer, once").isEqualTo(8);
        assertThat(s.value("lastunit_router_sheds_total", "cause", "sold_out_cache", "cell", "shared")).isEqualTo(1);
        assertThat(s.value("lastunit_router_sheds_total", "cause", "rate_limit", "cell", "shared")).isEqualTo(1);
        assertThat(s.value("lastunit_router_sheds_total", "cause", "in_flight", "cell", "shared")).isZero();
        // The sold-out shed rate per cell: vip's answers and sheds apart from shared's.
        assertThat(s.value("lastunit_router_reserves_total", "outcome", "RESERVED", "cell", "vip")).isEqualTo(1);
        assertThat(s.value("lastunit_router_reserves_total", "outcome", "SOLD_OUT", "cell", "vip")).isEqualTo(3);
        assertThat(s.sum("lastunit_router_reserves_total", "cell", "vip")).isEqualTo(4);
        assertThat(s.value("lastunit_router_sheds_total", "cause", "sold_out_cache", "cell", "vip")).isEqualTo(2);
        assertThat(s.all("lastunit_router_reserves_total")).extracting(x -> x.labels().get("cell"))
                .as("cells only, never a tenant").containsOnly("shared", "vip");
        assertThat(s.value("lastunit_router_retries_total")).isEqualTo(before.value("lastunit_router_retries_total"));
        assertThat(s.sum("lastunit_router_reroutes_total")).isEqualTo(before.sum("lastunit_router_reroutes_total"));
        assertThat(s.all("lastunit_router_reroutes_total")).extracting(x -> x.labels().get("why"))
                .containsExactlyInAnyOrder("moved", "forwarded", "tenant_moving");
        assertThat(s.sum("lastunit_router_pulls_total")).isZero();
        // The router's own server: the eleven answers and the one refusal, by status.
        assertThat(s.sum("lastunit_grpc_server_processing_duration_seconds_count", "method", "Reserve",
                "statusCode", "OK")).isEqualTo(11);
        assertThat(s.sum("lastunit_grpc_server_processing_duration_seconds_count", "method", "Reserve",
                "statusCode", "RESOURCE_EXHAUSTED")).isEqualTo(1);
        assertThat(s.all("lastunit_grpc_server_processing_duration_seconds_bucket", "method", "Reserve"))
                .anySatisfy(b -> assertThat(b.labels()).containsEntry("le", "0.1"));
        // Its calls to the shards: one per Reserve that reached it (sequential, so one per batch call).
        String shard = platform.shards().get("shared-local-1").getAddress();
        String vipShard = platform.shards().get("vip-local-1").getAddress();
        assertThat(s.sum("lastunit_grpc_client_processing_duration_seconds_count", "method", "ReserveBatch",
                "statusCode", "OK", "target", shard)).as("labelled by the shard called").isEqualTo(6);
        assertThat(s.sum("lastunit_grpc_client_processing_duration_seconds_count", "method", "ReserveBatch",
                "statusCode", "OK", "target", vipShard)).isEqualTo(2);
        assertThat(s.sum("lastunit_grpc_client_processing_duration_seconds_count", "method", "ReserveBatch",
                "statusCode", "OK")).isEqualTo(8);
        assertThat(s.sum("lastunit_grpc_client_processing_duration_seconds_count", "method", "CreateItem",
                "statusCode", "OK")).isEqualTo(3);
        assertThat(s.value("lastunit_topology_staleness_seconds")).isZero();
        assertThat(s.value("lastunit_zookeeper_connected")).isEqualTo(1);
        assertThat(s.names()).contains("jvm_memory_used_bytes", "jvm_threads_live_threads");
        assertThat(s.all("lastunit_router_reserves_total")).allSatisfy(x ->
                assertThat(x.labels()).containsEntry("component", "router").doesNotContainKeys("tenant", "item"));

        platform.zookeeperServer().stop();
        try {
            ClusterClients.awaitUntil(() -> {
                try {
                    Scrape z = Scrape.of(url); // the router's ZooKeeper client notices within its connection timeout
                    return z.value("lastunit_zookeeper_connected") == 0
                            && z.value("lastunit_topology_staleness_seconds") > 0;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "the router sees ZooKeeper down and its view go stale");
        } finally {
            platform.zookeeperServer().restart();
        }
        ClusterClients.awaitUntil(() -> {
            try {
                return Scrape.of(url).value("lastunit_topology_staleness_seconds") == 0;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "the router's view is current again after the reconnect");
    }

    private static void createItem(String item, long total) throws InterruptedException {
        createItem("shop", item, total);
    }

    private static void createItem(String tenant, String item, long total) throws InterruptedException {
        ClusterClients.createItem(api, CreateItemRequest.newBuilder().setTenantId(tenant).setItemId(item)
                .setTotal(total).setHomeRegion("local").build());
    }

    private static io.lastunit.api.inventory.v1.ReserveResponse reserve(String item, String buyer) {
        return reserve(item, buyer, buyer);
    }

    private static io.lastunit.api.inventory.v1.ReserveResponse reserve(String item, String buyer, String key) {
        return reserve("shop", item, buyer, key);
    }

    private static io.lastunit.api.inventory.v1.ReserveResponse reserve(String tenant, String item, String buyer,
                                                                         String key) {
        return api.withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                .reserve(ReserveRequest.newBuilder().setTenantId(tenant).setItemId(item).setQuantity(1)
                        .setIdempotencyKey(item + "-" + key).setBuyerId(buyer).setRegion("local").build());
    }
}
