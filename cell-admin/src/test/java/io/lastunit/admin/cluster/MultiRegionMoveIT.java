package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.testkit.PostgresFixture;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A tenant whose items are sold in two regions with quotas (eu home 60, us 40) moves from cell
 * shared into cell big (one shard per region each) and back, through the admin service against real
 * shard nodes: each region's stock is what it was, every hold is there with its
 * expiry, each shard's and the cross-shard invariants hold, and the tenant sells in both regions
 * afterwards.
 */
class MultiRegionMoveIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "world-co";
    private static final List<String> REGIONS = List.of("eu", "us");
    private static final int ITEMS = 5;

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;
    private static AdminServiceGrpc.AdminServiceBlockingStub admin;

    @BeforeAll
    static void start() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", REGIONS, 1)
                .cell("big", REGIONS, 1)
                // No balancer: each region's stock stays where the test put it, so it can be compared.
                .balancers(0)
                .adminResumeInterval(Duration.ZERO)
                .movers(MoverSettings.defaults().withRetireGrace(Duration.ofMillis(200)), MovePolicy.defaults(),
                        MoveFaults.NONE, InstantSource.system())
                .start();
        router = clients.routerChannel(platform);
        admin = ClusterClients.adminService(clients.adminChannel(platform), LocalPlatform.DEV_TOKEN);
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

    private static InventoryServiceGrpc.InventoryServiceBlockingStub api() {
        return ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN).withDeadlineAfter(
                ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    private static Map<String, Stock> stock() {
        Map<String, Stock> m = new LinkedHashMap<>();
        for (int i = 0; i < ITEMS; i++) {
            for (String region : REGIONS) {
                m.put("item-" + i + "@" + region, api().getStock(GetStockRequest.newBuilder().setTenantId(TENANT)
                        .setItemId("item-" + i).setRegion(region).build()).getStock());
            }
        }
        return m;
    }

    @Test
    void aTenantWithRegionalQuotas_movesIntoACellWithBothRegions_andBack() throws Exception {
        var creator = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        for (int i = 0; i < ITEMS; i++) {
            ClusterClients.createItem(creator, CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId("item-" + i)
                    .setTotal(100).setHomeRegion("eu").addRegionQuotas(RegionQuota.newBuilder().setRegion("eu")
                            .setQuantity(60)).addRegionQuotas(RegionQuota.newBuilder().setRegion("us").setQuantity(40))
                    .build());
        }
        List<Hold> holds = new ArrayList<>();
        for (int i = 0; i < ITEMS; i++) {
            for (String region : REGIONS) {
                for (int k = 0; k < 5; k++) {
                    ReserveResponse r = api().reserve(ReserveRequest.newBuilder().setTenantId(TENANT)
                            .setItemId("item-" + i).setQuantity(2).setIdempotencyKey(region + "-" + i + "-" + k)
                            .setBuyerId("buyer-" + region + "-" + k).setRegion(region).build());
                    assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
                    holds.add(r.getHold());
                }
            }
        }
        Map<String, Stock> before = stock();

        for (String[] leg : new String[][] {{"shared", "big"}, {"big", "shared"}}) {
            Move started = admin.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .startMove(StartMoveRequest.newBuilder().setTenantId(TENANT).setToCell(leg[1])
                            .setMaxPauseMs(10_000).build());
            assertThat(started.getFromCell()).isEqualTo(leg[0]);
            Move done = MoveChecks.awaitFinished(admin, started.getMoveId(), Duration.ofSeconds(120));
            assertThat(done.getStep()).as(done.getReason()).isEqualTo(MoveStep.CLEANED);
            ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(TENANT).equals(leg[1]),
                    "the router sees the tenant in " + leg[1]);

            assertThat(stock()).as("each region's stock after moving to %s", leg[1]).isEqualTo(before);
            MoveChecks.assertItemsOnlyIn(clients, platform, TENANT, leg[1], 2L * ITEMS);
            MoveChecks.assertHoldsAsTheyWere(api(), holds);
            MoveChecks.assertInvariants(clients, platform);
        }
        for (String region : REGIONS) {
            ReserveResponse r = api().reserve(ReserveRequest.newBuilder().setTenantId(TENANT).setItemId("item-0")
                    .setQuantity(1).setIdempotencyKey("after-" + region).setBuyerId("after").setRegion(region).build());
            assertThat(r.getOutcome()).as(region).isEqualTo(ReserveOutcome.RESERVED);
        }
    }
}
