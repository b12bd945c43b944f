package io.lastunit.testkit.prometheus;

import java.io.IOException;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus server (Debian's {@code prometheus} binary; {@code .ci/run} installs it) on
 * 127.0.0.1, scraping the given targets and evaluating the given rule files, for tests: started in
 * a temporary directory, stopped (TERM, then KILL after 10 s) by {@link #close}. Its HTTP API is
 * asked with {@link #query} and {@link #get}.
 */
public final class PrometheusServer implements AutoCloseable {
    private final Process process;
    private final int port;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private PrometheusServer(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * Starts Prometheus in {@code dir}: job name → targets ({@code host:port}, each scraped at
     * {@code /metrics}), every {@code interval} scraped and the rules evaluated; returns once it
     * answers {@code /-/ready}, within {@code startWait}.
     */
    public static PrometheusServer start(Path dir, Map<String, List<String>> jobs, List<Path> ruleFiles,
                                         Duration interval, Duration startWait) throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        StringBuilder config = new StringBuilder();
        config.append("global:\n  scrape_interval: ").append(interval.toMillis()).append("ms\n")
                .append("  evaluation_interval: ").append(interval.toMillis()).append("ms\n");
        config.append("rule_files:\n");
        for (Path r : ruleFiles) {
            config.append("  - '").append(r.toAbsolutePath()).append("'\n");
        }
        if (ruleFiles.isEmpty()) {
            config.append("  []\n");
        }
        config.append("scrape_configs:\n");
        jobs.forEach((job, targets) -> {
            config.append("  - job_name: '").append(job).append("'\n    static_configs:\n      - targets: [");
            config.append(String.join(", ", targets.stream().map(t -> "'" + t + "'").toList())).append("]\n");
        });
        Path file = dir.resolve("prometheus.yml");
        Files.writeString(file, config.toString().replace("rule_files:\n  []\n", "rule_files: []\n"));
        Path log = dir.resolve("prometheus.log");
        Process p;
        try {
            p = new ProcessBuilder("prometheus", "--config.file=" + file, "--storage.tsdb.path=" + dir.resolve("data"),
                    "--web.listen-address=127.0.0.1:" + port, "--web.enable-lifecycle")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new IOException("cannot start prometheus (Debian: apt-get install prometheus; .ci/run does it)", e);
        }
        PrometheusServer server = new PrometheusServer(p, port, log);
        long deadline = System.nanoTime() + startWait.toNanos();
        while (true) {
            if (!p.isAlive()) {
                throw new IOException("prometheus exited with " + p.exitValue() + ": " + Files.readString(log));
            }
            try {
                if (server.status("/-/ready") == 200) {
                    return server;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                server.close();
                throw new IOException("prometheus not ready within " + startWait + ": " + Files.readString(log));
            }
            Thread.sleep(100);
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
        return Files.readString(log);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
