package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.HoldId;
import io.lastunit.testkit.PostgresFixture;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tenants are walled off at the router: a caller whose token grants tenant A alone can neither
 * read nor change tenant B's items or holds, a tenant token cannot create or restock items, and
 * a call without a known bearer token is refused before anything runs. Every refusal is checked
 * to change nothing: B's counters and hold stay exactly as they were, and no refused call
 * reaches a shard node.
 */
class TenantIsolationIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TOKEN_A = "token-of-tenant-a";
    private static final String TOKEN_B = "token-of-tenant-b";

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;
    private static Hold holdOfB;
    private static Stock stockOfB;

    private InventoryServiceGrpc.InventoryServiceBlockingStub asA;
    private long shardCallsBefore;

    @BeforeAll
    static void startWithOneItemAndOneHoldPerTenant() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", List.of("local"), 2)
                .tokenGrant(ClusterClients.grant(TOKEN_A, "service-a", "tenant-a", false))
                .tokenGrant(ClusterClients.grant(TOKEN_B, "service-b", "tenant-b", false))
                .start();
        router = clients.routerChannel(platform);
        var admin = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        for (String tenant : List.of("tenant-a", "tenant-b")) {
            ClusterClients.createItem(admin, CreateItemRequest.newBuilder().setTenantId(tenant).setItemId("shoe")
                    .setTotal(10).setHomeRegion("local").build());
        }
        ReserveResponse r = ClusterClients.blocking(router, TOKEN_B).reserve(ReserveRequest.newBuilder()
                .setTenantId("tenant-b").setItemId("shoe").setQuantity(2).setIdempotencyKey("b-key-1")
                .setBuyerId("b-buyer").setRegion("local").build());
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        holdOfB = r.getHold();
        stockOfB = stockOfB();
        assertThat(stockOfB.getHeld()).isEqualTo(2);
        assertThat(stockOfB.getAvailable()).isEqualTo(8);
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

    @BeforeEach
    void asTenantA() {
        asA = ClusterClients.blocking(router, TOKEN_A).withDeadlineAfter(ClusterClients.callDeadlineMillis(),
                TimeUnit.MILLISECONDS);
        shardCallsBefore = shardCalls();
    }

    @Test
    void tenantAToken_onTenantBItem_isPermissionDenied_forGetStockReserveAndRestock() {
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED", () -> asA.getStock(GetStockRequest
                .newBuilder().setTenantId("tenant-b").setItemId("shoe").build()));
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED", () -> asA.reserve(ReserveRequest.newBuilder()
                .setTenantId("tenant-b").setItemId("shoe").setQuantity(1).setIdempotencyKey("a-steals")
                .setBuyerId("a-buyer").setRegion("local").build()));
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED", () -> asA.restock(RestockRequest.newBuilder()
                .setTenantId("tenant-b").setItemId("shoe").setQuantity(5).setRestockId("a-restocks-b").build()));
        assertTenantBUnchanged();
    }

    @Test
    void tenantAToken_onTenantBHoldId_isPermissionDenied_forConfirmReleaseExtendAndGetHold() {
        String id = holdOfB.getHoldId();
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED",
                () -> asA.confirm(ConfirmRequest.newBuilder().setHoldId(id).setOrderRef("a-order").build()));
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED",
                () -> asA.release(ReleaseRequest.newBuilder().setHoldId(id).build()));
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED",
                () -> asA.extend(ExtendRequest.newBuilder().setHoldId(id).build()));
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED",
                () -> asA.getHold(GetHoldRequest.newBuilder().setHoldId(id).build()));
        assertTenantBUnchanged();
    }

    @Test
    void tenantAToken_withBHoldUuidReLabelledAsTenantA_findsNoHold_andChangesNothing() {
        // The hold id names its tenant; relabelling B's hold as A's passes the router's check, so
        // the shard must match the whole id, not the UUID alone.
        HoldId b = HoldId.decode(holdOfB.getHoldId(), "hold_id");
        String forged = new HoldId("tenant-a", "shoe", b.region(), b.bucketNo(), b.uuid()).encode();
        long before = shardCalls();
        assertRefused(Status.Code.NOT_FOUND, "HOLD_NOT_FOUND",
                () -> asA.release(ReleaseRequest.newBuilder().setHoldId(forged).build()));
        assertRefused(Status.Code.NOT_FOUND, "HOLD_NOT_FOUND",
                () -> asA.confirm(ConfirmRequest.newBuilder().setHoldId(forged).setOrderRef("forged").build()));
        assertRefused(Status.Code.NOT_FOUND, "HOLD_NOT_FOUND",
                () -> asA.getHold(GetHoldRequest.newBuilder().setHoldId(forged).build()));
        assertThat(shardCalls() - before).as("the three calls reached tenant A's shard, once each").isEqualTo(3);
        shardCallsBefore += 3;
        assertTenantBUnchanged();
    }

    @Test
    void tenantToken_withoutAdminRole_isPermissionDenied_forCreateItemAndRestockOfItsOwnTenant() {
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED", () -> asA.createItem(CreateItemRequest
                .newBuilder().setTenantId("tenant-a").setItemId("new-shoe").setTotal(5).setHomeRegion("local").build()));
        assertRefused(Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED", () -> asA.restock(RestockRequest.newBuilder()
                .setTenantId("tenant-a").setItemId("shoe").setQuantity(5).setRestockId("a-restocks-a").build()));
        Stock a = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN).getStock(GetStockRequest.newBuilder()
                .setTenantId("tenant-a").setItemId("shoe").build()).getStock();
        assertThat(a.getTotal()).isEqualTo(10);
        Throwable missing = catchThrowable(() -> ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN)
                .getStock(GetStockRequest.newBuilder().setTenantId("tenant-a").setItemId("new-shoe").build()));
        assertThat(ClusterClients.code(missing)).as("the refused CreateItem created nothing")
                .isEqualTo(Status.Code.NOT_FOUND);
        shardCallsBefore += 2; // the two GetStock checks above reached the shard
        assertTenantBUnchanged();
    }

    @Test
    void callWithoutToken_orWithUnknownOrMalformedToken_isUnauthenticated() {
        ManagedChannel ch = router;
        ReserveRequest steal = ReserveRequest.newBuilder().setTenantId("tenant-b").setItemId("shoe").setQuantity(1)
                .setIdempotencyKey("anon").setBuyerId("anon").setRegion("local").build();
        List<InventoryServiceGrpc.InventoryServiceBlockingStub> callers = List.of(
                InventoryServiceGrpc.newBlockingStub(ch),
                InventoryServiceGrpc.newBlockingStub(ch).withInterceptors(ClusterClients.bearer("not-a-known-token")),
                InventoryServiceGrpc.newBlockingStub(ch).withInterceptors(ClusterClients.header("Bearer ")),
                InventoryServiceGrpc.newBlockingStub(ch).withInterceptors(ClusterClients.header("Basic " + TOKEN_B)),
                InventoryServiceGrpc.newBlockingStub(ch).withInterceptors(ClusterClients.header(TOKEN_B)));
        for (var caller : callers) {
            var c = caller.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS);
            assertRefused(Status.Code.UNAUTHENTICATED, "UNAUTHENTICATED", () -> c.reserve(steal));
            assertRefused(Status.Code.UNAUTHENTICATED, "UNAUTHENTICATED", () -> c.getStock(GetStockRequest
                    .newBuilder().setTenantId("tenant-b").setItemId("shoe").build()));
            assertRefused(Status.Code.UNAUTHENTICATED, "UNAUTHENTICATED", () -> c.release(ReleaseRequest.newBuilder()
                    .setHoldId(holdOfB.getHoldId()).build()));
        }
        assertTenantBUnchanged();
    }

    private static void assertRefused(Status.Code code, String reason, Runnable call) {
        Throwable t = catchThrowable(call::run);
        assertThat(t).as("the call is refused").isNotNull();
        assertThat(ClusterClients.code(t)).as("status of %s", t).isEqualTo(code);
        assertThat(ClusterClients.reason(t)).as("reason of %s", t).isEqualTo(reason);
    }

    /** B's counters and hold are as before; no refused call reached a shard (checked before the reads). */
    private void assertTenantBUnchanged() {
        assertThat(shardCalls()).as("calls that reached a shard node").isEqualTo(shardCallsBefore);
        assertThat(stockOfB()).isEqualTo(stockOfB);
        Hold now = ClusterClients.blocking(router, TOKEN_B).getHold(GetHoldRequest.newBuilder()
                .setHoldId(holdOfB.getHoldId()).build()).getHold();
        assertThat(now.getState()).isEqualTo(HoldState.HELD);
        assertThat(now).isEqualTo(holdOfB);
    }

    private static Stock stockOfB() {
        return ClusterClients.blocking(router, TOKEN_B).getStock(GetStockRequest.newBuilder().setTenantId("tenant-b")
                .setItemId("shoe").build()).getStock();
    }

    private static long shardCalls() {
        return platform.shards().keySet().stream().mapToLong(id -> platform.shard(id).callsServed()).sum();
    }
}
