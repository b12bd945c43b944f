package io.lastunit.common.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.tls.LocalAuthority;
import io.lastunit.common.tls.Role;
import io.lastunit.common.tls.ServiceIdentity;
import io.lastunit.common.tls.ZooKeeperKeyStore;
import io.lastunit.common.tls.ZooKeeperTls;
import io.lastunit.testkit.faults.TcpProxy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS to a real ZooKeeper server's secure client port (Netty, {@code ssl.clientAuth=need}, PEM key
 * and trust stores): a lastunit client with the right files reads and writes topology; one without
 * TLS, or with a certificate of another CA, never gets a session. Curator's {@code TestingServer}
 * opens no secure port, so the server is ZooKeeper's own embedded one, on 127.0.0.1.
 */
class ZooKeeperTlsIT {
    /** Long enough for a TLS handshake and a session on a slow machine; the refused clients wait this long. */
    static final Duration CONNECT_MAX = ZooKeeperFixture.scaled(Duration.ofSeconds(5));
    /**
     * How long a refused client is watched: a handshake on 127.0.0.1 takes milliseconds (the client
     * with the right files connects well inside it), so a session after this would be a refusal missed.
     */
    static final Duration REFUSED_WAIT = ZooKeeperFixture.scaled(Duration.ofSeconds(2));

    @TempDir
    static Path dir;
    static LocalAuthority ca;
    static ZooKeeperServerEmbedded server;
    static Properties systemBefore;
    static String secure;
    static String plain;

    @BeforeAll
    static void startServer() throws Exception {
        ca = LocalAuthority.create("zookeeper-tls-it", Duration.ofDays(1));
        ca.writeCertificate(dir.resolve("ca.pem"));
        LocalAuthority.Issued zk = ca.issue("zookeeper", null, java.time.Instant.now(), Duration.ofDays(1));
        zk.writeTo(dir.resolve("zk.pem"), dir.resolve("zk.key"));
        Path serverKeyStore = new ZooKeeperTls(dir.resolve("zk.pem").toFile(), dir.resolve("zk.key").toFile(),
                dir.resolve("ca.pem").toFile()).writeKeyStore();

        int plainPort = freePort();
        int securePort = freePort();
        Properties p = new Properties();
        p.setProperty("tickTime", String.valueOf(ZooKeeperFixture.TICK_MS));
        p.setProperty("clientPort", String.valueOf(plainPort));
        p.setProperty("clientPortAddress", "127.0.0.1");
        p.setProperty("secureClientPort", String.valueOf(securePort));
        p.setProperty("secureClientPortAddress", "127.0.0.1");
        p.setProperty("admin.enableServer", "false");
        p.setProperty("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory");
        p.setProperty("ssl.keyStore.location", serverKeyStore.toString());
        p.setProperty("ssl.keyStore.type", "PEM");
        p.setProperty("ssl.trustStore.location", dir.resolve("ca.pem").toString());
        p.setProperty("ssl.trustStore.type", "PEM");
        p.setProperty("ssl.clientAuth", "need");
        // ZooKeeper copies the settings it does not know as its own into system properties
        // (zookeeper.ssl.*, zookeeper.serverCnxnFactory): put them back after, for the next test class.
        systemBefore = (Properties) System.getProperties().clone();
        server = ZooKeeperServerEmbedded.builder().baseDir(Files.createDirectories(dir.resolve("zk")))
                .configuration(p).exitHandler(ExitHandler.LOG_ONLY).build();
        server.start(ZooKeeperFixture.scaled(Duration.ofSeconds(30)).toMillis());
        secure = "127.0.0.1:" + securePort;
        plain = "127.0.0.1:" + plainPort;
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
        if (systemBefore != null) {
            System.setProperties(systemBefore);
        }
    }

    @Test
    void aClientWithTheRightFiles_readsAndWritesTopology_overTheSecurePort() throws Exception {
        ZooKeeperTls tls = clientTls(ca, "router-1");
        ZooKeeperCredentials credentials = new ZooKeeperCredentials("lastunit", "s3cret-passw0rd");
        try (CuratorFramework c = Curators.newClient(secure, Duration.ofSeconds(5), Duration.ofSeconds(5),
                new RetryNTimes(0, 0), credentials, tls)) {
            c.start();
            assertThat(c.blockUntilConnected((int) CONNECT_MAX.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            String root = ZooKeeperFixture.newRoot() + "/lastunit";
            TopologyStore store = new TopologyStore(c, root, InstantSource.system());
            store.createCell("c1", List.of("eu"), List.of(shard("c1-eu-1", "c1")));
            store.assignTenant("acme", "c1", -1);
            assertThat(store.placement("acme").orElseThrow().value().getCell()).isEqualTo("c1");
            assertThat(c.getZookeeperClient().getZooKeeper().getClientConfig()
                    .getBoolean(org.apache.zookeeper.client.ZKClientConfig.SECURE_CLIENT)).isTrue();
        }
    }

    @Test
    void aClientWithoutTls_getsNoSession_onTheSecurePort() throws Exception {
        try (CuratorFramework c = Curators.newClient(secure, Duration.ofSeconds(5), Duration.ofSeconds(2),
                new RetryNTimes(0, 0))) {
            c.start();
            assertThat(c.blockUntilConnected((int) REFUSED_WAIT.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        }
        // and the same server answers plaintext on its plain port: the refusal is the TLS, not the server
        try (CuratorFramework c = Curators.newClient(plain, Duration.ofSeconds(5))) {
            c.start();
            assertThat(c.blockUntilConnected((int) CONNECT_MAX.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        }
    }

    @Test
    void aCertificateOfAnotherCa_failsTheHandshake_eitherWay() throws Exception {
        LocalAuthority stranger = LocalAuthority.create("stranger", Duration.ofDays(1));
        Path dirOfStranger = Files.createDirectories(dir.resolve("stranger"));
        stranger.issue(ServiceIdentity.of(Role.ROUTER, "router-9"), Duration.ofDays(1))
                .writeTo(dirOfStranger.resolve("c.pem"), dirOfStranger.resolve("c.key"));
        // it trusts the right CA, so only the server's check of its certificate can refuse it
        ZooKeeperTls tls = new ZooKeeperTls(dirOfStranger.resolve("c.pem").toFile(),
                dirOfStranger.resolve("c.key").toFile(), dir.resolve("ca.pem").toFile());
        try (CuratorFramework c = Curators.newClient(secure, Duration.ofSeconds(5), Duration.ofSeconds(2),
                new RetryNTimes(0, 0), null, tls)) {
            c.start();
            assertThat(c.blockUntilConnected((int) REFUSED_WAIT.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        }
        // a client that trusts another CA refuses the server's certificate itself
        ca.issue(ServiceIdentity.of(Role.ROUTER, "router-2"), Duration.ofDays(1))
                .writeTo(dirOfStranger.resolve("ours.pem"), dirOfStranger.resolve("ours.key"));
        stranger.writeCertificate(dirOfStranger.resolve("ca.pem"));
        ZooKeeperTls distrusting = new ZooKeeperTls(dirOfStranger.resolve("ours.pem").toFile(),
                dirOfStranger.resolve("ours.key").toFile(), dirOfStranger.resolve("ca.pem").toFile());
        try (CuratorFramework c = Curators.newClient(secure, Duration.ofSeconds(5), Duration.ofSeconds(2),
                new RetryNTimes(0, 0), null, distrusting)) {
            c.start();
            assertThat(c.blockUntilConnected((int) REFUSED_WAIT.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        }
    }

    @Test
    void aRotatedCertificate_isUsedFromTheNextConnection_withoutARestart_andABadPairIsRefused() throws Exception {
        ZooKeeperTls tls = clientTls(ca, "router-rotating");
        Path cert = tls.certificate().toPath();
        Path key = tls.key().toPath();
        LocalAuthority stranger = LocalAuthority.create("stranger-rotation", Duration.ofDays(1));
        try (TcpProxy proxy = TcpProxy.start("zookeeper-tls", new InetSocketAddress("127.0.0.1",
                Integer.parseInt(secure.substring(secure.indexOf(':') + 1))));
             CuratorFramework c = Curators.newClient("127.0.0.1:" + proxy.port(), Duration.ofSeconds(30),
                     Duration.ofSeconds(5), new RetryNTimes(0, 0), null, tls)) {
            c.start();
            assertThat(c.blockUntilConnected((int) CONNECT_MAX.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            Path keyStore = Path.of(c.getZookeeperClient().getZooKeeper().getClientConfig()
                    .getProperty(new org.apache.zookeeper.common.ClientX509Util().getSslKeystoreLocationProperty()));
            String first = Files.readString(keyStore);

            // A key that is not the certificate's: refused, the key store kept.
            long refused = ZooKeeperKeyStore.refusals();
            Path otherKey = dir.resolve("other.key");
            ca.issue(ServiceIdentity.of(Role.ROUTER, "other"), Duration.ofDays(1)).writeTo(dir.resolve("other.pem"),
                    otherKey);
            Files.copy(otherKey, key, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            ZooKeeperKeyStore.checkAll();
            assertThat(ZooKeeperKeyStore.refusals()).isEqualTo(refused + 1);
            assertThat(Files.readString(keyStore)).isEqualTo(first);

            // Rotated to a certificate the server does not trust: the open connection stays, the next is refused.
            stranger.issue(ServiceIdentity.of(Role.ROUTER, "router-rotating"), Duration.ofDays(1)).writeTo(cert, key);
            ZooKeeperKeyStore.checkAll();
            assertThat(Files.readString(keyStore)).isNotEqualTo(first).contains(Files.readString(cert));
            assertThat(c.checkExists().forPath("/")).isNotNull();
            proxy.resetAll();
            org.awaitility.Awaitility.await().atMost(CONNECT_MAX).until(() -> !c.getZookeeperClient().isConnected());
            Thread.sleep(REFUSED_WAIT.toMillis());
            assertThat(c.getZookeeperClient().isConnected()).as("reconnected with a certificate of another CA").isFalse();

            // Rotated again to one of the right CA: the client reconnects with it, no restart.
            ca.issue(ServiceIdentity.of(Role.ROUTER, "router-rotating"), Duration.ofDays(1)).writeTo(cert, key);
            ZooKeeperKeyStore.checkAll();
            assertThat(c.blockUntilConnected((int) CONNECT_MAX.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(c.checkExists().forPath("/")).isNotNull();
        }
    }

    @Test
    void settings_goTogether_andAreCheckedAtStart_namingTheSetting() throws Exception {
        String prefix = "lastunit.router.zookeeper-tls-";
        assertThat(ZooKeeperTls.fromSettings(prefix, "", " ", "")).isNull();
        ZooKeeperTls good = clientTls(ca, "router-3");
        assertThatThrownBy(() -> ZooKeeperTls.fromSettings(prefix, good.certificate().toString(), "",
                good.ca().toString()))
                .hasMessageContaining("missing: lastunit.router.zookeeper-tls-key");
        assertThatThrownBy(() -> ZooKeeperTls.fromSettings(prefix, good.certificate().toString(),
                good.key().toString(), dir.resolve("nope.pem").toString()))
                .hasMessageStartingWith(prefix + "*: ").hasMessageContaining("cannot read").hasMessageContaining("nope.pem");
        ZooKeeperTls other = clientTls(ca, "router-4");
        assertThatThrownBy(() -> ZooKeeperTls.fromSettings(prefix, good.certificate().toString(),
                other.key().toString(), good.ca().toString()))
                .hasMessageContaining("is not the key of the certificate");
        assertThatThrownBy(() -> ZooKeeperTls.fromSettings(prefix, good.key().toString(),
                good.key().toString(), good.ca().toString()))
                .hasMessageStartingWith(prefix + "*: ").hasMessageContaining("router-3.key: not PEM certificates");
    }

    @Test
    void theKeyStoreFile_holdsKeyAndChain_andOnlyItsOwnerReadsIt() throws Exception {
        Path keyStore = clientTls(ca, "router-5").writeKeyStore();
        String text = Files.readString(keyStore);
        assertThat(text).contains("-----BEGIN PRIVATE KEY-----").contains("-----BEGIN CERTIFICATE-----");
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(keyStore)))
                .isEqualTo("rw-------");
    }

    private static ZooKeeperTls clientTls(LocalAuthority authority, String name) {
        Path cert = dir.resolve(name + ".pem");
        Path key = dir.resolve(name + ".key");
        authority.issue(ServiceIdentity.of(Role.ROUTER, name), Duration.ofDays(1)).writeTo(cert, key);
        return ZooKeeperTls.fromSettings("test.", cert.toString(), key.toString(), dir.resolve("ca.pem").toString());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    private static ShardInfo shard(String id, String cell) {
        return ShardInfo.newBuilder().setShardId(id).setCell(cell).setRegion("eu").setAddress("127.0.0.1:1").build();
    }
}
