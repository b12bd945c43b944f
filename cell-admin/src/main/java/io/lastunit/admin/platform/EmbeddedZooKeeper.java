package io.lastunit.admin.platform;

import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.common.tls.ZooKeeperTls;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * The ZooKeeper server of a local platform, in this process (curator-test's {@link TestingServer}),
 * listening on 127.0.0.1 only. Its topology is in memory as far as anyone should care: the files
 * behind it are temporary.
 *
 * <p>Those files live in one {@link OwnedTempDirectory}: the data directory, and the
 * {@code zookeeper.configuration*.properties} file that ZooKeeper's embedded server writes next to
 * its data directory on every start (by default that is {@code java.io.tmpdir} itself, and nothing
 * deletes it). {@link #close()} deletes the directory; a JVM killed before it could is cleaned up by
 * the next start. Not thread-safe; start and close from one thread.
 *
 * <p>A secure one ({@link #startSecure}) is ZooKeeper's own embedded server instead (curator-test
 * opens no secure port), with only a TLS client port: Netty, the server's certificate, and
 * {@code ssl.clientAuth=need} against the given CA, so a client without a certificate of that CA
 * gets no session. Hazard: ZooKeeper copies the settings it does not know into JVM-wide system
 * properties ({@code zookeeper.ssl.*}, {@code zookeeper.serverCnxnFactory}); {@link #close()}
 * puts back the ones it changed, and lastunit's clients take their TLS settings per client, never
 * from those properties.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    /** How long a secure server may take to start. */
    static final Duration SECURE_START_MAX = Duration.ofSeconds(30);

    private final TestingServer server;
    private final ZooKeeperServerEmbedded secure;
    private final int port;
    private final Map<String, String> propertiesBefore;
    private final OwnedTempDirectory directory;

    private EmbeddedZooKeeper(TestingServer server, OwnedTempDirectory directory) {
        this.server = server;
        this.secure = null;
        this.port = server.getPort();
        this.propertiesBefore = Map.of();
        this.directory = directory;
    }

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded secure, int port, Map<String, String> propertiesBefore,
                              OwnedTempDirectory directory) {
        this.server = null;
        this.secure = secure;
        this.port = port;
        this.propertiesBefore = propertiesBefore;
        this.directory = directory;
    }

    /**
     * Cleans up what killed JVMs left in {@code stateDirectory} (one line each to {@code report}),
     * then starts a server on {@code port} of 127.0.0.1 (-1: a free one).
     */
    public static EmbeddedZooKeeper start(int port, Path stateDirectory, Consumer<String> report) throws Exception {
        OwnedTempDirectory.reapOrphans(stateDirectory, OwnedTempDirectory.SERVER_STOP_WAIT).forEach(report);
        OwnedTempDirectory dir = OwnedTempDirectory.create(stateDirectory, "zookeeper", null);
        try {
            // clientPortAddress: without it ZooKeeper listens on every interface.
            InstanceSpec spec = new InstanceSpec(dir.path().resolve("data").toFile(), port, -1, -1, true, -1, -1, -1,
                    Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
            return new EmbeddedZooKeeper(new TestingServer(spec, true), dir);
        } catch (Exception e) {
            try {
                dir.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Cleans up as {@link #start} does, then starts a server whose only client port is TLS, on
     * {@code port} of 127.0.0.1 (-1: a free one), with {@code tls}'s certificate and key as its own
     * and its CA as the only one whose client certificates it admits.
     */
    public static EmbeddedZooKeeper startSecure(int port, Path stateDirectory, Consumer<String> report,
                                                ZooKeeperTls tls) throws Exception {
        OwnedTempDirectory.reapOrphans(stateDirectory, OwnedTempDirectory.SERVER_STOP_WAIT).forEach(report);
        OwnedTempDirectory dir = OwnedTempDirectory.create(stateDirectory, "zookeeper", null);
        Map<String, String> before = zookeeperProperties();
        try {
            int securePort = port > 0 ? port : freePort();
            Path keyStore = tls.writeKeyStore();
            Properties p = new Properties();
            p.setProperty("tickTime", "2000");
            p.setProperty("secureClientPort", String.valueOf(securePort));
            p.setProperty("secureClientPortAddress", "127.0.0.1");
            p.setProperty("admin.enableServer", "false");
            p.setProperty("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory");
            p.setProperty("ssl.keyStore.location", keyStore.toString());
            p.setProperty("ssl.keyStore.type", "PEM");
            p.setProperty("ssl.trustStore.location", tls.ca().getAbsolutePath());
            p.setProperty("ssl.trustStore.type", "PEM");
            p.setProperty("ssl.clientAuth", "need");
            ZooKeeperServerEmbedded zk = ZooKeeperServerEmbedded.builder()
                    .baseDir(Files.createDirectories(dir.path().resolve("server"))).configuration(p)
                    .exitHandler(ExitHandler.LOG_ONLY).build();
            try {
                zk.start(SECURE_START_MAX.toMillis());
            } catch (Exception | Error e) {
                zk.close();
                throw e;
            }
            return new EmbeddedZooKeeper(zk, securePort, before, dir);
        } catch (Exception e) {
            restore(before);
            try {
                dir.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** Where clients connect: 127.0.0.1 and the (TLS, for a secure server) client port. */
    public String connectString() {
        return secure == null ? server.getConnectString() : "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** Whether the client port is TLS only. */
    public boolean isSecure() {
        return secure != null;
    }

    /**
     * The server itself, for tests that restart or stop it.
     *
     * @throws IllegalStateException for a secure server (not a {@link TestingServer})
     */
    public TestingServer server() {
        if (server == null) {
            throw new IllegalStateException("a secure embedded ZooKeeper is not a TestingServer");
        }
        return server;
    }

    /** Where its files are (deleted on close). */
    public Path directory() {
        return directory.path();
    }

    /** Stops the server and deletes its files. */
    @Override
    public void close() throws IOException {
        try {
            if (server != null) {
                server.close();
            } else {
                secure.close();
                restore(propertiesBefore);
            }
        } finally {
            directory.close();
        }
    }

    /** The JVM's {@code zookeeper.*} system properties now. */
    private static Map<String, String> zookeeperProperties() {
        Map<String, String> out = new HashMap<>();
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("zookeeper.")) {
                out.put(name, System.getProperty(name));
            }
        }
        return out;
    }

    /** Puts the {@code zookeeper.*} system properties back as they were in {@code before}. */
    private static void restore(Map<String, String> before) {
        for (String name : zookeeperProperties().keySet()) {
            if (!before.containsKey(name)) {
                System.clearProperty(name);
            }
        }
        before.forEach(System::setProperty);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }
}
