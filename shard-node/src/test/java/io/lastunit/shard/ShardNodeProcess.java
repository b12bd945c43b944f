package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.testkit.TestTimeouts;
import java.io.File;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A shard node running as its own JVM from the packaged jar, as in production, for the faults a
 * process in the test's own JVM cannot take: kill -9, SIGSTOP. Settings are {@code -D} system
 * properties ({@code lastunit.shard.*}); its output goes to {@code target/<name>-node.log}.
 * Closing kills it (SIGKILL) and shuts its channel down.
 */
public final class ShardNodeProcess implements AutoCloseable {
    private final Process process;
    private final int port;
    private final ManagedChannel channel;
    private final Path log;

    private ShardNodeProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
        this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    }

    /** Starts the node on a free port with these settings and waits until it serves. */
    public static ShardNodeProcess start(String name, Map<String, String> settings) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path basedir = Path.of(System.getProperty("basedir", "."));
        Path jar = basedir.resolve("target/lastunit-shard-node.jar");
        assertThat(Files.exists(jar)).as(jar + " is built by `mvn package` before the integration tests").isTrue();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-Dlastunit.shard.port=" + port);
        settings.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.addAll(List.of("-jar", jar.toString(), "serve"));
        Path log = basedir.resolve("target/" + name + "-node.log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ShardNodeProcess node = new ShardNodeProcess(p, port, log);
        try {
            node.awaitServing();
        } catch (Throwable t) {
            node.close();
            throw t;
        }
        return node;
    }

    private void awaitServing() throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(60)).toNanos();
        while (System.nanoTime() < deadline) {
            assertThat(process.isAlive()).as("node process is running (see " + log + ")").isTrue();
            try {
                HealthCheckResponse r = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance());
                if (r.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new AssertionError("shard node process did not start serving in time (see " + log + ")");
    }

    public long pid() {
        return process.pid();
    }

    public int port() {
        return port;
    }

    public InventoryServiceGrpc.InventoryServiceBlockingStub blocking() {
        return InventoryServiceGrpc.newBlockingStub(channel);
    }

    public InventoryServiceGrpc.InventoryServiceFutureStub async() {
        return InventoryServiceGrpc.newFutureStub(channel);
    }

    /** SIGKILL: no shutdown hook, no draining; waits (bounded) until it is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
    }

    public File logFile() {
        return log.toFile();
    }

    @Override
    public void close() throws InterruptedException {
        kill();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
