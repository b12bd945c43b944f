package io.lastunit.common.topology;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * An in-process ZooKeeper ({@link TestingServer}) on 127.0.0.1 and clients built the way
 * services build them. Tick time {@value #TICK_MS} ms, so sessions of 1..10 s are accepted.
 * Waits scale with {@value #SCALE_PROPERTY} (common cannot use testkit's TestTimeouts: testkit
 * sits above it in the reactor).
 */
final class ZooKeeperFixture {
    static final String SCALE_PROPERTY = "lastunit.test.timeoutScale";
    static final int TICK_MS = 500;
    private static final AtomicInteger ROOTS = new AtomicInteger();

    private ZooKeeperFixture() {
    }

    static TestingServer startServer() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MS, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        return new TestingServer(spec, true);
    }

    /** A started, connected client. */
    static CuratorFramework client(TestingServer server, Duration sessionTimeout) throws InterruptedException {
        CuratorFramework client = Curators.newClient(server.getConnectString(), sessionTimeout);
        client.start();
        if (!client.blockUntilConnected((int) scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
            client.close();
            throw new IllegalStateException("no connection to " + server.getConnectString());
        }
        return client;
    }

    /** A fresh namespace root, so tests sharing a server do not see each other. */
    static String newRoot() {
        return "/it" + ROOTS.incrementAndGet();
    }

    static Duration scaled(Duration d) {
        String raw = System.getProperty(SCALE_PROPERTY);
        double scale = raw == null || raw.isBlank() ? 1.0 : Double.parseDouble(raw.trim());
        if (!(scale > 0)) {
            throw new IllegalStateException(SCALE_PROPERTY + "='" + raw + "' is not a positive number");
        }
        return Duration.ofNanos((long) (d.toNanos() * scale));
    }
}
