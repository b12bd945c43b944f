package io.lastunit.admin.server;

import io.grpc.Server;
import io.grpc.protobuf.services.HealthStatusManager;
import io.lastunit.admin.grpc.AdminGrpcService;
import io.lastunit.admin.metrics.MoveMetrics;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.Moves;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.lifecycle.NodeLifecycle;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.common.metrics.Metrics;
import io.lastunit.common.metrics.MetricsConfig;
import io.lastunit.common.metrics.MetricsServer;
import io.lastunit.common.lifecycle.NodeTls;
import io.lastunit.common.tls.AllowList;
import io.lastunit.common.tls.ClientTls;
import io.lastunit.common.tls.PeerAuthInterceptor;
import io.lastunit.common.tls.Role;
import io.lastunit.common.tls.TlsCredentials;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.router.auth.AuthInterceptor;
import io.lastunit.router.auth.Authenticator;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin service of a platform: {@code lastunit.admin.v1.AdminService} (every call needs a
 * token with the admin role, {@link AuthInterceptor}, and under mutual TLS a client certificate of
 * the admin role, {@link PeerAuthInterceptor}), health and server reflection, on
 * {@code host:port}; behind it {@link Moves}, which runs the moves started here and, every
 * {@code resumeInterval}, resumes every unfinished move that no mover holds (a crashed mover's).
 * Started in the order ZooKeeper client, shard channels, moves, call threads, metrics server (when
 * enabled: {@link MoveMetrics}, gRPC meters), gRPC server, resume schedule, and stopped in reverse
 * ({@link NodeLifecycle}); {@link #close()} is idempotent.
 *
 * <p>Thread-safe. Hazard: several admin servers may run against one platform; they meet at each
 * move's lease, so any of them resumes a crashed move, and only one acts on it at a time.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    static final int CALL_THREADS = 2;
    static final int CALL_QUEUE_MAX = 64;
    /** Largest reply accepted from a shard node (an export chunk of 10,000 rows fits). */
    static final int SHARD_REPLY_BYTES_MAX = 64 << 20;
    /** Under mutual TLS, only the admin role calls the admin service. */
    static final AllowList ADMIN_CALLERS = AllowList.builder("admin server")
            .service(AdminServiceGrpc.SERVICE_NAME, Role.ADMIN).build();

    /**
     * What an admin server needs.
     *
     * @param tokenGrants    {@code <sha256-hex>:<name>:<tenants>[:admin]}, as the router's; at least one with the admin role
     * @param shardTrust     CA certificate of shard nodes that serve TLS, or null for plaintext
     * @param runsMax        most moves run by this server at once
     * @param resumeInterval how often unowned moves are resumed; zero: never
     * @param metrics        the management port ({@code /metrics}); the meters exist only when enabled
     * @param healthPort     a plaintext port serving only gRPC health, for probes that cannot speak TLS;
     *                       {@code -1}: none, 0: any free one
     * @param mutualTls      mutual TLS (null: off): the listener serves TLS and admits only the admin role
     *                       (then the token), and shard nodes are dialled with this identity; not with shardTrust
     * @param zookeeperCredentials lastunit's ZooKeeper credentials, or null: none
     * @param zookeeperTls   TLS to ZooKeeper's secure client port, or null: plaintext
     */
    public record Config(String zookeeper, String namespace, String host, int port, List<String> tokenGrants,
            File shardTrust, int runsMax, Duration resumeInterval, MoverSettings settings, MovePolicy policy,
            String owner, MetricsConfig metrics, int healthPort, io.lastunit.common.tls.MutualTls mutualTls,
            io.lastunit.common.topology.ZooKeeperCredentials zookeeperCredentials,
            io.lastunit.common.tls.ZooKeeperTls zookeeperTls) {
        /** Without mutual TLS or ZooKeeper credentials. */
        public Config(String zookeeper, String namespace, String host, int port, List<String> tokenGrants,
                File shardTrust, int runsMax, Duration resumeInterval, MoverSettings settings, MovePolicy policy,
                String owner, MetricsConfig metrics, int healthPort) {
            this(zookeeper, namespace, host, port, tokenGrants, shardTrust, runsMax, resumeInterval, settings, policy,
                    owner, metrics, healthPort, null, null, null);
        }

        public Config {
            Objects.requireNonNull(metrics, "metrics (MetricsConfig.OFF to turn them off)");
            List<String> problems = new ArrayList<>();
            if (zookeeper == null || zookeeper.isBlank()) {
                problems.add("zookeeper is required");
            }
            if (port < 0 || port > 65_535) {
                problems.add("port " + port + " is outside [0, 65535]");
            }
            if (!NodeServer.isHealthPort(healthPort)) {
                problems.add("health port " + healthPort + " is not -1 (none), 0 (any free one) or a port up to 65535");
            }
            tokenGrants = List.copyOf(tokenGrants);
            try {
                Authenticator.fromGrants(tokenGrants);
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
            if (tokenGrants.stream().noneMatch(g -> g.trim().endsWith(":admin"))) {
                problems.add("no token grant has the admin role (<sha256-hex>:<name>:<tenants>:admin): nobody could call");
            }
            if (runsMax < 1 || runsMax > 64) {
                problems.add("runsMax " + runsMax + " is outside [1, 64]");
            }
            if (resumeInterval == null || resumeInterval.isNegative()) {
                problems.add("resumeInterval must be zero (never) or positive");
            }
            Objects.requireNonNull(settings, "settings");
            Objects.requireNonNull(policy, "policy");
            if (owner == null || owner.isBlank()) {
                problems.add("owner is required");
            }
            if (mutualTls != null && shardTrust != null) {
                problems.add("mutual TLS (--tls-cert/--tls-key/--tls-ca) and --shard-trust-certificate are both set: give one");
            }
            if (!problems.isEmpty()) {
                throw new IllegalArgumentException("admin server: " + String.join("; ", problems));
            }
        }
    }

    private final Config config;
    private final MoveFaults faults;
    private final InstantSource clock;
    private final NodeLifecycle lifecycle = new NodeLifecycle("admin server", log);
    private CuratorFramework curator;
    private Moves moves;
    private Server server;
    /** The plaintext health-only listener, or null when there is none. */
    private Server healthListener;
    /** The admin service's meters, or null when metrics are off. */
    private PrometheusMeterRegistry registry;
    private MetricsServer metricsServer;

    public AdminServer(Config config) {
        this(config, MoveFaults.NONE, InstantSource.system());
    }

    /** @param faults fault injection after each recorded step (tests); {@link MoveFaults#NONE} otherwise */
    public AdminServer(Config config, MoveFaults faults, InstantSource clock) {
        this.config = config;
        this.faults = faults;
        this.clock = clock;
    }

    /** Starts every part; a start that fails closes what it opened. */
    public synchronized AdminServer start() throws IOException, InterruptedException {
        lifecycle.begin();
        try {
            startAll();
        } catch (Throwable t) {
            close();
            throw t;
        }
        return this;
    }

    private void startAll() throws IOException, InterruptedException {
        if (config.metrics().enabled()) {
            registry = Metrics.newRegistry("admin");
        }
        curator = Curators.newClient(config.zookeeper(), Duration.ofSeconds(15), config.zookeeperCredentials(),
                config.zookeeperTls());
        lifecycle.onClose("ZooKeeper client", curator::close);
        curator.start();
        if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IOException("no ZooKeeper connection to " + config.zookeeper() + " within 30 s");
        }
        TopologyStore store = new TopologyStore(curator, config.namespace(), clock);
        TlsCredentials credentials = NodeTls.open(config.mutualTls(), lifecycle, registry);
        ShardChannels.Dial dial = new ShardChannels.Dial(ClientTls.of(credentials, config.shardTrust()),
                SHARD_REPLY_BYTES_MAX, false, true);
        PrometheusMeterRegistry meters = registry;
        ShardChannels channels = new ShardChannels(address -> meters == null ? dial.open(address)
                : dial.open(address, Metrics.grpcClientInterceptor(meters, address)), Duration.ofSeconds(2));
        lifecycle.onClose("shard channels", channels::close);
        moves = new Moves(store, curator, config.namespace(), channels, config.policy(), config.settings(), clock,
                faults, config.owner(), config.runsMax());
        lifecycle.onClose("moves", moves::close);
        if (registry != null) {
            moves.observe(new MoveMetrics(registry, moves));
            CuratorFramework zk = curator;
            Gauge.builder(Metrics.PREFIX + "zookeeper.connected", zk, z -> z.getZookeeperClient().isConnected() ? 1 : 0)
                    .description("1 while the admin service's ZooKeeper session is connected").register(registry);
        }
        ThreadPoolExecutor calls = new ThreadPoolExecutor(CALL_THREADS, CALL_THREADS, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(CALL_QUEUE_MAX), threads("admin-call"));
        NodeLifecycle.Closer callsCloser = lifecycle.onClose("admin call threads",
                NodeLifecycle.executor(calls, Duration.ofSeconds(5)));
        HealthStatusManager health = new HealthStatusManager();
        var builder = NodeServer.builder(config.host(), config.port(), health, 1 << 20)
                .intercept(new AuthInterceptor(Authenticator.fromGrants(config.tokenGrants())));
        if (credentials != null) {
            // Before the token (interceptors added later run first): a caller without the admin
            // certificate is refused whatever token it sends.
            builder.sslContext(credentials.forServer()).intercept(new PeerAuthInterceptor(ADMIN_CALLERS));
        }
        if (registry != null) {
            // Outermost: calls refused by authentication are counted too, with their status.
            builder.intercept(Metrics.grpcServerInterceptor(registry));
            metricsServer = MetricsServer.start(config.metrics().host(), config.metrics().port(), registry);
            lifecycle.onClose("metrics server", metricsServer::close);
        }
        Server built = builder.addService(new AdminGrpcService(moves, calls)).build();
        healthListener = NodeServer.startHealthListener(config.host(), config.healthPort(), health);
        if (healthListener != null) {
            // Registered before the server's closer, so it closes after it: probes see the drain.
            lifecycle.onClose("health listener", healthListener::shutdownNow);
        }
        lifecycle.onClose("gRPC server", () -> {
            NodeServer.stop(built, health);
            callsCloser.close();
        });
        server = built.start();
        NodeServer.serving(health, "", AdminServiceGrpc.SERVICE_NAME);
        if (!config.resumeInterval().isZero()) {
            ScheduledExecutorService resumer = Executors.newSingleThreadScheduledExecutor(threads("admin-resume"));
            lifecycle.onClose("resume schedule", NodeLifecycle.executor(resumer, Duration.ofSeconds(5)));
            long ms = config.resumeInterval().toMillis();
            resumer.scheduleWithFixedDelay(this::resumeUnowned, ms, ms, TimeUnit.MILLISECONDS);
        }
        log.info("admin server {}:{} started (topology at {}{}; at most {} moves at once){}", config.host(), port(),
                config.zookeeper(), config.namespace(), config.runsMax(),
                metricsServer == null ? "" : "; metrics " + metricsServer.url());
    }

    private void resumeUnowned() {
        try {
            moves.resumeUnowned();
        } catch (RuntimeException e) {
            log.warn("resuming unowned moves failed; trying again in {} ms", config.resumeInterval().toMillis(), e);
        }
    }

    private static java.util.concurrent.ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** The bound port (the chosen one when configured 0). */
    public synchronized int port() {
        return server.getPort();
    }

    /** The port of the health-only listener, or -1 when there is none. */
    public synchronized int healthPort() {
        return healthListener == null ? -1 : healthListener.getPort();
    }

    public String host() {
        return config.host();
    }

    /** Where the admin service's metrics are served ({@code http://host:port/metrics}), or empty when they are off. */
    public synchronized java.util.Optional<String> metricsUrl() {
        return metricsServer == null ? java.util.Optional.empty() : java.util.Optional.of(metricsServer.url());
    }

    /** The admin service's meters, or null when metrics are off. */
    public synchronized io.micrometer.core.instrument.MeterRegistry meters() {
        return registry;
    }

    /** The moves this server runs (for tests and the local platform). */
    public synchronized Moves moves() {
        return moves;
    }

    /** The server's own ZooKeeper client (for fault tests). */
    public synchronized CuratorFramework curator() {
        return curator;
    }

    @Override
    public synchronized void close() {
        if (lifecycle.close()) {
            log.info("admin server stopped");
        }
    }
}
