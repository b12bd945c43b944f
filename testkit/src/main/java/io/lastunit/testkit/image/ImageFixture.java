package io.lastunit.testkit.image;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The image a module's {@code *ImageIT} checks: the tarball the image-tar profile just built
 * (system property {@code lastunit.image.tar}), read once per test class, and unpacked once for
 * the tests that run it.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ImageFixture IMAGE = new ImageFixture(new LastunitImage(...));
 * }</pre>
 *
 * <p>Running the image needs root ({@link ImageContainer}). With {@code -Dlastunit.image.run=false}
 * the tests that run it are skipped, and say so; otherwise a machine where they cannot run fails
 * them with the reason. Not thread-safe: one test class, tests in sequence. {@code afterAll}
 * deletes the unpacked tree.
 */
public final class ImageFixture implements BeforeAllCallback, AfterAllCallback {
    private static final Duration HELP_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(10);

    private final LastunitImage expected;
    private LastunitImage.Build build;
    private ImageTarball image;
    private ImageContainer container;
    private Path logDir;

    public ImageFixture(LastunitImage expected) {
        this.expected = expected;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        build = LastunitImage.Build.fromSystemProperties();
        image = ImageTarball.read(Path.of(build.tar()));
        logDir = Path.of(build.tar()).getParent();
    }

    @Override
    public void afterAll(ExtensionContext context) throws IOException {
        if (container != null) {
            container.close();
            container = null;
        }
    }

    public LastunitImage expected() {
        return expected;
    }

    public ImageTarball image() {
        return image;
    }

    /** What the image breaks of docs/images.md; empty when it holds. */
    public List<String> problems() throws IOException {
        return expected.problemsIn(image, build);
    }

    /** The image unpacked, ready to run; skips the test with -Dlastunit.image.run=false. */
    public ImageContainer container() throws IOException, InterruptedException {
        Assumptions.assumeTrue(!"false".equals(System.getProperty("lastunit.image.run")),
                "-Dlastunit.image.run=false: the image is checked but not run");
        Optional<String> why = ImageContainer.whyNotRunnable();
        if (why.isPresent()) {
            throw new IllegalStateException(why.get() + "; run the image tests as root, or pass"
                    + " -Dlastunit.image.run=false to check the tarball only");
        }
        if (container == null) {
            container = ImageContainer.unpack(image, logDir.resolve(expected.name() + "-root"));
        }
        return container;
    }

    /** Runs the entrypoint with --help and waits for it: exit code and output. */
    public Help help() throws IOException, InterruptedException {
        try (ImageContainer.Running run = container().start(List.of("--help"), Map.of(), log("help"))) {
            Optional<Integer> code = run.awaitExit(TestTimeouts.scaled(HELP_TIMEOUT));
            return new Help(code.orElse(null), run.output());
        }
    }

    /** The result of {@code --help}: {@code exitCode} is null when it had not ended within its bound. */
    public record Help(Integer exitCode, String output) {
        public String firstLine() {
            return output.strip().lines().findFirst().orElse("");
        }
    }

    /**
     * The JVM's own heap sizing when the image runs under a memory limit of {@code limitBytes}, as
     * in a container with that limit: the entrypoint runs {@code --help} in a {@link MemoryCgroup}
     * with {@code JAVA_TOOL_OPTIONS=-XX:+PrintFlagsFinal} (the way an operator adds JVM flags), and
     * the flags it prints are read back.
     */
    public Jvm jvmUnderMemoryLimit(long limitBytes) throws IOException, InterruptedException {
        ImageContainer box = container();
        String out;
        try (MemoryCgroup cgroup = MemoryCgroup.create(limitBytes);
             ImageContainer.Running run = box.start(List.of("--help"), Map.of("JAVA_TOOL_OPTIONS", "-XX:+PrintFlagsFinal"),
                     log("heap"), cgroup)) {
            Optional<Integer> code = run.awaitExit(TestTimeouts.scaled(HELP_TIMEOUT));
            out = run.output();
            if (code.isEmpty() || code.get() != 0) {
                throw new AssertionError("--help under a " + limitBytes + "-byte limit: exit " + code.orElse(null)
                        + "; output:\n" + out);
            }
        }
        return new Jvm(Long.parseLong(flag(out, "size_t", "MaxHeapSize")),
                Long.parseLong(flag(out, "size_t", "InitialHeapSize")),
                "true".equals(flag(out, "bool", "UseG1GC")), "true".equals(flag(out, "bool", "UseContainerSupport")),
                "true".equals(flag(out, "bool", "ExitOnOutOfMemoryError")));
    }

    /** What the JVM chose: heap bounds in bytes (as printed), the collector, container support, the OOM exit. */
    public record Jvm(long maxHeapBytes, long initialHeapBytes, boolean g1, boolean containerSupport,
                      boolean exitOnOutOfMemory) {
    }

    private static String flag(String flagsFinal, String type, String name) {
        Matcher m = Pattern.compile("^\\s*" + type + "\\s+" + name + "\\s+:?=\\s+(\\S+)", Pattern.MULTILINE)
                .matcher(flagsFinal);
        if (!m.find()) {
            throw new AssertionError("-XX:+PrintFlagsFinal printed no " + type + " " + name + ":\n" + flagsFinal);
        }
        return m.group(1);
    }

    /**
     * Starts the image's service with {@code args} (empty: the image's own arguments) and
     * {@code env} over the image's environment, and waits for the line matching {@code started}.
     * Fails with the output when it does not come.
     */
    public Started start(List<String> args, Map<String, String> env, Pattern started)
            throws IOException, InterruptedException {
        ImageContainer.Running run = container().start(args, env, log("service"));
        try {
            Matcher m = run.awaitLine(started, TestTimeouts.scaled(START_TIMEOUT)).orElseThrow(() -> new AssertionError(
                    expected.name() + " did not print /" + started + "/ within " + TestTimeouts.scaled(START_TIMEOUT)
                            + " (exit " + run.exitCodeIfEnded() + "); its output:\n" + run.outputOrEmpty()));
            return new Started(run, m);
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            run.close();
            throw e;
        }
    }

    /** A service started from the image, with its start line matched. */
    public record Started(ImageContainer.Running run, Matcher startLine) implements AutoCloseable {
        /** SIGTERM, then its exit code within the stop bound (empty if it still runs). */
        public Optional<Integer> stop() throws InterruptedException {
            return run.stop(TestTimeouts.scaled(STOP_TIMEOUT));
        }

        @Override
        public void close() {
            run.close();
        }
    }

    /** A port free on 127.0.0.1 now, for a setting that takes a number (a health port: its start line does not name it). */
    public static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** The gRPC health status of {@code service} ({@code ""}: the whole server) on 127.0.0.1:{@code port}, plaintext. */
    public static ServingStatus health(int port, String service) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(TestTimeouts.scaled(HEALTH_TIMEOUT).toMillis(),
                    TimeUnit.MILLISECONDS).check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
        } finally {
            channel.shutdownNow();
        }
    }

    private Path log(String what) {
        return logDir.resolve(expected.name() + "-" + what + ".log");
    }
}
