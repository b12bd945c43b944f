package io.lastunit.bench.chaos;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One shard node of a chaos run as its own JVM, from the packaged shard-node jar ({@code java -jar
 * lastunit-shard-node.jar serve}, settings as {@code -D} properties), so that it can be paused
 * (SIGSTOP) and killed with SIGKILL, and started again on the same port, database and settings.
 * Its output goes to a log file beside the run's. Not thread-safe: one fault at a time.
 *
 * <p>Hazard: a JVM left running outlives the run; {@link #close()} ends it (SIGTERM, then SIGKILL
 * after {@link #STOP_WAIT}), a JVM shutdown hook kills it if the run is stopped first (Ctrl-C),
 * and a node left stopped by a pause is resumed by the pause's heal, which the run always calls.
 */
final class ShardProcess implements AutoCloseable {
    /** The jar, unless {@code -Dlastunit.shard.jar} names it: from the repository root or from bench/. */
    static final List<Path> JAR_CANDIDATES = List.of(Path.of("shard-node/target/lastunit-shard-node.jar"),
            Path.of("../shard-node/target/lastunit-shard-node.jar"));
    static final Duration START_WAIT = Duration.ofSeconds(90);
    static final Duration STOP_WAIT = Duration.ofSeconds(20);

    private final String shardId;
    private final List<String> command;
    private final File log;
    private final ManagedChannel health;
    private final Thread killOnExit = new Thread(this::killNow, "chaos-shard-process-kill");
    private volatile Process process;
    private int starts;

    private ShardProcess(String shardId, List<String> command, File log, int port) {
        this.shardId = shardId;
        this.command = List.copyOf(command);
        this.log = log;
        this.health = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    }

    /** Starts the node with these settings ({@code lastunit.shard.*}) and waits until it serves. */
    static ShardProcess start(String shardId, Map<String, Object> settings, Path logDirectory) throws IOException {
        Path jar = jar();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx384m");
        settings.forEach((k, v) -> cmd.add("-D" + k + "=" + (v instanceof Collection<?> c
                ? String.join(",", c.stream().map(String::valueOf).toList()) : v)));
        cmd.addAll(List.of("-jar", jar.toString(), "serve"));
        File log = logDirectory.resolve("lastunit-chaos-" + ProcessHandle.current().pid() + "-" + shardId + ".log")
                .toFile();
        ShardProcess p = new ShardProcess(shardId, cmd, log, ((Number) settings.get("lastunit.shard.port")).intValue());
        // A run stopped by Ctrl-C must not leave the JVM behind (stopped, perhaps): SIGKILL it.
        Runtime.getRuntime().addShutdownHook(p.killOnExit);
        try {
            p.startAgain();
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
        return p;
    }

    private static Path jar() throws IOException {
        String given = System.getProperty("lastunit.shard.jar");
        if (given != null) {
            return Path.of(given);
        }
        for (Path p : JAR_CANDIDATES) {
            if (Files.isRegularFile(p)) {
                return p.toAbsolutePath();
            }
        }
        throw new IOException("no shard-node jar at " + JAR_CANDIDATES + " (build it: mvn -pl shard-node -am package"
                + " -DskipTests), nor -Dlastunit.shard.jar");
    }

    /** Starts the JVM (again, after {@link #kill9}) and waits, bounded, until it serves. */
    void startAgain() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("shard " + shardId + " runs already as pid " + process.pid());
        }
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
        b.redirectOutput(starts++ == 0 ? ProcessBuilder.Redirect.to(log) : ProcessBuilder.Redirect.appendTo(log));
        process = b.start();
        long deadline = System.nanoTime() + START_WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("shard " + shardId + " exited with " + process.exitValue() + " at its start (see "
                        + log + ")");
            }
            try {
                HealthCheckResponse r = HealthGrpc.newBlockingStub(health).withDeadlineAfter(1, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance());
                if (r.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // not listening yet
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while shard " + shardId + " started", e);
            }
        }
        throw new IOException("shard " + shardId + " did not serve within " + START_WAIT.toSeconds() + " s (see " + log
                + ")");
    }

    /** The running JVM's pid. */
    long pid() {
        if (process == null || !process.isAlive()) {
            throw new IllegalStateException("shard " + shardId + " is not running");
        }
        return process.pid();
    }

    /** SIGKILL: no shutdown hook, no draining; returns once it is gone (bounded). */
    void kill9() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            if (!process.waitFor(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("shard " + shardId + " (pid " + process.pid() + ") survived SIGKILL for "
                        + STOP_WAIT.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    File log() {
        return log;
    }

    private void killNow() {
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
        }
    }

    /** SIGTERM (the node drains and leaves ZooKeeper), then SIGKILL if it has not ended in time. Idempotent. */
    @Override
    public void close() {
        try {
            if (process != null && process.isAlive()) {
                process.destroy();
                if (!process.waitFor(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    kill9();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill9();
        } finally {
            health.shutdownNow();
            try {
                Runtime.getRuntime().removeShutdownHook(killOnExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs, or ran: the process is killed either way
            }
        }
    }
}
