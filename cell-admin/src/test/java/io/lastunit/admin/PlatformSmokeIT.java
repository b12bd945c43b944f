package io.lastunit.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class PlatformSmokeIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @Test
    void reserveThroughTheRouter_reachesTheOwningShard() throws Exception {
        try (LocalPlatform p = LocalPlatform.builder(id -> new ShardConfig.Jdbc(PG.newDatabase(id), PG.user(),
                PG.password(), 0)).cell("shared", List.of("local"), 2).start()) {
            Metadata md = new Metadata();
            md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", p.routerPort()).usePlaintext().build();
            var stub = InventoryServiceGrpc.newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                    .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            stub.createItem(CreateItemRequest.newBuilder().setTenantId("t").setItemId("i").setTotal(1).setHomeRegion("local").build());
            var r = stub.reserve(ReserveRequest.newBuilder().setTenantId("t").setItemId("i").setQuantity(1)
                    .setIdempotencyKey("k").setBuyerId("b").setRegion("local").build());
            assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            ch.shutdownNow();
        }
    }
}
