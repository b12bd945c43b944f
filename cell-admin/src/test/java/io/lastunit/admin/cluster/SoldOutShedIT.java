package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.testkit.ManualClock;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The cheapest answer is no: once an item sold out through the router, late buyers are told
 * SOLD_OUT by the router itself, without a call to a shard, until the cache entry's time to live
 * has passed; then one call reaches the shard again. The cache must never say SOLD_OUT where the
 * shard would not.
 *
 * <p>The router runs on the test's clock ({@link ManualClock}), which stands still unless the test
 * moves it: the TTL passes when the test says so, not when a loaded host gets there. The router
 * updates its cache before it replies (a SOLD_OUT is cached, a Release forgets it), so the next
 * call sees the change without waiting.
 */
class SoldOutShedIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final Duration SOLD_OUT_TTL = Duration.ofMillis(2_000);
    /** The router's clock for the sold-out cache, the buyer rate limiter and the recent keys. */
    private static final ManualClock ROUTER_CLOCK = new ManualClock();
    private static final int LATE_BUYERS = 1_000;

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;
    private static InventoryServiceGrpc.InventoryServiceBlockingStub admin;

    @BeforeAll
    static void start() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", List.of("local"), 2)
                .routerSetting("lastunit.router.sold-out-ttl-ms", SOLD_OUT_TTL.toMillis())
                .routerClock(ROUTER_CLOCK::nanoTime)
                .start();
        router = clients.routerChannel(platform);
        admin = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
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
    void lateReserves_afterSellOut_areAnsweredByTheRouter_untilTheTtlPasses_thenOneReachesTheShard()
            throws Exception {
        createItem("tee", 5);
        for (int i = 0; i < 5; i++) {
            assertThat(reserve("tee", "early-" + i, 1).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
        long shardCallsBefore = shardCalls();
        assertThat(reserve("tee", "first-late", 1).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(shardCalls()).as("the first SOLD_OUT came from the shard").isEqualTo(shardCallsBefore + 1);

        // The router's clock stands still: every late Reserve is within the TTL, however long they take.
        long calls = shardCalls();
        long shed = platform.router().shedCount();
        Map<ReserveOutcome, Integer> outcomes = reserveConcurrently("tee", "late", LATE_BUYERS);
        assertThat(outcomes).isEqualTo(Map.of(ReserveOutcome.SOLD_OUT, LATE_BUYERS));
        assertThat(shardCalls()).as("calls that reached a shard").isEqualTo(calls);
        assertThat(platform.router().shedCount() - shed).as("calls the router answered itself")
                .isEqualTo(LATE_BUYERS);

        ROUTER_CLOCK.advance(SOLD_OUT_TTL); // the entry's TTL has passed: the next Reserve is its probe
        shed = platform.router().shedCount();
        assertThat(reserve("tee", "after-ttl", 1).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(shardCalls()).as("after the TTL, one call reaches the shard").isEqualTo(calls + 1);
        assertThat(platform.router().shedCount()).isEqualTo(shed);

        assertThat(reserve("tee", "cached-again", 1).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(shardCalls()).as("the shard's new SOLD_OUT is cached again").isEqualTo(calls + 1);
        assertThat(platform.router().shedCount()).isEqualTo(shed + 1);
    }

    @Test
    void releaseThroughTheRouter_forgetsTheCachedSoldOut_soTheUnitSellsAgainAtOnce() throws Exception {
        createItem("cap", 1);
        ReserveResponse first = reserve("cap", "holder", 1);
        assertThat(first.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(reserve("cap", "late-1", 1).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        long shed = platform.router().shedCount();
        assertThat(reserve("cap", "late-2", 1).getOutcome()).as("cached").isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(platform.router().shedCount()).as("answered by the router").isEqualTo(shed + 1);

        admin.withDeadlineAfter(callDeadlineMillis(), TimeUnit.MILLISECONDS)
                .release(ReleaseRequest.newBuilder().setHoldId(first.getHold().getHoldId()).build());
        assertThat(reserve("cap", "after-release", 1).getOutcome()).as("the clock still in the TTL")
                .isEqualTo(ReserveOutcome.RESERVED);
    }

    @Test
    void reserveOfMoreUnitsThanRemain_answeredSoldOut_doesNotMakeSmallerReservesSoldOut() throws Exception {
        createItem("bulk", 3);
        assertThat(reserve("bulk", "wants-five", 5).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        // Three units remain: SOLD_OUT here would be answered while stock is available (DESIGN §1).
        assertThat(reserve("bulk", "wants-one", 1).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
    }

    @Test
    void retriedKey_ofAHoldPlacedBeforeTheSellOut_getsItsHoldBack_notTheCachedSoldOut() throws Exception {
        createItem("last", 1);
        ReserveResponse placed = reserve("last", "slow-client", 1);
        assertThat(placed.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(reserve("last", "other", 1).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        // The client of "slow-client" never saw its reply (a timeout) and retries with the same key.
        ReserveResponse retried = reserve("last", "slow-client", 1);
        assertThat(retried.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(retried.getHold().getHoldId()).isEqualTo(placed.getHold().getHoldId());
    }

    private static void createItem(String item, long total) throws InterruptedException {
        ClusterClients.createItem(admin, CreateItemRequest.newBuilder().setTenantId("shop").setItemId(item)
                .setTotal(total).setHomeRegion("local").build());
    }

    private static ReserveResponse reserve(String item, String buyer, int qty) {
        return admin.withDeadlineAfter(callDeadlineMillis(), TimeUnit.MILLISECONDS).reserve(request(item, buyer, qty));
    }

    private static ReserveRequest request(String item, String buyer, int qty) {
        return ReserveRequest.newBuilder().setTenantId("shop").setItemId(item).setQuantity(qty)
                .setIdempotencyKey(item + "-" + buyer).setBuyerId(buyer).setRegion("local").build();
    }

    /** {@code n} reserves of distinct buyers, at most 128 in flight; outcomes counted, errors fail the test. */
    private static Map<ReserveOutcome, Integer> reserveConcurrently(String item, String prefix, int n)
            throws InterruptedException {
        var stub = ClusterClients.async(router, LocalPlatform.DEV_TOKEN);
        Semaphore inFlight = new Semaphore(128);
        CountDownLatch done = new CountDownLatch(n);
        Map<ReserveOutcome, Integer> outcomes = new ConcurrentHashMap<>();
        Map<String, Throwable> errors = new ConcurrentHashMap<>();
        for (int i = 0; i < n; i++) {
            inFlight.acquire();
            String buyer = prefix + "-" + i;
            var timed = stub.withDeadlineAfter(callDeadlineMillis(), TimeUnit.MILLISECONDS);
            timed.reserve(request(item, buyer, 1), new StreamObserver<>() {
                @Override
                public void onNext(ReserveResponse r) {
                    outcomes.merge(r.getOutcome(), 1, Integer::sum);
                }

                @Override
                public void onError(Throwable t) {
                    errors.put(buyer, t);
                    inFlight.release();
                    done.countDown();
                }

                @Override
                public void onCompleted() {
                    inFlight.release();
                    done.countDown();
                }
            });
        }
        assertThat(done.await(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(errors).isEmpty();
        return outcomes;
    }

    private static long callDeadlineMillis() {
        return TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();
    }

    private static long shardCalls() {
        return platform.shards().keySet().stream().mapToLong(id -> platform.shard(id).callsServed()).sum();
    }
}
