package io.lastunit.common.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Netty server over real TLS, guarded by {@link PeerAuthInterceptor} and an allow-list
 * (TransferOut: balancer; ListLevels: balancer, admin), with a stand-in ShardService that counts
 * the calls that reach it: a refused call must never reach it. And {@link TlsCredentials} taking
 * a rotated certificate and CA without a restart.
 */
class PeerAuthIT {
    static final Duration RELOAD = Duration.ofMillis(100);

    @TempDir
    Path dir;

    final AtomicInteger handled = new AtomicInteger();
    LocalAuthority ca;
    TlsCredentials serverCredentials;
    Server server;

    @BeforeEach
    void start() throws Exception {
        ca = LocalAuthority.create("lastunit-test-ca", Duration.ofDays(1));
        ca.writeCertificate(dir.resolve("ca.pem"));
        ca.issue(ServiceIdentity.of(Role.SHARD, "s1"), Duration.ofDays(1))
                .writeTo(dir.resolve("shard.pem"), dir.resolve("shard.key"));
        serverCredentials = TlsCredentials.load(new MutualTls(dir.resolve("shard.pem").toFile(),
                dir.resolve("shard.key").toFile(), dir.resolve("ca.pem").toFile(), RELOAD));
        AllowList list = AllowList.builder("shard node s1")
                .method(ShardServiceGrpc.getTransferOutMethod().getFullMethodName(), Role.BALANCER)
                .method(ShardServiceGrpc.getListLevelsMethod().getFullMethodName(), Role.BALANCER, Role.ADMIN)
                .build();
        HealthStatusManager health = new HealthStatusManager();
        server = NodeServer.builder("127.0.0.1", 0, health, 1 << 20)
                .sslContext(serverCredentials.forServer())
                .intercept(new PeerAuthInterceptor(list))
                .addService(new CountingShard())
                .build().start();
        NodeServer.serving(health, "");
    }

    @AfterEach
    void stop() {
        server.shutdownNow();
        serverCredentials.close();
    }

    @Test
    void noClientCertificate_isUnauthenticated_andNeverHandled() throws Exception {
        ManagedChannel ch = channel(ClientTls.trusting(dir.resolve("ca.pem").toFile()));
        try {
            assertCode(() -> transferOut(ch), Status.Code.UNAUTHENTICATED, "needs a client certificate");
            assertThat(handled).hasValue(0);
            // Health stays open without a certificate (probes have none).
            HealthCheckResponse h = HealthGrpc.newBlockingStub(ch).withDeadlineAfter(deadlineMs(), TimeUnit.MILLISECONDS)
                    .check(HealthCheckRequest.getDefaultInstance());
            assertThat(h.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    void plaintext_isRefused() {
        ManagedChannel ch = channel(ClientTls.PLAINTEXT);
        try {
            assertThatThrownBy(() -> transferOut(ch)).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> assertThat(e.getStatus().getCode()).isIn(Status.Code.UNAVAILABLE, Status.Code.INTERNAL));
            assertThat(handled).hasValue(0);
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    void wrongRole_unknownRole_orNoIdentity_isPermissionDenied_andNeverHandled() throws Exception {
        for (String role : new String[] {"router", "admin", "tenant"}) {
            try (Client c = client(new ServiceIdentity(role, "x"))) {
                assertCode(() -> transferOut(c.channel), Status.Code.PERMISSION_DENIED,
                        "refuses lastunit.shard.v1.ShardService/TransferOut from spiffe://lastunit/" + role + "/x");
            }
        }
        try (Client c = client(null)) {
            assertCode(() -> transferOut(c.channel), Status.Code.PERMISSION_DENIED, "names no lastunit identity");
        }
        assertThat(handled).hasValue(0);
    }

    @Test
    void rightRole_isServed() throws Exception {
        try (Client balancer = client(ServiceIdentity.of(Role.BALANCER, "b1"));
             Client admin = client(ServiceIdentity.of(Role.ADMIN, "cli"))) {
            transferOut(balancer.channel);
            listLevels(balancer.channel);
            listLevels(admin.channel);
            assertCode(() -> transferOut(admin.channel), Status.Code.PERMISSION_DENIED, "only balancer may");
        }
        assertThat(handled).hasValue(3);
    }

    @Test
    void rotatedServerCertificate_isServed_withoutRestart() throws Exception {
        LocalAuthority next = LocalAuthority.create("lastunit-next-ca", Duration.ofDays(1));
        next.writeCertificate(dir.resolve("next-ca.pem"));
        ca.issue(ServiceIdentity.of(Role.BALANCER, "b1"), Duration.ofDays(1))
                .writeTo(dir.resolve("b1.pem"), dir.resolve("b1.key"));
        // The balancer trusts only the next CA: the server's current certificate fails its handshake.
        try (TlsCredentials balancer = TlsCredentials.load(new MutualTls(dir.resolve("b1.pem").toFile(),
                dir.resolve("b1.key").toFile(), dir.resolve("next-ca.pem").toFile(), RELOAD))) {
            assertCode(() -> oneShot(ClientTls.mutual(balancer)), Status.Code.UNAVAILABLE, "");

            next.issue(ServiceIdentity.of(Role.SHARD, "s1"), Duration.ofDays(1))
                    .writeTo(dir.resolve("shard.pem"), dir.resolve("shard.key"));

            await(() -> succeeds(ClientTls.mutual(balancer)));
            assertThat(serverCredentials.reloads()).isEqualTo(1);
        }
    }

    @Test
    void rotatedTrust_admitsTheNewCasClients_withoutRestart() throws Exception {
        LocalAuthority next = LocalAuthority.create("lastunit-next-ca", Duration.ofDays(1));
        next.issue(ServiceIdentity.of(Role.BALANCER, "b2"), Duration.ofDays(1))
                .writeTo(dir.resolve("b2.pem"), dir.resolve("b2.key"));
        try (TlsCredentials b2 = TlsCredentials.load(new MutualTls(dir.resolve("b2.pem").toFile(),
                dir.resolve("b2.key").toFile(), dir.resolve("ca.pem").toFile(), RELOAD))) {
            // Signed by a CA the server does not trust yet: the handshake fails.
            assertCode(() -> oneShot(ClientTls.mutual(b2)), Status.Code.UNAVAILABLE, "");

            Files.writeString(dir.resolve("ca.pem.new"), Files.readString(dir.resolve("ca.pem"))
                    + pem(next.certificate()));
            Files.move(dir.resolve("ca.pem.new"), dir.resolve("ca.pem"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);

            await(() -> succeeds(ClientTls.mutual(b2)));
        }
        assertThat(handled.get()).isPositive();
    }

    @Test
    void aBrokenRotation_keepsTheCredentialsInUse_andIsCounted() throws Exception {
        ServiceIdentity before = serverCredentials.identity();
        // A new certificate whose key has not been written yet: a rotation caught half-way.
        ca.issue(ServiceIdentity.of(Role.SHARD, "s1-new"), Duration.ofDays(1))
                .writeTo(dir.resolve("shard.pem"), dir.resolve("other.key"));
        assertThat(serverCredentials.reloadNow()).isFalse();
        assertThat(serverCredentials.lastFailure()).hasValueSatisfying(m -> assertThat(m)
                .contains("is not the key of the certificate"));
        assertThat(serverCredentials.reloadFailures()).isEqualTo(1);
        assertThat(serverCredentials.identity()).isEqualTo(before);
        // An expired certificate is refused too.
        ca.issue("s1-old", ServiceIdentity.of(Role.SHARD, "s1-old"), Instant.now().minus(Duration.ofDays(3)),
                Duration.ofDays(1)).writeTo(dir.resolve("shard.pem"), dir.resolve("shard.key"));
        assertThat(serverCredentials.reloadNow()).isFalse();
        assertThat(serverCredentials.lastFailure()).hasValueSatisfying(m -> assertThat(m).contains("not now"));
        try (Client balancer = client(ServiceIdentity.of(Role.BALANCER, "b1"))) {
            transferOut(balancer.channel);
        }
        assertThat(serverCredentials.identity()).isEqualTo(before);
    }

    // ---- helpers

    private final class CountingShard extends ShardServiceGrpc.ShardServiceImplBase {
        @Override
        public void transferOut(TransferOutRequest request, StreamObserver<Transfer> out) {
            handled.incrementAndGet();
            out.onNext(Transfer.getDefaultInstance());
            out.onCompleted();
        }

        @Override
        public void listLevels(ListLevelsRequest request, StreamObserver<ListLevelsResponse> out) {
            handled.incrementAndGet();
            out.onNext(ListLevelsResponse.getDefaultInstance());
            out.onCompleted();
        }
    }

    /** A client with a certificate for {@code identity} (none in the certificate when null), trusting the CA. */
    private Client client(ServiceIdentity identity) {
        String name = identity == null ? "anonymous" : identity.role() + "-" + identity.name();
        ca.issue(name, identity, Instant.now(), Duration.ofDays(1))
                .writeTo(dir.resolve(name + ".pem"), dir.resolve(name + ".key"));
        if (identity == null) {
            // TlsCredentials refuses a certificate without an identity: dial with a plain Netty context.
            try {
                var ctx = io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts.forClient()
                        .keyManager(dir.resolve(name + ".pem").toFile(), dir.resolve(name + ".key").toFile())
                        .trustManager(dir.resolve("ca.pem").toFile()).build();
                return new Client(null, NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                        .sslContext(ctx).build());
            } catch (javax.net.ssl.SSLException e) {
                throw new IllegalStateException(e);
            }
        }
        TlsCredentials c = TlsCredentials.load(new MutualTls(dir.resolve(name + ".pem").toFile(),
                dir.resolve(name + ".key").toFile(), dir.resolve("ca.pem").toFile(), RELOAD));
        return new Client(c, channel(ClientTls.mutual(c)));
    }

    private record Client(TlsCredentials credentials, ManagedChannel channel) implements AutoCloseable {
        @Override
        public void close() {
            channel.shutdownNow();
            if (credentials != null) {
                credentials.close();
            }
        }
    }

    private ManagedChannel channel(ClientTls tls) {
        return tls.applyTo(NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())).build();
    }

    /** TransferOut on a channel of its own (a new handshake), closed after. */
    private void oneShot(ClientTls tls) {
        ManagedChannel ch = channel(tls);
        try {
            transferOut(ch);
        } finally {
            ch.shutdownNow();
        }
    }

    private boolean succeeds(ClientTls tls) {
        try {
            oneShot(tls);
            return true;
        } catch (StatusRuntimeException e) {
            return false;
        }
    }

    private static void transferOut(ManagedChannel ch) {
        ShardServiceGrpc.newBlockingStub(ch).withDeadlineAfter(deadlineMs(), TimeUnit.MILLISECONDS)
                .transferOut(TransferOutRequest.getDefaultInstance());
    }

    private static void listLevels(ManagedChannel ch) {
        ShardServiceGrpc.newBlockingStub(ch).withDeadlineAfter(deadlineMs(), TimeUnit.MILLISECONDS)
                .listLevels(ListLevelsRequest.getDefaultInstance());
    }

    private static void assertCode(Runnable call, Status.Code code, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(code);
            assertThat(String.valueOf(e.getStatus().getDescription())).contains(message);
        });
    }

    private static void await(java.util.concurrent.Callable<Boolean> condition) {
        Awaitility.await().atMost(TestTimeouts.scaled(Duration.ofSeconds(10)))
                .pollInterval(Duration.ofMillis(50)).until(condition);
    }

    private static long deadlineMs() {
        return TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();
    }

    private static String pem(java.security.cert.X509Certificate c) throws Exception {
        return "-----BEGIN CERTIFICATE-----\n"
                + java.util.Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(c.getEncoded())
                + "\n-----END CERTIFICATE-----\n";
    }
}
