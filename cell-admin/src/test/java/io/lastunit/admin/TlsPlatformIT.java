package io.lastunit.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestCertificates;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** TLS on both hops: caller → router, router → shard nodes. */
class TlsPlatformIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @Test
    void tlsEverywhere_reserveWorks_andPlaintextCallersAreRefused() throws Exception {
        TestCertificates certs = TestCertificates.selfSigned();
        String cert = certs.certificate().getPath();
        String key = certs.key().getPath();
        try (LocalPlatform p = LocalPlatform.builder(id -> new ShardConfig.Jdbc(PG.newDatabase(id), PG.user(),
                        PG.password(), 0))
                .cell("shared", List.of("local"), 2)
                .shardSetting("lastunit.shard.tls-certificate", cert)
                .shardSetting("lastunit.shard.tls-key", key)
                .routerSetting("lastunit.router.tls-certificate", cert)
                .routerSetting("lastunit.router.tls-key", key)
                .routerSetting("lastunit.router.shard-trust-certificate", cert)
                .start()) {
            Metadata md = new Metadata();
            md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
            ManagedChannel tls = NettyChannelBuilder.forAddress("127.0.0.1", p.routerPort())
                    .sslContext(GrpcSslContexts.forClient().trustManager(certs.certificate()).build()).build();
            ManagedChannel plain = NettyChannelBuilder.forAddress("127.0.0.1", p.routerPort()).usePlaintext().build();
            try {
                var stub = InventoryServiceGrpc.newBlockingStub(tls)
                        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                        .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
                stub.createItem(CreateItemRequest.newBuilder().setTenantId("t").setItemId("i").setTotal(2)
                        .setHomeRegion("local").build());
                var r = stub.reserve(ReserveRequest.newBuilder().setTenantId("t").setItemId("i").setQuantity(1)
                        .setIdempotencyKey("k").setBuyerId("b").setRegion("local").build());
                assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);

                var plainStub = InventoryServiceGrpc.newBlockingStub(plain)
                        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                        .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS);
                assertThrows(StatusRuntimeException.class, () -> plainStub.reserve(ReserveRequest.newBuilder()
                        .setTenantId("t").setItemId("i").setQuantity(1).setIdempotencyKey("k2").setBuyerId("b2")
                        .setRegion("local").build()));
            } finally {
                tls.shutdownNow();
                plain.shutdownNow();
            }
        }
    }
}
