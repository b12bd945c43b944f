package io.lastunit.admin.platform;

import io.lastunit.common.local.OwnedTempDirectory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

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
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    private final TestingServer server;
    private final OwnedTempDirectory directory;

    private EmbeddedZooKeeper(TestingServer server, OwnedTempDirectory directory) {
        this.server = server;
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

    public String connectString() {
        return server.getConnectString();
    }

    public int port() {
        return server.getPort();
    }

    /** The server itself, for tests that restart or stop it. */
    public TestingServer server() {
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
            server.close();
        } finally {
            directory.close();
        }
    }
}
