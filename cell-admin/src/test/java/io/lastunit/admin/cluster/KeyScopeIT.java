package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.HoldId;
import io.lastunit.router.RouterNode;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.micronaut.context.ApplicationContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The scope of an idempotency key is (tenant, item), the same on every shard and in every region
 * (inventory.proto, docs/hold-lifecycle.md): one key on 50 items spread over the shards of a cell
 * is 50 Reserves; within an item sold in two regions, a key names one Reserve, so the same key
 * sent to the other region is IDEMPOTENCY_KEY_REUSED (also when both race), a retry gets its one
 * hold through either of two routers, and after the item collapsed home a retry still gets its
 * hold. Real ZooKeeper, two routers, six shard nodes on six PostgreSQL databases, a balancer.
 */
class KeyScopeIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "acme";
    private static final List<String> REGIONS = List.of("us", "eu");

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ApplicationContext secondRouterContext;
    private static InventoryServiceGrpc.InventoryServiceBlockingStub api;
    private static InventoryServiceGrpc.InventoryServiceBlockingStub api2;
    private static InventoryServiceGrpc.InventoryServiceStub async;

    @BeforeAll
    static void start() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", REGIONS, 3)
                .balancerSettings(b -> b.interval = Duration.ofMillis(200))
                .start();
        ManagedChannel router = clients.routerChannel(platform);
        api = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        async = ClusterClients.async(router, LocalPlatform.DEV_TOKEN);
        // A second router on the same topology, as another region's front door would be.
        Map<String, Object> props = new HashMap<>();
        props.put("lastunit.router.port", 0);
        props.put("lastunit.router.zookeeper", platform.zookeeper());
        props.put("lastunit.router.regions", REGIONS);
        props.put("lastunit.router.tokens", List.of(ClusterClients.grant(LocalPlatform.DEV_TOKEN, "dev", "*", true)));
        secondRouterContext = ApplicationContext.run(props);
        RouterNode second = secondRouterContext.getBean(RouterNode.class).start();
        api2 = ClusterClients.blocking(clients.channel("127.0.0.1", second.port()), LocalPlatform.DEV_TOKEN);
        ClusterClients.awaitUntil(() -> platform.balancers().stream().anyMatch(b -> b.isLeader()), "a balancer leads");
    }

    @AfterAll
    static void stop() throws Exception {
        if (secondRouterContext != null) {
            secondRouterContext.close();
        }
        if (platform != null) {
            platform.close();
        }
        if (clients != null) {
            clients.close();
        }
    }

    private static ReserveRequest reserve(String item, String key, String region) {
        return ReserveRequest.newBuilder().setTenantId(TENANT).setItemId(item).setQuantity(1).setIdempotencyKey(key)
                .setBuyerId("buyer-" + item + "-" + key).setRegion(region).build();
    }

    private static void createMultiRegion(String item, long us, long eu) throws Exception {
        ClusterClients.createItem(api, CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId(item)
                .setTotal(us + eu).setHomeRegion("us")
                .addRegionQuotas(RegionQuota.newBuilder().setRegion("us").setQuantity(us))
                .addRegionQuotas(RegionQuota.newBuilder().setRegion("eu").setQuantity(eu)).build());
    }

    private static Stock stock(String item, String region) {
        return api.getStock(GetStockRequest.newBuilder().setTenantId(TENANT).setItemId(item).setRegion(region).build())
                .getStock();
    }

    private static void assertKeyReused(Runnable call) {
        Throwable t = catchThrowable(call::run);
        assertThat(t).as("IDEMPOTENCY_KEY_REUSED expected").isNotNull();
        assertThat(ClusterClients.code(t)).as("%s", t).isEqualTo(Status.Code.ALREADY_EXISTS);
        assertThat(ClusterClients.reason(t)).isEqualTo("IDEMPOTENCY_KEY_REUSED");
    }

    private static String region(ReserveResponse r) {
        return HoldId.decode(r.getHold().getHoldId(), "hold_id").region();
    }

    private static void assertEveryShardBalanced() {
        for (ShardInfo s : platform.shards().values()) {
            assertThat(clients.shardService(s).withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .checkInvariants(CheckInvariantsRequest.newBuilder().setTenantId(TENANT).build()).getDriftsList())
                    .as("shard %s", s.getShardId()).isEmpty();
        }
    }

    @Test
    void oneKeyOverFiftyItemsOnSeveralShards_isFiftyReserves_eachRetryGetsItsOwnHold() throws Exception {
        Set<String> owners = new HashSet<>();
        List<String> items = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String item = "single-" + i;
            items.add(item);
            ClusterClients.createItem(api, CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId(item)
                    .setTotal(5).setHomeRegion("us").build());
            owners.add(platform.router().topology().current().shardFor(TENANT, item, "us").orElseThrow()
                    .getShardId());
        }
        assertThat(owners).as("the items live on every shard of the region").hasSize(3);
        Map<String, String> holdByItem = new HashMap<>();
        for (String item : items) {
            ReserveResponse r = api.reserve(reserve(item, "one-key", "us"));
            assertThat(r.getOutcome()).as(item).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(r.getHold().getItemId()).isEqualTo(item);
            holdByItem.put(item, r.getHold().getHoldId());
        }
        assertThat(new HashSet<>(holdByItem.values())).hasSize(50);
        for (String item : items) {
            assertThat(api2.reserve(reserve(item, "one-key", "us")).getHold().getHoldId()).as("retry on %s", item)
                    .isEqualTo(holdByItem.get(item));
            assertKeyReused(() -> api.reserve(reserve(item, "one-key", "us").toBuilder().setQuantity(2).build()));
            assertThat(stock(item, "us").getHeld()).isEqualTo(1);
        }
        assertEveryShardBalanced();
    }

    @Test
    void aKeyUsedInOneRegion_isKeyReusedInTheOther_andItsRetriesGetTheOneHold() throws Exception {
        createMultiRegion("two", 100, 100);
        // First used at home (us): the hold itself is the key's record there.
        ReserveResponse atHome = api.reserve(reserve("two", "k-home", "us"));
        assertThat(atHome.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(atHome.getKeyHomeRegion()).as("internal field cleared by the router").isEmpty();
        assertKeyReused(() -> api.reserve(reserve("two", "k-home", "eu")));
        // First used in eu: claimed at home before the answer.
        ReserveResponse inEu = api.reserve(reserve("two", "k-eu", "eu"));
        assertThat(inEu.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(region(inEu)).isEqualTo("eu");
        assertThat(inEu.getKeyHomeRegion()).isEmpty();
        assertKeyReused(() -> api.reserve(reserve("two", "k-eu", "us")));
        assertKeyReused(() -> api2.reserve(reserve("two", "k-home", "eu")));
        // Retries, through either router, get the one hold.
        for (var stub : List.of(api, api2)) {
            assertThat(stub.reserve(reserve("two", "k-home", "us")).getHold().getHoldId())
                    .isEqualTo(atHome.getHold().getHoldId());
            assertThat(stub.reserve(reserve("two", "k-eu", "eu")).getHold().getHoldId())
                    .isEqualTo(inEu.getHold().getHoldId());
        }
        // The eu hold placed for k-home lost the key's claim: it was given back.
        ClusterClients.awaitUntil(() -> stock("two", "eu").getHeld() == 1, "eu holds only k-eu's unit");
        assertThat(stock("two", "us").getHeld()).isEqualTo(1);
        assertEveryShardBalanced();
    }

    @Test
    void oneKeySentToBothRegionsAtOnce_placesOneHold_theOtherIsKeyReused() throws Exception {
        createMultiRegion("race", 100, 100);
        int keys = 40;
        List<CompletableFuture<Object>> us = new ArrayList<>();
        List<CompletableFuture<Object>> eu = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            us.add(call(reserve("race", "r-" + i, "us")));
            eu.add(call(reserve("race", "r-" + i, "eu")));
        }
        int reserved = 0;
        Duration wait = TestTimeouts.scaled(Duration.ofSeconds(60));
        for (int i = 0; i < keys; i++) {
            Object a = us.get(i).get(wait.toMillis(), TimeUnit.MILLISECONDS);
            Object b = eu.get(i).get(wait.toMillis(), TimeUnit.MILLISECONDS);
            int won = (a instanceof ReserveResponse ? 1 : 0) + (b instanceof ReserveResponse ? 1 : 0);
            assertThat(won).as("key r-%d: %s / %s", i, a, b).isEqualTo(1);
            Object lost = a instanceof ReserveResponse ? b : a;
            assertThat(ClusterClients.code((Throwable) lost)).isEqualTo(Status.Code.ALREADY_EXISTS);
            assertThat(ClusterClients.reason((Throwable) lost)).isEqualTo("IDEMPOTENCY_KEY_REUSED");
            reserved++;
        }
        assertThat(reserved).isEqualTo(keys);
        ClusterClients.awaitUntil(() -> stock("race", "us").getHeld() + stock("race", "eu").getHeld() == keys,
                "one held unit per key once the losers are given back");
        assertEveryShardBalanced();
    }

    /** A Reserve through the router: its response, or the Throwable it failed with. */
    private static CompletableFuture<Object> call(ReserveRequest r) {
        CompletableFuture<Object> f = new CompletableFuture<>();
        async.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS).reserve(r, new StreamObserver<>() {
            @Override
            public void onNext(ReserveResponse value) {
                f.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                f.complete(t);
            }

            @Override
            public void onCompleted() {
            }
        });
        return f;
    }

    @Test
    void afterTheItemCollapsedHome_retriesGetTheirHolds_andTheScopeHolds() throws Exception {
        createMultiRegion("late", 50, 50);
        ReserveResponse euBefore = api.reserve(reserve("late", "before-eu", "eu"));
        ReserveResponse usBefore = api.reserve(reserve("late", "before-us", "us"));
        assertThat(region(euBefore)).isEqualTo("eu");
        // Sell down to under the collapse threshold (max(64, 2 % of 100) units left), then wait
        // for the balancer to ship eu's stock home.
        for (int i = 0; i < 40; i++) {
            assertThat(api.reserve(reserve("late", "fill-" + i, "us")).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
        ClusterClients.awaitUntil(() -> stock("late", "eu").getAvailable() == 0, "eu's stock shipped home");

        assertThat(api2.reserve(reserve("late", "before-eu", "eu")).getHold().getHoldId())
                .as("placed in eu before the collapse").isEqualTo(euBefore.getHold().getHoldId());
        assertThat(api.reserve(reserve("late", "before-us", "us")).getHold().getHoldId())
                .isEqualTo(usBefore.getHold().getHoldId());
        ReserveResponse after = api.reserve(reserve("late", "after-eu", "eu"));
        assertThat(after.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(region(after)).as("forwarded home").isEqualTo("us");
        assertThat(api2.reserve(reserve("late", "after-eu", "eu")).getHold().getHoldId())
                .isEqualTo(after.getHold().getHoldId());
        // The key still names the request the client sent, region included, wherever it is held.
        assertKeyReused(() -> api.reserve(reserve("late", "after-eu", "us")));
        assertKeyReused(() -> api.reserve(reserve("late", "before-us", "eu")));
        assertKeyReused(() -> api.reserve(reserve("late", "before-eu", "us")));
        assertEveryShardBalanced();
    }
}
