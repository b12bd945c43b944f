package io.lastunit.common.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The management port: {@code GET /metrics} answers the registry's scrape in Prometheus's text
 * format; anything else is 404, a method other than GET or HEAD 405. One daemon thread and at most
 * {@link #QUEUED_MAX} waiting scrapes (a scrape past them has its connection closed): a scrape
 * never competes with the service's own threads for more than one core.
 */
public final class MetricsServer implements AutoCloseable {
    public static final String PATH = "/metrics";
    /** Scrapes waiting for the one thread; past it a scrape has its connection closed. */
    public static final int QUEUED_MAX = 16;
    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Serves {@code registry} on {@code host:port} (0: any free port), started. */
    public static MetricsServer start(String host, int port, PrometheusMeterRegistry registry) throws IOException {
        Objects.requireNonNull(registry, "registry");
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
        ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(QUEUED_MAX), r -> {
                    Thread t = new Thread(r, "metrics-http");
                    t.setDaemon(true);
                    return t;
                }, (r, e) -> {
                    throw new java.util.concurrent.RejectedExecutionException("metrics scrape queue full");
                });
        server.setExecutor(executor);
        server.createContext("/", exchange -> handle(exchange, registry));
        server.start();
        return new MetricsServer(server, executor);
    }

    private static void handle(HttpExchange exchange, PrometheusMeterRegistry registry) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!exchange.getRequestURI().getPath().equals(PATH)) {
                respond(exchange, 404, "not found: metrics are at " + PATH + "\n", method);
                return;
            }
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                respond(exchange, 405, "method not allowed\n", method);
                return;
            }
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            respond(exchange, 200, registry.scrape(), method);
        }
    }

    private static void respond(HttpExchange exchange, int status, String body, String method) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        if (method.equals("HEAD")) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** The port it listens on. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** {@code http://host:port/metrics}. */
    public String url() {
        InetSocketAddress a = server.getAddress();
        return "http://" + a.getHostString() + ":" + a.getPort() + PATH;
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
