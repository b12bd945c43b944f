package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A flash sale across two cells: the shared cell (four shard nodes) serves tenants alpha and
 * beta, a dedicated cell {@code big} (two shard nodes) serves the large tenant whale, placed
 * there before it had any item. 20,000 buyers race through one router for 1,000 units of 50
 * items; every item sells exactly its total, and whale's stock never touches the shared cell.
 */
class ClusterFlashSaleIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final List<String> TENANTS = List.of("whale", "alpha", "beta");
    private static final int ITEMS = 50;
    private static final int TOTAL_PER_ITEM = 20;
    private static final int BUYERS = 20_000;

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;
    private static final List<Sale.Item> items = new ArrayList<>();

    @BeforeAll
    static void startTwoCellsAndPlaceWhaleInBig() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", List.of("local"), 4)
                .cell("big", List.of("local"), 2)
                .start();
        try (CuratorFramework zk = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15))) {
            zk.start();
            new TopologyStore(zk, TopologyStore.ROOT_DEFAULT, InstantSource.system()).assignTenant("whale", "big", -1);
        }
        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf("whale").equals("big"),
                "the router sees whale in cell big");
        router = clients.routerChannel(platform);
        var admin = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        for (int i = 0; i < ITEMS; i++) {
            Sale.Item it = new Sale.Item(TENANTS.get(i % TENANTS.size()), "drop-" + i, TOTAL_PER_ITEM);
            ClusterClients.createItem(admin, CreateItemRequest.newBuilder().setTenantId(it.tenant()).setItemId(it.id())
                    .setTotal(it.total()).setHomeRegion("local").build());
            items.add(it);
        }
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
    void twentyThousandBuyers_buyExactlyEachItemsTotal_andWhaleStockStaysInItsCell() throws Exception {
        List<ReserveRequest> buyers = Sale.buyers(items, BUYERS, "flash");
        Sale sale = new Sale(ClusterClients.async(router, LocalPlatform.DEV_TOKEN), buyers, 512, 50,
                Duration.ofMillis(200), TestTimeouts.scaled(Duration.ofSeconds(10)), 0);
        long t0 = System.nanoTime();
        sale.start();
        try {
            assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(90)))).as("sale ended: %s", sale).isTrue();
        } finally {
            sale.stop();
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        System.out.printf("ClusterFlashSaleIT: %s in %d ms, router shed %d%n", sale, ms, platform.router().shedCount());

        Map<Sale.End, Integer> ends = new HashMap<>();
        sale.results().forEach(r -> ends.merge(r.end(), 1, Integer::sum));
        assertThat(ends.getOrDefault(Sale.End.FAIL, 0) + ends.getOrDefault(Sale.End.UNKNOWN, 0))
                .as("operations that failed or ended unknown: %s", ends).isZero();
        assertThat(sale.reserved()).as("RESERVED replies").isEqualTo(ITEMS * TOTAL_PER_ITEM);
        assertThat(ends.get(Sale.End.SOLD_OUT)).as("SOLD_OUT replies").isEqualTo(BUYERS - ITEMS * TOTAL_PER_ITEM);
        assertThat(sale.results().stream().filter(r -> r.hold() != null).map(r -> r.hold().getHoldId()).distinct()
                .count()).as("distinct hold ids").isEqualTo(ITEMS * TOTAL_PER_ITEM);

        var reader = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        for (Sale.Item it : items) {
            assertThat(sale.reserved(it)).as("RESERVED replies for %s", it.ref()).isEqualTo(TOTAL_PER_ITEM);
            Stock s = reader.getStock(GetStockRequest.newBuilder().setTenantId(it.tenant()).setItemId(it.id()).build())
                    .getStock();
            assertThat(s.getTotal()).as("total of %s", it.ref()).isEqualTo(TOTAL_PER_ITEM);
            assertThat(s.getHeld() + s.getSold()).as("held + sold of %s", it.ref()).isEqualTo(TOTAL_PER_ITEM);
            assertThat(s.getAvailable()).as("available of %s", it.ref()).isZero();
        }

        Topology topology = platform.router().topology().current();
        SaleChecker checker = SaleChecker.read(clients, topology, items);
        checker.assertEachItemHeldExactlyItsTotal();
        checker.assertRepliesMatchHolds(sale.results());
        checker.assertNoSoldOutWhileStockRemained(sale.history());
        assertCheckerRejectsDoctoredHistories(checker, sale);

        Map<String, Long> itemsPerTenant = new HashMap<>();
        items.forEach(it -> itemsPerTenant.merge(it.tenant(), 1L, Long::sum));
        Map<String, Map<String, Long>> counted = countItemsOnEveryShard(topology);
        assertCell(counted, topology.shards("big"), Map.of("whale", itemsPerTenant.get("whale"), "alpha", 0L,
                "beta", 0L));
        assertCell(counted, topology.shards("shared"), Map.of("whale", 0L, "alpha", itemsPerTenant.get("alpha"),
                "beta", itemsPerTenant.get("beta")));
        for (ShardInfo s : topology.shards("big")) {
            assertThat(counted.get(s.getShardId()).get("whale")).as("whale items on %s", s.getShardId()).isPositive();
        }
        SaleChecker.assertInvariantsHold(platform);
    }

    /** The checker is not vacuous: one SOLD_OUT too early, or one hold nobody was told about, fails it. */
    private static void assertCheckerRejectsDoctoredHistories(SaleChecker checker, Sale sale) {
        Sale.Attempt anyReserved = sale.history().stream()
                .filter(a -> a.outcome() == ReserveOutcome.RESERVED).findFirst()
                .orElseThrow();
        Sale.Item item = items.stream().filter(it -> it.ref().equals(anyReserved.itemRef())).findFirst().orElseThrow();
        Instant firstHold = checker.rows(item).stream().map(SaleChecker.Row::createdAt).min(Instant::compareTo)
                .orElseThrow();
        Sale.Attempt early = new Sale.Attempt(anyReserved.request(), 1, firstHold.minusMillis(2),
                firstHold.minusMillis(1), Status.Code.OK, "", ReserveOutcome.SOLD_OUT);
        assertThatThrownBy(() -> checker.assertNoSoldOutWhileStockRemained(List.of(early)))
                .isInstanceOf(AssertionError.class);
        List<Sale.Result> oneForgotten = sale.results().stream()
                .filter(r -> !r.request().equals(anyReserved.request())).toList();
        assertThatThrownBy(() -> checker.assertRepliesMatchHolds(oneForgotten)).isInstanceOf(AssertionError.class);
        List<Sale.Result> toldSoldOut = sale.results().stream().map(r -> !r.request().equals(anyReserved.request()) ? r
                : new Sale.Result(r.request(), Sale.End.SOLD_OUT, null, 1, Status.Code.OK, "", false)).toList();
        assertThatThrownBy(() -> checker.assertRepliesMatchHolds(toldSoldOut)).isInstanceOf(AssertionError.class);
    }

    @Test
    void shardCalledDirectly_forAnItemPlacedElsewhere_answersAbortedMoved_andCreatesNothing() {
        Topology topology = platform.router().topology().current();
        // alpha's item, sent to a shared shard that does not own it
        ShardInfo owner = topology.shardFor("alpha", "probe", "local").orElseThrow();
        ShardInfo other = topology.shards("shared").stream().filter(s -> !s.equals(owner)).findFirst().orElseThrow();
        ManagedChannel direct = clients.shardChannel(other);
        Throwable t = catchThrowable(() -> InventoryServiceGrpc.newBlockingStub(direct).reserve(ReserveRequest.newBuilder()
                .setTenantId("alpha").setItemId("probe").setQuantity(1).setIdempotencyKey("probe-k")
                .setBuyerId("probe-b").setRegion("local").build()));
        assertThat(ClusterClients.code(t)).isEqualTo(Status.Code.ABORTED);
        assertThat(ClusterClients.reason(t)).isEqualTo("MOVED");
        assertThat(GrpcErrors.errorInfo(t).orElseThrow().getMetadataMap()).containsEntry("owner", owner.getShardId());

        // whale's item, created directly on a shard of the shared cell: refused, nothing stored there
        ShardInfo shared = topology.shards("shared").get(0);
        Throwable created = catchThrowable(() -> InventoryServiceGrpc.newBlockingStub(clients.shardChannel(shared))
                .createItem(CreateItemRequest.newBuilder().setTenantId("whale").setItemId("smuggled").setTotal(5)
                        .setHomeRegion("local").build()));
        assertThat(ClusterClients.code(created)).isEqualTo(Status.Code.ABORTED);
        assertThat(ClusterClients.reason(created)).isEqualTo("MOVED");
        assertThat(GrpcErrors.errorInfo(created).orElseThrow().getMetadataMap().get("owner"))
                .startsWith("big-");
        assertThat(clients.shardService(shared).countItems(CountItemsRequest.newBuilder().setTenantId("whale").build())
                .getItems()).as("whale items on shared shard %s", shared.getShardId()).isZero();
    }

    private static Map<String, Map<String, Long>> countItemsOnEveryShard(Topology topology) {
        Map<String, Map<String, Long>> counted = new HashMap<>();
        for (String cell : List.of("shared", "big")) {
            for (ShardInfo s : topology.shards(cell)) {
                var stub = clients.shardService(s).withDeadlineAfter(ClusterClients.callDeadlineMillis(),
                        TimeUnit.MILLISECONDS);
                Map<String, Long> perTenant = new HashMap<>();
                for (String tenant : TENANTS) {
                    perTenant.put(tenant, stub.countItems(CountItemsRequest.newBuilder().setTenantId(tenant).build())
                            .getItems());
                }
                counted.put(s.getShardId(), perTenant);
            }
        }
        return counted;
    }

    /** Per tenant: 0 expected means 0 on every shard of the cell; otherwise the cell's shards sum to it. */
    private static void assertCell(Map<String, Map<String, Long>> counted, List<ShardInfo> shards,
                                   Map<String, Long> expected) {
        assertThat(shards).isNotEmpty();
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            long sum = 0;
            for (ShardInfo s : shards) {
                long n = counted.get(s.getShardId()).get(e.getKey());
                if (e.getValue() == 0) {
                    assertThat(n).as("%s items on %s", e.getKey(), s.getShardId()).isZero();
                }
                sum += n;
            }
            assertThat(sum).as("%s items on the shards of cell %s", e.getKey(), shards.get(0).getCell())
                    .isEqualTo(e.getValue());
        }
    }
}
