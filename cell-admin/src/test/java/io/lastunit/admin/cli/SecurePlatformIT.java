package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.ListMovesRequest;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.balancer.v1.BalancerServiceGrpc;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.common.tls.ClientTls;
import io.lastunit.common.tls.LocalAuthority;
import io.lastunit.common.tls.MutualTls;
import io.lastunit.common.tls.Role;
import io.lastunit.common.tls.ServiceIdentity;
import io.lastunit.common.tls.TlsCredentials;
import io.lastunit.common.tls.ZooKeeperTls;
import io.lastunit.common.topology.Curators;
import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A secure local platform ({@code up --secure}'s): the sale works end to end over mutual TLS, the
 * admin commands work with {@code --secure-dir}, and every door refuses the wrong caller: the admin
 * API a router's certificate or none, the balancer an admin's, ZooKeeper a client without TLS, with
 * a certificate of another CA, or without the credentials.
 */
class SecurePlatformIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    static Path dir;
    static LocalPlatform platform;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("lastunit-secure-it");
        platform = LocalPlatform.builder(id -> new ShardConfig.Jdbc(PG.newDatabase(id), PG.user(), PG.password(), 0))
                .cell("shared", List.of("local"), 2)
                .secure(dir)
                .start();
    }

    @AfterAll
    static void stop() {
        if (platform != null) {
            platform.close();
        }
    }

    @Test
    void aSale_goesThroughTheRouter_toMutualTlsShards() {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", platform.routerPort()).usePlaintext().build();
        try {
            var api = InventoryServiceGrpc.newBlockingStub(ch).withInterceptors(devToken())
                    .withDeadlineAfter(deadlineMs(), TimeUnit.MILLISECONDS);
            api.createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("lamp").setTotal(3)
                    .setHomeRegion("local").build());
            var r = api.reserve(ReserveRequest.newBuilder().setTenantId("acme").setItemId("lamp").setQuantity(1)
                    .setIdempotencyKey("k1").setBuyerId("b1").setRegion("local").build());
            assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    void adminCheck_andTop_workWithTheSecureDir_andCheckFailsWithout() {
        CliRun check = CliRun.of("admin", "--zookeeper", platform.zookeeper(), "--secure-dir", dir.toString(), "check");
        assertThat(check.exitCode()).as(check.out() + check.err()).isZero();
        assertThat(check.out()).contains("OK");

        CliRun top = CliRun.of("top", "--once", "--interval", "1", "--zookeeper", platform.zookeeper(),
                "--secure-dir", dir.toString());
        assertThat(top.exitCode()).as(top.err()).isZero();
        assertThat(top.out()).contains("shared-local-1");

        CliRun acls = CliRun.of("admin", "--zookeeper", platform.zookeeper(), "--secure-dir", dir.toString(),
                "acls", "apply");
        assertThat(acls.exitCode()).as(acls.err()).isZero();
        assertThat(acls.out()).contains("are lastunit's only (user lastunit)");

        // Without TLS ZooKeeper gives no session; with a certificate but not the credentials, NoAuth.
        CliRun blind = CliRun.of("admin", "--zookeeper", platform.zookeeper(), "check");
        assertThat(blind.exitCode()).as(blind.out()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(blind.err()).contains("serves TLS only", "--secure-dir");
        MutualTls router = platform.credentials().service(Role.ROUTER, "router-1");
        CliRun noCredentials = CliRun.of("admin", "--zookeeper", platform.zookeeper(), "--zookeeper-tls-cert",
                router.certificate().getPath(), "--zookeeper-tls-key", router.key().getPath(), "--zookeeper-tls-ca",
                router.ca().getPath(), "check");
        assertThat(noCredentials.exitCode()).as(noCredentials.out()).isEqualTo(ExitCodes.USAGE);
        assertThat(noCredentials.err()).contains("NoAuth", "--secure-dir");
    }

    @Test
    void theAdminApi_refusesARoutersCertificate_andNone_andStartsNoMove() throws Exception {
        MutualTls routerFiles = platform.credentials().service(Role.ROUTER, "router-1");
        try (TlsCredentials router = TlsCredentials.readOnce(routerFiles, java.time.InstantSource.system());
             TlsCredentials admin = TlsCredentials.readOnce(platform.credentials().admin(),
                     java.time.InstantSource.system())) {
            StartMoveRequest start = StartMoveRequest.newBuilder().setTenantId("acme").setToCell("shared").build();
            assertRefused(() -> adminApi(ClientTls.mutual(router)).startMove(start), Status.Code.PERMISSION_DENIED,
                    "admin server refuses lastunit.admin.v1.AdminService/StartMove from spiffe://lastunit/router/router-1");
            assertRefused(() -> adminApi(ClientTls.trusting(routerFiles.ca())).startMove(start),
                    Status.Code.UNAUTHENTICATED, "needs a client certificate");
            assertThat(adminApi(ClientTls.mutual(admin)).listMoves(ListMovesRequest.getDefaultInstance())
                    .getMovesCount()).isZero();
        }
    }

    @Test
    void theBalancer_refusesAnAdminsPull() throws Exception {
        try (TlsCredentials admin = TlsCredentials.readOnce(platform.credentials().admin(),
                java.time.InstantSource.system())) {
            ManagedChannel ch = ClientTls.mutual(admin).applyTo(NettyChannelBuilder.forTarget(
                    platform.balancers().get(0).address())).build();
            try {
                assertRefused(() -> BalancerServiceGrpc.newBlockingStub(ch)
                                .withDeadlineAfter(deadlineMs(), TimeUnit.MILLISECONDS).pull(PullRequest.getDefaultInstance()),
                        Status.Code.PERMISSION_DENIED, "only router may");
            } finally {
                ch.shutdownNow();
            }
        }
    }

    @Test
    void zooKeeper_servesTlsOnly_andRefusesAClientWithoutTheCredentials() throws Exception {
        try (CuratorFramework plain = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(5),
                Duration.ofSeconds(2), new RetryNTimes(0, 0))) {
            plain.start();
            // A handshake on 127.0.0.1 takes milliseconds: a session after this long would be a refusal missed.
            assertThat(plain.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(2)).toMillis(),
                    TimeUnit.MILLISECONDS)).as("a plaintext client gets no session").isFalse();
        }
        LocalAuthority otherCa = LocalAuthority.create("stranger", Duration.ofDays(1));
        Path strangerDir = Files.createDirectories(dir.resolve("stranger"));
        otherCa.issue(ServiceIdentity.of(Role.ROUTER, "router-9"), Duration.ofDays(1))
                .writeTo(strangerDir.resolve("c.pem"), strangerDir.resolve("c.key"));
        ZooKeeperTls foreign = new ZooKeeperTls(strangerDir.resolve("c.pem").toFile(),
                strangerDir.resolve("c.key").toFile(), platform.credentials().zookeeperServer().ca());
        try (CuratorFramework other = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(5),
                Duration.ofSeconds(2), new RetryNTimes(0, 0), null, foreign)) {
            other.start();
            assertThat(other.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(2)).toMillis(),
                    TimeUnit.MILLISECONDS)).as("a certificate of another CA gets no session").isFalse();
        }
        try (CuratorFramework stranger = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(5),
                Duration.ofSeconds(5), new RetryNTimes(0, 0), null,
                platform.credentials().zookeeperClient(Role.ROUTER, "router-1"))) {
            stranger.start();
            assertThat(stranger.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(),
                    TimeUnit.MILLISECONDS)).isTrue();
            assertThatThrownBy(() -> stranger.getChildren().forPath("/lastunit/cells"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> stranger.create().forPath("/lastunit/cells/evil"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
        }
    }

    private static AdminServiceGrpc.AdminServiceBlockingStub adminApi(ClientTls tls) {
        ManagedChannel ch = tls.applyTo(NettyChannelBuilder.forAddress("127.0.0.1", platform.adminPort())).build();
        opened.add(ch);
        return AdminServiceGrpc.newBlockingStub(ch).withInterceptors(devToken())
                .withDeadlineAfter(deadlineMs(), TimeUnit.MILLISECONDS);
    }

    static final List<ManagedChannel> opened = new java.util.concurrent.CopyOnWriteArrayList<>();

    @AfterAll
    static void closeChannels() {
        opened.forEach(ManagedChannel::shutdownNow);
    }

    private static io.grpc.ClientInterceptor devToken() {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        return MetadataUtils.newAttachHeadersInterceptor(md);
    }

    private static void assertRefused(Runnable call, Status.Code code, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(code);
            assertThat(String.valueOf(e.getStatus().getDescription())).contains(message);
        });
    }

    private static long deadlineMs() {
        return TestTimeouts.scaled(Duration.ofSeconds(20)).toMillis();
    }
}
