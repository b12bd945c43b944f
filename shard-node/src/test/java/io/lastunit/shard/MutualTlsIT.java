package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.common.tls.ClientTls;
import io.lastunit.common.tls.LocalAuthority;
import io.lastunit.common.tls.MutualTls;
import io.lastunit.common.tls.Role;
import io.lastunit.common.tls.ServiceIdentity;
import io.lastunit.common.tls.TlsCredentials;
import io.lastunit.testkit.PostgresFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real shard node with mutual TLS on: who may call what is the role in the caller's certificate.
 * Refused calls change nothing: the item a refused CreateItem named does not exist afterwards, and a
 * refused TransferOut leaves the stock as it was.
 */
class MutualTlsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    static Path dir;
    static LocalAuthority ca;
    static ShardNodeHarness shard;
    static final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("lastunit-mtls-it");
        ca = LocalAuthority.create("lastunit-test-ca", Duration.ofDays(1));
        ca.writeCertificate(dir.resolve("ca.pem"));
        ca.issue(ServiceIdentity.of(Role.SHARD, "test"), Duration.ofDays(1))
                .writeTo(dir.resolve("shard.pem"), dir.resolve("shard.key"));
        shard = new ShardNodeHarness(PG, Map.of(
                "lastunit.shard.mtls-certificate", dir.resolve("shard.pem").toString(),
                "lastunit.shard.mtls-key", dir.resolve("shard.key").toString(),
                "lastunit.shard.mtls-ca", dir.resolve("ca.pem").toString(),
                "lastunit.shard.mtls-reload-interval-ms", 100)).start();
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        shard.close();
    }

    @Test
    void createItem_withoutAClientCertificate_isUnauthenticated_andCreatesNothing() {
        ManagedChannel ch = channel(ClientTls.trusting(dir.resolve("ca.pem").toFile()));
        assertRefused(() -> createItem(ch, "no-cert"), Status.Code.UNAUTHENTICATED, "needs a client certificate");
        assertAbsent("no-cert");
        // Probes need no certificate.
        HealthGrpc.newBlockingStub(ch).withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)
                .check(HealthCheckRequest.getDefaultInstance());
    }

    @Test
    void createItem_fromAnythingButARouter_isPermissionDenied_andCreatesNothing() {
        for (String role : new String[] {"balancer", "admin", "shard", "tenant"}) {
            ManagedChannel ch = as(new ServiceIdentity(role, "intruder"));
            assertRefused(() -> createItem(ch, "by-" + role), Status.Code.PERMISSION_DENIED,
                    "shard node test refuses lastunit.inventory.v1.InventoryService/CreateItem");
            assertAbsent("by-" + role);
        }
    }

    @Test
    void theRouter_createsItems_butMayNotMoveStock() {
        ManagedChannel router = as(ServiceIdentity.of(Role.ROUTER, "r1"));
        createItem(router, "lamp");
        assertRefused(() -> ShardServiceGrpc.newBlockingStub(router)
                .withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)
                .transferOut(transferOut("lamp")), Status.Code.PERMISSION_DENIED, "only balancer may");
        assertThat(stock(router, "lamp").getAvailable()).isEqualTo(10);
    }

    @Test
    void theBalancer_movesStock() {
        ManagedChannel router = as(ServiceIdentity.of(Role.ROUTER, "r1"));
        createItem(router, "kettle");
        ManagedChannel balancer = as(ServiceIdentity.of(Role.BALANCER, "b1"));
        var shardApi = ShardServiceGrpc.newBlockingStub(balancer)
                .withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS);
        assertThat(shardApi.transferOut(transferOut("kettle")).getQuantity()).isEqualTo(4);
        assertThat(shardApi.listLevels(ListLevelsRequest.newBuilder().setTenantId("acme").build()).getItemsCount())
                .isPositive();
        assertThat(stock(router, "kettle").getAvailable()).isEqualTo(6);
    }

    @Test
    void aCaAddedToTheTrustFile_admitsItsRouter_withoutARestart() throws Exception {
        LocalAuthority next = LocalAuthority.create("lastunit-next-ca", Duration.ofDays(1));
        next.issue(ServiceIdentity.of(Role.ROUTER, "r-next"), Duration.ofDays(1))
                .writeTo(dir.resolve("r-next.pem"), dir.resolve("r-next.key"));
        Path bundle = dir.resolve("bundle.pem");
        Files.writeString(bundle, Files.readString(dir.resolve("ca.pem")) + pem(next.certificate()));
        TlsCredentials router = TlsCredentials.load(new MutualTls(dir.resolve("r-next.pem").toFile(),
                dir.resolve("r-next.key").toFile(), bundle.toFile(), Duration.ofSeconds(10)));
        opened.add(router);
        // Signed by a CA the shard does not trust yet: the handshake fails.
        assertThat(createsOnANewConnection(router, "next-1")).isFalse();

        Path tmp = dir.resolve("ca.pem.tmp");
        Files.copy(bundle, tmp);
        Files.move(tmp, dir.resolve("ca.pem"), java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        org.awaitility.Awaitility.await().atMost(io.lastunit.testkit.TestTimeouts.scaled(Duration.ofSeconds(10)))
                .pollInterval(Duration.ofMillis(50)).until(() -> createsOnANewConnection(router, "next-2"));
        assertThat(shard.node().port()).isPositive(); // the same node, never restarted
    }

    private static boolean createsOnANewConnection(TlsCredentials credentials, String item) {
        ManagedChannel ch = ClientTls.mutual(credentials).applyTo(
                NettyChannelBuilder.forAddress("127.0.0.1", shard.node().port())).build();
        try {
            createItem(ch, item);
            return true;
        } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            return false;
        } finally {
            ch.shutdownNow();
        }
    }

    private static String pem(java.security.cert.X509Certificate c) throws Exception {
        return "-----BEGIN CERTIFICATE-----\n"
                + java.util.Base64.getMimeEncoder(64, "\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                .encodeToString(c.getEncoded()) + "\n-----END CERTIFICATE-----\n";
    }

    @Test
    void plaintext_isRefused() {
        assertThatThrownBy(() -> shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme")
                .setItemId("lamp").build())).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.INTERNAL));
    }

    // ---- helpers

    private static ManagedChannel as(ServiceIdentity identity) {
        String name = identity.role() + "-" + identity.name();
        ca.issue(identity, Duration.ofDays(1)).writeTo(dir.resolve(name + ".pem"), dir.resolve(name + ".key"));
        TlsCredentials c = TlsCredentials.load(new MutualTls(dir.resolve(name + ".pem").toFile(),
                dir.resolve(name + ".key").toFile(), dir.resolve("ca.pem").toFile(), Duration.ofSeconds(10)));
        opened.add(c);
        return channel(ClientTls.mutual(c));
    }

    private static ManagedChannel channel(ClientTls tls) {
        ManagedChannel ch = tls.applyTo(NettyChannelBuilder.forAddress("127.0.0.1", shard.node().port())).build();
        opened.add(ch::shutdownNow);
        return ch;
    }

    private static void createItem(ManagedChannel ch, String item) {
        InventoryServiceGrpc.newBlockingStub(ch).withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)
                .createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId(item).setTotal(10)
                        .setHomeRegion("local").build());
    }

    private static io.lastunit.api.inventory.v1.Stock stock(ManagedChannel ch, String item) {
        return InventoryServiceGrpc.newBlockingStub(ch)
                .withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)
                .getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId(item).build()).getStock();
    }

    private static TransferOutRequest transferOut(String item) {
        return TransferOutRequest.newBuilder().setTransferId("t-" + item).setTenantId("acme").setItemId(item)
                .setPeerShardId("shard-eu").setMaxQuantity(4).setMinQuantity(1).build();
    }

    /** The item does not exist: a router's GetStock answers NOT_FOUND. */
    private static void assertAbsent(String item) {
        ManagedChannel router = as(ServiceIdentity.of(Role.ROUTER, "checker"));
        assertRefused(() -> stock(router, item), Status.Code.NOT_FOUND, "");
    }

    private static void assertRefused(Runnable call, Status.Code code, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(code);
            assertThat(String.valueOf(e.getStatus().getDescription())).contains(message);
        });
    }
}
