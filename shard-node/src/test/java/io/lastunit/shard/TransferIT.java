package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.shard.v1.CompleteTransferRequest;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.ListTransfersRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.api.shard.v1.TransferState;
import io.lastunit.common.GrpcErrors;
import io.lastunit.shard.grpc.ShardGrpcService;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shard side of the demarcation protocol (DESIGN §7) and of regions (§6), between two real
 * shard nodes on two databases: region "local" (not home) and region "eu" (home). Each step is
 * idempotent by transfer id and the shard's ledger (base + in - out = sum of allotments) holds
 * after every step; a region that runs dry says so (region_dry); after the item collapses home,
 * new keys are recorded FORWARDED and a key reserved before the collapse still gets its hold.
 */
class TransferIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    /**
     * The transfer window of the snapshot test: ten minutes, so the records made "now" at the test's
     * start are still in it however slowly the host gets to the read, and the ones aged by hand by
     * an hour are not.
     */
    private static final long WINDOW_MS = 600_000;

    private static ShardNodeHarness local;
    private static ShardNodeHarness eu;

    @BeforeAll
    static void start() throws Exception {
        local = new ShardNodeHarness(PG, Map.of("lastunit.shard.id", "shard-local",
                "lastunit.shard.regions", "local,eu")).start();
        eu = new ShardNodeHarness(PG, PG.newDatabase("eu"), Map.of("lastunit.shard.id", "shard-eu",
                "lastunit.shard.regions", "eu,local")).start();
    }

    @AfterAll
    static void stop() {
        local.close();
        eu.close();
    }

    private static ShardServiceGrpc.ShardServiceBlockingStub api(ShardNodeHarness s) {
        return ShardServiceGrpc.newBlockingStub(s.channel()).withDeadlineAfter(ShardNodeHarness.deadlineMillis(),
                TimeUnit.MILLISECONDS);
    }

    private static void createTwoRegionItem(String item, long localQuota, long euQuota) {
        CreateItemRequest r = CreateItemRequest.newBuilder().setTenantId("acme").setItemId(item)
                .setTotal(localQuota + euQuota).setHomeRegion("eu").setBucketCount(2)
                .addRegionQuotas(RegionQuota.newBuilder().setRegion("local").setQuantity(localQuota))
                .addRegionQuotas(RegionQuota.newBuilder().setRegion("eu").setQuantity(euQuota)).build();
        assertThat(local.blocking().createItem(r).getStock().getTotal()).isEqualTo(localQuota);
        assertThat(eu.blocking().createItem(r).getStock().getTotal()).isEqualTo(euQuota);
    }

    private static ItemLevel level(ShardNodeHarness s, String item) {
        return api(s).listLevels(ListLevelsRequest.newBuilder().setTenantId("acme").setItemId(item).build())
                .getItems(0);
    }

    private static ReserveRequest reserve(String item, String key, String region) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId(item).setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("b-" + key).setRegion(region).build();
    }

    private static void assertLedgers() {
        assertThat(local.checkInvariants().getDriftsList()).isEmpty();
        assertThat(eu.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void transferSteps_areIdempotent_andConserveUnits() {
        createTwoRegionItem("lamp", 60, 40);
        TransferOutRequest out = TransferOutRequest.newBuilder().setTransferId("t-1").setTenantId("acme")
                .setItemId("lamp").setPeerShardId("shard-eu").setMaxQuantity(25).setMinQuantity(10).build();
        Transfer first = api(local).transferOut(out);
        assertThat(first.getQuantity()).isEqualTo(25);
        assertThat(first.getState()).isEqualTo(TransferState.PENDING);
        assertThat(first.getDirection()).isEqualTo(TransferDirection.OUT);
        // Step 1 again: the same record, nothing more taken.
        assertThat(api(local).transferOut(out).getQuantity()).isEqualTo(25);
        assertThat(level(local, "lamp").getAllotment()).isEqualTo(35);
        assertThat(level(local, "lamp").getAvailable()).isEqualTo(35);
        assertLedgers();
        // In flight: the source's PENDING record is what the cross-shard check counts.
        assertThat(api(local).listTransfers(ListTransfersRequest.getDefaultInstance()).getTransfersList())
                .extracting(Transfer::getTransferId).contains("t-1");

        TransferInRequest in = TransferInRequest.newBuilder().setTransferId("t-1").setTenantId("acme")
                .setItemId("lamp").setPeerShardId("shard-local").setQuantity(25).build();
        assertThat(api(eu).transferIn(in).getState()).isEqualTo(TransferState.DONE);
        assertThat(api(eu).transferIn(in).getQuantity()).isEqualTo(25); // applied twice, credited once
        assertThat(level(eu, "lamp").getAllotment()).isEqualTo(65);
        assertThat(level(eu, "lamp").getTransferredIn()).isEqualTo(25);
        assertLedgers();
        // The same id with another quantity is refused, and credits nothing.
        assertThatThrownBy(() -> api(eu).transferIn(in.toBuilder().setQuantity(26).build()))
                .satisfies(e -> assertThat(GrpcErrors.errorInfo(e).orElseThrow().getReason())
                        .isEqualTo("IDEMPOTENCY_KEY_REUSED"));
        assertThat(level(eu, "lamp").getAllotment()).isEqualTo(65);

        assertThat(api(local).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId("t-1").build())
                .getState()).isEqualTo(TransferState.DONE);
        assertThat(api(local).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId("t-1").build())
                .getState()).isEqualTo(TransferState.DONE);
        assertThat(api(local).listTransfers(ListTransfersRequest.getDefaultInstance()).getTransfersList())
                .extracting(Transfer::getTransferId).doesNotContain("t-1");
        // Fewer than min_quantity available: nothing moves, nothing is recorded.
        Transfer none = api(local).transferOut(out.toBuilder().setTransferId("t-2").setMinQuantity(36)
                .setMaxQuantity(40).build());
        assertThat(none.getQuantity()).isZero();
        assertThat(api(local).listTransfers(ListTransfersRequest.newBuilder().addTransferIds("t-2").build())
                .getTransfersCount()).isZero();
        assertThat(level(local, "lamp").getAvailable() + level(eu, "lamp").getAvailable()).isEqualTo(100);
        assertLedgers();
    }

    @Test
    void listLevelsWithAWindow_answersTheLevelsAndTheirTransferRecords_fromOneSnapshot() throws Exception {
        createTwoRegionItem("kettle", 50, 50);
        TransferOutRequest out = TransferOutRequest.newBuilder().setTenantId("acme").setItemId("kettle")
                .setPeerShardId("shard-eu").setMaxQuantity(5).setMinQuantity(5).build();
        api(local).transferOut(out.toBuilder().setTransferId("k-pending").build());
        api(local).transferOut(out.toBuilder().setTransferId("k-old-done").build());
        api(local).transferOut(out.toBuilder().setTransferId("k-old-completed-now").build());
        api(local).transferOut(out.toBuilder().setTransferId("k-done-now").build());
        api(local).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId("k-done-now").build());
        api(local).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId("k-old-done").build());
        try (Connection c = DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
                Statement st = c.createStatement()) {
            // Aged by hand: created an hour ago, and one of them completed an hour ago too.
            st.executeUpdate("UPDATE transfers SET created_at = now() - interval '1 hour'"
                    + " WHERE transfer_id IN ('k-old-done', 'k-old-completed-now', 'k-pending')");
            st.executeUpdate("UPDATE transfers SET done_at = now() - interval '1 hour'"
                    + " WHERE transfer_id = 'k-old-done'");
        }
        api(local).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId("k-old-completed-now").build());

        long before = System.currentTimeMillis();
        ListLevelsResponse snap = api(local).listLevels(ListLevelsRequest.newBuilder().setTenantId("acme")
                .setItemId("kettle").setTransferWindowMs(WINDOW_MS).build());
        long after = System.currentTimeMillis();
        assertThat(snap.getItems(0).getAllotment()).isEqualTo(30);
        assertThat(snap.getItems(0).getTransferredOut()).isEqualTo(20);
        // PENDING whatever its age, created in the window, completed in the window; not the one
        // created and completed before the window.
        assertThat(snap.getTransfersList()).extracting(Transfer::getTransferId)
                .containsExactlyInAnyOrder("k-pending", "k-old-completed-now", "k-done-now");
        assertThat(snap.getTransfersTruncated()).isFalse();
        // The window's start, by the database's clock (the same machine's here), in whole ms.
        assertThat(snap.getTransfersSinceMs()).isBetween(before - WINDOW_MS - 5_000, after - WINDOW_MS + 5_000);
        Transfer aged = api(local).listTransfers(ListTransfersRequest.newBuilder().addTransferIds("k-old-done")
                .build()).getTransfers(0);
        assertThat(aged.getCreatedAtMs()).isLessThan(snap.getTransfersSinceMs());

        // Without a window: the levels alone, as before.
        ListLevelsResponse plain = api(local).listLevels(ListLevelsRequest.newBuilder().setTenantId("acme")
                .setItemId("kettle").build());
        assertThat(plain.getTransfersCount()).isZero();
        assertThat(plain.getTransfersSinceMs()).isZero();
        assertThat(plain.getItems(0).getAllotment()).isEqualTo(30);

        assertRefused(() -> api(local).listLevels(ListLevelsRequest.newBuilder().setTransferWindowMs(-1).build()),
                "transfer_window_ms");
        assertRefused(() -> api(local).listLevels(ListLevelsRequest.newBuilder()
                .setTransferWindowMs(ShardGrpcService.TRANSFER_WINDOW_MS_MAX + 1).build()), "transfer_window_ms");
        assertLedgers();
    }

    @Test
    void badTransferRequests_areRefusedNamingTheField() {
        assertRefused(() -> api(local).transferOut(TransferOutRequest.newBuilder().setTenantId("acme")
                .setItemId("x").setPeerShardId("p").setMaxQuantity(1).build()), "transfer_id");
        assertRefused(() -> api(local).transferOut(TransferOutRequest.newBuilder().setTransferId("t")
                .setTenantId("acme").setItemId("x").setPeerShardId("p").setMaxQuantity(0).build()), "max_quantity");
        assertRefused(() -> api(local).transferOut(TransferOutRequest.newBuilder().setTransferId("t")
                .setTenantId("acme").setItemId("x").setPeerShardId("p").setMaxQuantity(3).setMinQuantity(4).build()),
                "min_quantity");
        assertRefused(() -> api(local).transferIn(TransferInRequest.newBuilder().setTransferId("t")
                .setTenantId("acme").setItemId("x").setQuantity(3).build()), "peer_shard_id");
        assertRefused(() -> api(local).transferIn(TransferInRequest.newBuilder().setTransferId("has space")
                .setTenantId("acme").setItemId("x").setPeerShardId("p").setQuantity(3).build()), "transfer_id");
        StatusRuntimeException missing = catchStatus(() -> api(local).transferIn(TransferInRequest.newBuilder()
                .setTransferId("t-missing").setTenantId("acme").setItemId("no-such-item").setPeerShardId("p")
                .setQuantity(3).build()));
        assertThat(missing.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
        StatusRuntimeException unknown = catchStatus(() -> api(local).completeTransfer(
                CompleteTransferRequest.newBuilder().setTransferId("never-started").build()));
        assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    }

    @Test
    void dryRegion_saysSo_thenCollapsedItem_forwardsNewKeys_andKeepsOldHolds() {
        createTwoRegionItem("mug", 3, 5);
        ReserveResponse[] held = new ReserveResponse[3];
        for (int i = 0; i < 3; i++) {
            held[i] = local.blocking().reserve(reserve("mug", "m-" + i, "local"));
            assertThat(held[i].getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
        ReserveResponse dry = local.blocking().reserve(reserve("mug", "m-3", "local"));
        assertThat(dry.getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(dry.getRegionDry()).as("only this region is out; eu has 5").isTrue();

        // Ship home and collapse (the balancer's step 1 with collapse=true, then 2 and 3).
        Transfer out = api(local).transferOut(TransferOutRequest.newBuilder().setTransferId("mug-home")
                .setTenantId("acme").setItemId("mug").setPeerShardId("shard-eu").setMaxQuantity(1_000)
                .setCollapse(true).build());
        assertThat(out.getQuantity()).isZero(); // nothing left to ship, but the item is marked
        assertThat(level(local, "mug").getCollapsed()).isTrue();

        // A key reserved before the collapse, retried after it: the same hold.
        ReserveResponse again = local.blocking().reserve(reserve("mug", "m-1", "local"));
        assertThat(again.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(again.getHold().getHoldId()).isEqualTo(held[1].getHold().getHoldId());
        // A new key is recorded FORWARDED and sent home; retried, it is forwarded again.
        for (int attempt = 0; attempt < 2; attempt++) {
            StatusRuntimeException fwd = catchStatus(() -> local.blocking().reserve(reserve("mug", "m-new", "local")));
            assertThat(fwd.getStatus().getCode()).isEqualTo(Status.Code.ABORTED);
            var info = GrpcErrors.errorInfo(fwd).orElseThrow();
            assertThat(info.getReason()).isEqualTo("FORWARDED");
            assertThat(info.getMetadataMap()).containsEntry("home_region", "eu");
        }
        // At home the forwarded request (region = home) is served from eu's stock.
        ReserveResponse home = eu.blocking().reserve(reserve("mug", "m-new", "eu"));
        assertThat(home.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(level(local, "mug").getHeld()).isEqualTo(3);
        assertThat(level(eu, "mug").getHeld()).isEqualTo(1);
        assertLedgers();
    }

    private static StatusRuntimeException catchStatus(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the call succeeded");
    }

    private static void assertRefused(Runnable call, String field) {
        StatusRuntimeException e = catchStatus(call);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(e.getStatus().getDescription()).startsWith(field + ":");
    }
}
