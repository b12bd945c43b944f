package io.lastunit.admin.platform;

import io.lastunit.common.local.OwnedTempDirectory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus server (the {@code prometheus} binary on the PATH; Debian's {@code prometheus}
 * package, which {@code .ci/run} installs) on 127.0.0.1, scraping a local platform's services with
 * the shipped alert and recording rules ({@code observability/prometheus/lastunit-rules.yml},
 * packed into this jar as {@value #RULES_RESOURCE}): {@code ./lastunit up --prometheus}, and the
 * tests that check the rules against what the platform exports.
 *
 * <p>Its files (configuration, rules, the TSDB, its log) live in one {@link OwnedTempDirectory}
 * with the server's pid recorded, so a JVM killed before {@link #close} leaves nothing for long:
 * the next embedded start stops the orphan and deletes its files. {@link #close} stops it (TERM,
 * then KILL after 10 s) and deletes the directory. Not thread-safe; start and close from one thread.
 */
public final class LocalPrometheus implements AutoCloseable {
    /** Where the shipped rules are on the classpath. */
    public static final String RULES_RESOURCE = "/observability/lastunit-rules.yml";
    /** The pid file, relative to the directory; written by this class (Prometheus writes none). */
    static final String PID_FILE = "prometheus.pid";
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    private final Process process;
    private final int port;
    private final OwnedTempDirectory directory;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private LocalPrometheus(Process process, int port, OwnedTempDirectory directory) {
        this.process = process;
        this.port = port;
        this.directory = directory;
    }

    /**
     * The scrape jobs of {@code platform}'s services ({@link LocalPlatform#metricsUrls()}), by the
     * job names the rules expect: {@code lastunit-shard}, {@code lastunit-router},
     * {@code lastunit-balancer}, {@code lastunit-admin}; each target {@code host:port}, scraped at
     * {@code /metrics}.
     */
    public static Map<String, List<String>> jobs(Map<String, String> metricsUrls) {
        Map<String, List<String>> jobs = new LinkedHashMap<>();
        metricsUrls.forEach((node, url) -> {
            URI u = URI.create(url);
            if (!"/metrics".equals(u.getPath())) {
                throw new IllegalArgumentException(node + " serves its metrics at " + url + ", not at /metrics");
            }
            jobs.computeIfAbsent("lastunit-" + node.split(" ")[0], j -> new ArrayList<>())
                    .add(u.getHost() + ":" + u.getPort());
        });
        return jobs;
    }

    /** The shipped rules file's text. */
    public static String shippedRules() {
        try (InputStream in = LocalPrometheus.class.getResourceAsStream(RULES_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RULES_RESOURCE + " is not on the classpath (a build without it?)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Cleans up what killed JVMs left in {@code stateDirectory}, then starts Prometheus on
     * {@code port} of 127.0.0.1 (0: a free one) with the shipped rules, scraping {@code jobs}
     * every {@code interval} and evaluating the rules as often; returns once it answers
     * {@code /-/ready}, within {@code startWait}.
     *
     * @throws IOException when the binary is missing, the port is taken, or it does not get ready
     */
    public static LocalPrometheus start(Path stateDirectory, int port, Map<String, List<String>> jobs,
                                        Duration interval, Duration startWait)
            throws IOException, InterruptedException {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port " + port + " is outside [0, 65535]");
        }
        if (interval.toMillis() < 100) {
            throw new IllegalArgumentException("a scrape interval under 100 ms: " + interval);
        }
        OwnedTempDirectory.reapOrphans(stateDirectory, OwnedTempDirectory.SERVER_STOP_WAIT);
        int listen = port == 0 ? freePort() : port;
        OwnedTempDirectory dir = OwnedTempDirectory.create(stateDirectory, "prometheus", PID_FILE);
        Process p = null;
        try {
            Path rules = dir.path().resolve("lastunit-rules.yml");
            Files.writeString(rules, shippedRules());
            Path config = dir.path().resolve("prometheus.yml");
            Files.writeString(config, config(jobs, List.of(rules), interval));
            Path log = dir.path().resolve("prometheus.log");
            try {
                p = new ProcessBuilder("prometheus", "--config.file=" + config,
                        "--storage.tsdb.path=" + dir.path().resolve("data"),
                        "--web.listen-address=127.0.0.1:" + listen, "--web.enable-lifecycle")
                        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            } catch (IOException e) {
                throw new IOException("cannot start prometheus: is it installed? (Debian: apt-get install prometheus;"
                        + " .ci/run does it)", e);
            }
            Files.writeString(dir.path().resolve(PID_FILE), p.pid() + "\n");
            LocalPrometheus server = new LocalPrometheus(p, listen, dir);
            server.awaitReady(log, startWait);
            return server;
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (p != null) {
                stop(p.toHandle());
            }
            try {
                dir.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The configuration: a global interval, the rule files, one static job per entry of {@code jobs}. */
    static String config(Map<String, List<String>> jobs, List<Path> ruleFiles, Duration interval) {
        StringBuilder c = new StringBuilder();
        c.append("global:\n  scrape_interval: ").append(interval.toMillis()).append("ms\n")
                .append("  evaluation_interval: ").append(interval.toMillis()).append("ms\n");
        if (ruleFiles.isEmpty()) {
            c.append("rule_files: []\n");
        } else {
            c.append("rule_files:\n");
            ruleFiles.forEach(r -> c.append("  - '").append(r.toAbsolutePath()).append("'\n"));
        }
        c.append("scrape_configs:\n");
        jobs.forEach((job, targets) -> {
            c.append("  - job_name: '").append(job).append("'\n    static_configs:\n      - targets: [");
            c.append(String.join(", ", targets.stream().map(t -> "'" + t + "'").toList())).append("]\n");
        });
        return c.toString();
    }

    private void awaitReady(Path log, Duration startWait) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + startWait.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("prometheus exited with " + process.exitValue() + ": " + tail(log));
            }
            try {
                if (status("/-/ready") == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("prometheus not ready within " + startWait + ": " + tail(log));
            }
            Thread.sleep(100);
        }
    }

    private static String tail(Path log) throws IOException {
        String s = Files.readString(log);
        return s.length() <= 4000 ? s : "..." + s.substring(s.length() - 4000);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private int status(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** {@code http://127.0.0.1:port}. */
    public String base() {
        return "http://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** Where its files are (deleted on close). */
    public Path directory() {
        return directory.path();
    }

    /** The body of {@code GET path} (e.g. {@code /api/v1/alerts}); fails on a status other than 200. */
    public String get(String path) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base() + path))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + path + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    /** The JSON answer of an instant query ({@code /api/v1/query}). */
    public String query(String promql) throws IOException, InterruptedException {
        return get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    }

    /** What the server logged so far (for a failing test's message). */
    public String log() throws IOException {
        return Files.readString(directory.path().resolve("prometheus.log"));
    }

    private static void stop(ProcessHandle p) {
        p.destroy();
        try {
            p.onExit().get(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception notYet) {
            p.destroyForcibly();
        }
    }

    /** Stops the server and deletes its files. */
    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            if (!process.waitFor(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        if (process.isAlive()) {
            throw new IOException("prometheus (pid " + process.pid() + ") did not stop; its files are left in "
                    + directory.path());
        }
        directory.close();
    }
}
