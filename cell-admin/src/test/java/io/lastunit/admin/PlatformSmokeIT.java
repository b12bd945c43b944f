package io.lastunit.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.HoldId;
import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A local platform of one cell in one region (two shard nodes), called through its router over gRPC. */
class PlatformSmokeIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    static LocalPlatform platform;
    static ManagedChannel channel;

    @BeforeAll
    static void start() throws Exception {
        platform = LocalPlatform.builder(id -> new ShardConfig.Jdbc(PG.newDatabase(id), PG.user(), PG.password(), 0))
                .cell("shared", List.of("local"), 2).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", platform.routerPort()).usePlaintext().build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (platform != null) {
            platform.close();
        }
    }

    static InventoryServiceGrpc.InventoryServiceBlockingStub stub() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        return InventoryServiceGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void reserveThroughTheRouter_reachesTheOwningShard() {
        var stub = stub();
        stub.createItem(CreateItemRequest.newBuilder().setTenantId("t").setItemId("i").setTotal(1).setHomeRegion("local").build());
        var r = stub.reserve(ReserveRequest.newBuilder().setTenantId("t").setItemId("i").setQuantity(1)
                .setIdempotencyKey("k").setBuyerId("b").setRegion("local").build());
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
    }

    @Test
    void reserveWithoutRegion_onACellOfOneRegion_isHeldInThatRegion_andItsHoldIdWorks() {
        var stub = stub();
        stub.createItem(CreateItemRequest.newBuilder().setTenantId("t").setItemId("no-region").setTotal(3)
                .setHomeRegion("local").build());

        ReserveResponse r = stub.reserve(ReserveRequest.newBuilder().setTenantId("t").setItemId("no-region")
                .setQuantity(2).setIdempotencyKey("k-no-region").setBuyerId("b").build());

        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(HoldId.decode(r.getHold().getHoldId(), "hold_id").region()).isEqualTo("local");
        assertThat(r.getHold().getRegion()).isEqualTo("local");
        // The same key with the region named is the same request: the same hold.
        assertThat(stub.reserve(ReserveRequest.newBuilder().setTenantId("t").setItemId("no-region").setQuantity(2)
                .setIdempotencyKey("k-no-region").setBuyerId("b").setRegion("local").build()).getHold().getHoldId())
                .isEqualTo(r.getHold().getHoldId());
        assertThat(stub.confirm(ConfirmRequest.newBuilder().setHoldId(r.getHold().getHoldId()).setOrderRef("o-1").build())
                .getHold().getState()).isEqualTo(HoldState.SOLD);
        var stock = stub.getStock(GetStockRequest.newBuilder().setTenantId("t").setItemId("no-region").build()).getStock();
        assertThat(stock.getSold()).isEqualTo(2);
        assertThat(stock.getAvailable()).isEqualTo(1);
    }
}
