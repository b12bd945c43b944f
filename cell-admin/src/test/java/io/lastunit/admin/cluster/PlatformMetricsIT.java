package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.balancer.BalancerNode;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.common.metrics.Scrape;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every service of a local platform serves /metrics (docs/observability.md): after a short sale
 * through the router and a tenant move between two cells by the admin service, each shard node,
 * the router, the balancer and the admin service answers a scrape over HTTP with the gRPC server
 * histogram and its own domain meters, with exact counts where the test made them (the sale's
 * answers, the one move and its one pause). With metrics off, no node opens a metrics port.
 */
class PlatformMetricsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String BUCKETS = "lastunit_grpc_server_processing_duration_seconds_bucket";

    @Test
    void everyService_servesItsMetrics_afterASaleAndAMove() throws Exception {
        try (ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = LocalPlatform.builder(clients.databases())
                     .cell("shared", List.of("local"), 1)
                     .cell("big", List.of("local"), 1)
                     .adminResumeInterval(Duration.ZERO)
                     .movers(MoverSettings.defaults().withRetireGrace(Duration.ofMillis(200)), MovePolicy.defaults(),
                             MoveFaults.NONE, InstantSource.system())
                     .start()) {
            Map<String, String> urls = platform.metricsUrls();
            BalancerNode balancer = platform.balancers().get(0);
            assertThat(urls.keySet()).containsExactly("shard shared-local-1", "shard big-local-1", "router",
                    "balancer " + balancer.address(), "admin");
            assertThat(urls.values())
                    .allSatisfy(u -> assertThat(u).startsWith("http://127.0.0.1:").endsWith("/metrics"));

            ManagedChannel router = clients.routerChannel(platform);
            InventoryServiceGrpc.InventoryServiceBlockingStub api = ClusterClients.blocking(router,
                    LocalPlatform.DEV_TOKEN);
            ClusterClients.createItem(api, CreateItemRequest.newBuilder().setTenantId("mover-co").setItemId("tee")
                    .setTotal(10).setHomeRegion("local").build());
            int reserved = 0;
            int soldOut = 0;
            for (int i = 0; i < 12; i++) {
                ReserveOutcome o = api.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                        .reserve(ReserveRequest.newBuilder().setTenantId("mover-co").setItemId("tee").setQuantity(1)
                                .setIdempotencyKey("k" + i).setBuyerId("b" + i).setRegion("local").build())
                        .getOutcome();
                if (o == ReserveOutcome.RESERVED) {
                    reserved++;
                } else {
                    soldOut++;
                }
            }
            assertThat(reserved).isEqualTo(10);
            assertThat(soldOut).isEqualTo(2);

            var admin = ClusterClients.adminService(clients.adminChannel(platform), LocalPlatform.DEV_TOKEN);
            Move started = admin.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .startMove(StartMoveRequest.newBuilder().setTenantId("mover-co").setToCell("big")
                            .setMaxPauseMs(10_000).build());
            Move done = MoveChecks.awaitFinished(admin, started.getMoveId(), Duration.ofSeconds(120));
            assertThat(done.getStep()).as(done.getReason()).isEqualTo(MoveStep.CLEANED);
            // Nothing calls the balancer in this sale (no region runs dry): one health check does.
            HealthGrpc.newBlockingStub(clients.channel("127.0.0.1", balancer.port()))
                    .withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .check(HealthCheckRequest.getDefaultInstance());

            for (Map.Entry<String, String> e : urls.entrySet()) {
                Scrape s = Scrape.of(e.getValue());
                assertThat(s.names()).as(e.getKey()).contains(BUCKETS, "jvm_memory_used_bytes");
            }
            for (String shard : List.of("shard shared-local-1", "shard big-local-1")) {
                assertThat(Scrape.of(urls.get(shard)).all("lastunit_holds_total", "component", "shard")).as(shard)
                        .isNotEmpty();
            }
            assertThat(Scrape.of(urls.get("shard shared-local-1")).value("lastunit_holds_total", "event", "created"))
                    .as("the sale's holds, placed on the source shard").isEqualTo(10);

            Scrape r = Scrape.of(urls.get("router"));
            assertThat(r.value("lastunit_router_reserves_total", "outcome", "RESERVED", "cell", "shared"))
                    .isEqualTo(10);
            assertThat(r.value("lastunit_router_reserves_total", "outcome", "SOLD_OUT", "cell", "shared"))
                    .isEqualTo(2);
            assertThat(r.value("lastunit_router_sheds_total", "cause", "sold_out_cache", "cell", "shared"))
                    .isEqualTo(1);
            assertThat(r.sum("lastunit_router_reserves_total", "cell", "big")).as("cell big's series, at zero")
                    .isZero();
            assertThat(r.all("lastunit_router_reserves_total", "cell", "big")).isNotEmpty();
            assertThat(r.names()).contains("lastunit_grpc_client_processing_duration_seconds_count");

            String balancerUrl = urls.get("balancer " + balancer.address());
            assertThat(Scrape.of(balancerUrl).value("lastunit_balancer_leader")).isEqualTo(1);
            // The leader checks every cell on its schedule (5 s by default).
            ClusterClients.awaitUntil(() -> {
                try {
                    Scrape b = Scrape.of(balancerUrl);
                    return b.sum("lastunit_invariant_checks_total", "scope", "cross_shard", "cell", "shared") >= 1
                            && b.sum("lastunit_invariant_checks_total", "scope", "cross_shard", "cell", "big") >= 1;
                } catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }, "the balancer checked both cells");
            Scrape b = Scrape.of(balancerUrl);
            for (String cell : List.of("shared", "big")) {
                assertThat(b.value("lastunit_invariant_drift_units", "scope", "cross_shard", "cell", cell))
                        .as(cell).isZero();
                assertThat(b.value("lastunit_invariant_check_failed", "scope", "cross_shard", "cell", cell))
                        .as(cell).isZero();
            }

            String adminUrl = urls.get("admin");
            ClusterClients.awaitUntil(() -> {
                try {
                    return Scrape.of(adminUrl).value("lastunit_moves_running") == 0;
                } catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }, "the admin service's run of the move ended");
            Scrape a = Scrape.of(adminUrl);
            assertThat(a.value("lastunit_moves_total", "outcome", "cleaned")).isEqualTo(1);
            assertThat(a.value("lastunit_moves_total", "outcome", "aborted")).isZero();
            assertThat(a.value("lastunit_move_pause_seconds_count", "from_cell", "shared", "to_cell", "big"))
                    .isEqualTo(1);
            assertThat(a.value("lastunit_move_pause_seconds_sum", "from_cell", "shared", "to_cell", "big"))
                    .isEqualTo(done.getPauseMs() / 1000.0);
            assertThat(a.sum("lastunit_grpc_server_processing_duration_seconds_count", "method", "StartMove",
                    "statusCode", "OK")).isEqualTo(1);
            assertThat(a.sum("lastunit_grpc_client_processing_duration_seconds_count", "statusCode", "OK"))
                    .as("the mover's calls to the shards").isPositive();
        }
    }

    @Test
    void metricsOff_opensNoMetricsPort() throws Exception {
        try (ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = LocalPlatform.builder(clients.databases())
                     .cell("shared", List.of("local"), 1)
                     .metrics(false)
                     .start()) {
            assertThat(platform.metricsUrls()).isEmpty();
            assertThat(platform.router().meters()).isNull();
            assertThat(platform.shard("shared-local-1").meters()).isNull();
            assertThat(platform.balancers().get(0).meters()).isNull();
            assertThat(platform.adminServer().meters()).isNull();
        }
    }
}
