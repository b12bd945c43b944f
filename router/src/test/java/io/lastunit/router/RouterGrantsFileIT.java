package io.lastunit.router;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.wiring.RouterProperties;
import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real router whose grants come from lastunit.router.tokens-file: a token added to the file is admitted without a restart. */
class RouterGrantsFileIT {
    @TempDir
    Path dir;

    @Test
    void aTokenAddedToTheFile_isAdmitted_withoutARestart() throws Exception {
        Path file = dir.resolve("grants");
        Files.writeString(file, Authenticator.sha256Hex("old-token") + ":old:*\n");
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        try (TestingServer zk = new TestingServer(spec, true)) {
            RouterProperties p = new RouterProperties();
            p.setHost("127.0.0.1");
            p.setPort(0);
            p.setZookeeper(zk.getConnectString());
            p.setTokensFile(file.toString());
            p.setTokensReloadIntervalMs(100);
            try (RouterNode router = new RouterNode(p.toConfig()).start()) {
                ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
                try {
                    assertThat(code(ch, "new-token")).isEqualTo(Status.Code.UNAUTHENTICATED);
                    assertThat(code(ch, "old-token")).isNotEqualTo(Status.Code.UNAUTHENTICATED);

                    Path tmp = dir.resolve("grants.tmp");
                    Files.writeString(tmp, Authenticator.sha256Hex("new-token") + ":new:*\n");
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

                    Awaitility.await().atMost(TestTimeouts.scaled(Duration.ofSeconds(10)))
                            .pollInterval(Duration.ofMillis(50))
                            .until(() -> code(ch, "new-token") != Status.Code.UNAUTHENTICATED);
                    assertThat(code(ch, "old-token")).isEqualTo(Status.Code.UNAUTHENTICATED);
                    assertThat(router.grantsFile().reloads()).isEqualTo(1);
                } finally {
                    ch.shutdownNow();
                }
            }
        }
    }

    /** The status of a GetStock with {@code token} (OK for a call that went through). */
    private static Status.Code code(ManagedChannel ch, String token) {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        try {
            InventoryServiceGrpc.newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                    .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                    .getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId("lamp").build());
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }
}
