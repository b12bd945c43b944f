package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestCertificates;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A shard node with certificates configured serves TLS only. */
class TlsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @Test
    void nodeWithCertificates_servesTls_andRefusesPlaintext() throws Exception {
        TestCertificates certs = TestCertificates.selfSigned();
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of(
                "lastunit.shard.tls-certificate", certs.certificate().getPath(),
                "lastunit.shard.tls-key", certs.key().getPath())).start()) {
            ManagedChannel tls = NettyChannelBuilder.forAddress("127.0.0.1", shard.node().port())
                    .sslContext(GrpcSslContexts.forClient().trustManager(certs.certificate()).build()).build();
            try {
                var created = InventoryServiceGrpc.newBlockingStub(tls)
                        .withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)
                        .createItem(CreateItemRequest.newBuilder().setTenantId("t").setItemId("secure").setTotal(3)
                                .setHomeRegion("local").build());
                assertThat(created.getStock().getTotal()).isEqualTo(3);
            } finally {
                tls.shutdownNow();
            }
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> shard.blocking()
                    .withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)
                    .createItem(CreateItemRequest.newBuilder().setTenantId("t").setItemId("plain").setTotal(3)
                            .setHomeRegion("local").build()));
            assertThat(e.getStatus().getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.INTERNAL);
        }
    }
}
