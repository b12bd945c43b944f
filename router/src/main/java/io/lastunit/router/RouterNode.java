package io.lastunit.router;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.RequestValidator;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.lifecycle.NodeLifecycle;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.common.metrics.Metrics;
import io.lastunit.common.metrics.MetricsConfig;
import io.lastunit.common.metrics.MetricsServer;
import io.lastunit.common.health.ReadinessWatch;
import io.lastunit.common.lifecycle.NodeTls;
import io.lastunit.common.tls.ClientTls;
import io.lastunit.common.tls.TlsCredentials;
import io.lastunit.common.topology.Curators;
import io.lastunit.router.auth.GrantsFile;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import io.lastunit.router.auth.AuthInterceptor;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.grpc.RouterInventoryService;
import io.lastunit.router.metrics.RouterMetrics;
import io.lastunit.router.reserve.ReservePipeline;
import io.lastunit.router.route.BalancerClient;
import io.lastunit.router.route.ReserveBatcher;
import io.lastunit.router.route.KeyClaimer;
import io.lastunit.router.route.ReserveFlow;
import io.lastunit.router.route.Router;
import io.lastunit.router.shed.BuyerRateLimiter;
import io.lastunit.router.shed.InFlightLimiter;
import io.lastunit.router.shed.RecentKeys;
import io.lastunit.router.shed.SoldOutCache;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running router: a ZooKeeper client and the watched topology, the watched balancer leader
 * endpoint with its channel, pooled channels to the shard nodes with the Reserve batcher, the
 * retry scheduler, the {@link ReservePipeline}, and the public gRPC server behind authentication
 * (InventoryService, health, and server reflection v1 and v1alpha; only the last two are open
 * without a token, see {@link AuthInterceptor}), with, when {@code metrics} is enabled, the router's
 * meters ({@link RouterMetrics}, gRPC server and client interceptors) served by a
 * {@link MetricsServer}. Started in that order and stopped in reverse
 * ({@link NodeLifecycle}): the server stops taking calls and waits for those in flight first.
 * Lifecycle LATENT → STARTED → CLOSED; {@link #close()} is idempotent. Thread-safe.
 */
public final class RouterNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RouterNode.class);

    private final RouterConfig config;
    private final LongSupplier nanoClock;
    private CuratorFramework curator;
    /** Keeps the gRPC health true; set once serving, read by the server's closer. */
    private volatile ReadinessWatch readiness;
    private TopologyCache topology;
    private ShardChannels channels;
    private ReserveBatcher batcher;
    private BalancerClient balancer;
    private ReservePipeline pipeline;
    private Server server;
    /** The plaintext health-only listener, or null when there is none. */
    private Server healthListener;
    /** The router's meters, or null when metrics are off. */
    private PrometheusMeterRegistry registry;
    private MetricsServer metricsServer;
    /** The tokens file, when the grants come from one. */
    private volatile GrantsFile grantsFile;
    private final NodeLifecycle lifecycle;

    public RouterNode(RouterConfig config) {
        this(config, System::nanoTime);
    }

    /**
     * @param nanoClock what the sold-out cache, the buyer rate limiter and the recent keys read as
     *                  {@link System#nanoTime()}; tests pass a clock they advance by hand
     */
    public RouterNode(RouterConfig config, LongSupplier nanoClock) {
        this.config = config;
        this.nanoClock = nanoClock;
        this.lifecycle = new NodeLifecycle("router " + config.routerId(), log);
    }

    /** Starts every part, in the order of the class comment; a start that fails closes what it opened. */
    public synchronized RouterNode start() throws IOException, InterruptedException {
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
        MetricsConfig metricsConfig = config.metrics();
        if (metricsConfig.enabled()) {
            registry = Metrics.newRegistry("router", "router", config.routerId());
        }
        curator = Curators.newClient(config.zookeeper(), Duration.ofSeconds(15), config.zookeeperCredentials(),
                config.zookeeperTls());
        lifecycle.onClose("ZooKeeper client", curator::close);
        curator.start();
        topology = new TopologyCache(curator, config.namespace(), config.topologyStaleMax(), InstantSource.system());
        lifecycle.onClose("topology cache", topology::close);
        topology.start(Duration.ofSeconds(30));
        TlsCredentials credentials = NodeTls.open(config.mutualTls(), lifecycle, registry);
        ClientTls internal = ClientTls.of(credentials, config.shardTrustCertificate());
        balancer = new BalancerClient(curator, config.namespace(), internal);
        lifecycle.onClose("balancer client", balancer::close);
        balancer.start();
        ShardChannels.Dial dial = Router.dial(internal);
        // Calls to each shard by method and status (lastunit_grpc_client_*{target=<address>}).
        PrometheusMeterRegistry meters = registry;
        channels = new ShardChannels(address -> meters == null ? dial.open(address)
                : dial.open(address, Metrics.grpcClientInterceptor(meters, address)), Duration.ZERO);
        lifecycle.onClose("shard channels", channels::close);
        batcher = new ReserveBatcher(config.reserveBatchMax(), config.reserveQueueMax(),
                config.reserveBatchesInFlightMax(), config.reserveBatchHoldAbove());
        lifecycle.onClose("Reserve batcher", batcher::close);
        channels.onRemoved(batcher::forget);
        topology.addListener(this::retainChannels);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "router-retry");
            t.setDaemon(true);
            return t;
        });
        lifecycle.onClose("retry scheduler", scheduler::shutdownNow);
        Router router = new Router(topology::current, channels, scheduler, config.attemptsMax(), config.backoffBase(),
                config.defaultDeadline(), config.movingHoldMax());
        topology.addListener(router::onTopology);
        ReserveFlow reserveFlow = new ReserveFlow(balancer::pull, new KeyClaimer(router), config.pullWait(),
                config.pullAttemptsMax());
        pipeline = new ReservePipeline(new ReservePipeline.Shedding(
                new SoldOutCache(config.soldOutTtl().toNanos(), config.soldOutEntriesMax(), nanoClock),
                new BuyerRateLimiter(config.buyerRatePerSecond(), config.buyerBurst(), config.buyersTrackedMax(),
                        nanoClock),
                new InFlightLimiter(config.inFlightPerItemMax()),
                new RecentKeys(Duration.ofMinutes(10).toNanos(), config.recentKeysMax(), nanoClock)),
                reserveFlow, router, batcher);
        if (registry != null) {
            RouterMetrics metrics = new RouterMetrics(registry);
            router.observe(metrics);
            reserveFlow.observe(metrics);
            pipeline.observe(metrics);
            metrics.onTopology(topology.current());
            topology.addListener(metrics::onTopology);
            RouterMetrics.bindTopology(registry, topology, curator);
        }
        RouterInventoryService service = new RouterInventoryService(new RequestValidator(config.limits()), router,
                topology::current, pipeline);
        HealthStatusManager health = new HealthStatusManager();
        NettyServerBuilder b = NodeServer.builder(config.host(), config.port(), health, 1 << 20)
                // Every service on the port goes through authentication; AuthInterceptor opens
                // only health and reflection, so a service added here later is closed by default.
                .intercept(new AuthInterceptor(grants()))
                .addService(service);
        if (config.tlsCertificate() != null) {
            b.sslContext(GrpcSslContexts.forServer(config.tlsCertificate(), config.tlsKey()).build());
        }
        if (!config.maxConnectionAge().isZero()) {
            // A client keeps its connection for as long as it can; behind a Service that means routers
            // started later (a rolling upgrade, a scale-out) get no old client. An aged connection is
            // sent a GOAWAY, its calls may finish within the grace, and the client connects anew.
            b.maxConnectionAge(config.maxConnectionAge().toNanos(), TimeUnit.NANOSECONDS)
                    .maxConnectionAgeGrace(config.maxConnectionAgeGrace().toNanos(), TimeUnit.NANOSECONDS);
        }
        if (registry != null) {
            // Outermost: calls refused by authentication are counted too, with their status.
            b.intercept(Metrics.grpcServerInterceptor(registry));
            metricsServer = MetricsServer.start(metricsConfig.host(), metricsConfig.port(), registry);
            lifecycle.onClose("metrics server", metricsServer::close);
        }
        Server built = b.build();
        healthListener = NodeServer.startHealthListener(config.host(), config.healthPort(), health);
        if (healthListener != null) {
            // Registered before the server's closer, so it closes after it: probes see the drain.
            lifecycle.onClose("health listener", healthListener::shutdownNow);
        }
        lifecycle.onClose("gRPC server", () -> {
            ReadinessWatch r = readiness;
            if (r != null) {
                r.drain(config.shutdownGrace());
            }
            NodeServer.stop(built, health);
        });
        server = built.start();
        // By name too, for probes that ask for the API's service; close() turns both NOT_SERVING.
        // NOT_SERVING while ZooKeeper has been gone past the staleness bound: the router then answers
        // TOPOLOGY_UNAVAILABLE, so a load balancer should send elsewhere.
        CuratorFramework zk = curator;
        readiness = new ReadinessWatch("router " + config.routerId(), health,
                List.of("", InventoryServiceGrpc.SERVICE_NAME),
                List.of(new ReadinessWatch.Condition("zookeeper", config.topologyStaleMax(),
                        () -> zk.getZookeeperClient().isConnected())),
                Duration.ofMillis(500), System::nanoTime).start();
        lifecycle.onClose("readiness watch", readiness::close);
        log.info("router {} serving on {}:{} (topology at {}{}){}", config.routerId(), config.host(), server.getPort(),
                config.zookeeper(), config.namespace(),
                metricsServer == null ? "" : "; metrics " + metricsServer.url());
    }

    /** The grants in force: those of the configuration, or of the tokens file, read again as it changes. */
    private java.util.function.Supplier<Authenticator> grants() {
        if (config.tokensFile() == null) {
            Authenticator fixed = Authenticator.fromGrants(config.tokenGrants());
            return () -> fixed;
        }
        GrantsFile file = GrantsFile.watch(config.tokensFile().toPath(), config.tokensReloadInterval());
        lifecycle.onClose("token grants file", file::close);
        grantsFile = file;
        if (registry != null) {
            io.micrometer.core.instrument.Gauge.builder(Metrics.PREFIX + "router.grants", file, GrantsFile::grantCount)
                    .description("Token grants in force").register(registry);
            io.micrometer.core.instrument.FunctionCounter.builder(Metrics.PREFIX + "router.grants.reloads", file,
                    GrantsFile::reloads).description("New token grants taken from the tokens file").register(registry);
            io.micrometer.core.instrument.FunctionCounter.builder(Metrics.PREFIX + "router.grants.reload.failures", file,
                    GrantsFile::reloadFailures)
                    .description("Contents of the tokens file refused (the grants in force were kept)").register(registry);
        }
        return file::current;
    }

    /** The tokens file the router reads its grants from, or null when they are in its configuration. */
    public GrantsFile grantsFile() {
        return grantsFile;
    }

    private void retainChannels(Topology t) {
        Set<String> addresses = new HashSet<>();
        for (var cell : t.cells()) {
            for (String region : cell.getRegionsList()) {
                for (ShardInfo s : t.shards(cell.getName(), region)) {
                    addresses.add(s.getAddress());
                }
            }
        }
        channels.retain(addresses);
    }

    public synchronized int port() {
        return server.getPort();
    }

    /** The port of the health-only listener, or -1 when there is none. */
    public synchronized int healthPort() {
        return healthListener == null ? -1 : healthListener.getPort();
    }

    /** Where the router's metrics are served ({@code http://host:port/metrics}), or empty when they are off. */
    public synchronized java.util.Optional<String> metricsUrl() {
        return metricsServer == null ? java.util.Optional.empty() : java.util.Optional.of(metricsServer.url());
    }

    /** The router's meters, or null when metrics are off. */
    public synchronized io.micrometer.core.instrument.MeterRegistry meters() {
        return registry;
    }

    public RouterConfig config() {
        return config;
    }

    /** Reserve calls the router answered itself (sold-out cache, rate limit, in-flight cap). */
    public synchronized long shedCount() {
        return pipeline.shedCount();
    }

    /** Reserves the router sent to shards in ReserveBatch calls: {calls, Reserves}. */
    public synchronized long[] reserveBatches() {
        return batcher.stats();
    }

    public synchronized TopologyCache topology() {
        return topology;
    }

    public synchronized CuratorFramework curator() {
        return curator;
    }

    /** Stops every part in the reverse order of the start (see the class comment). Idempotent. */
    @Override
    public synchronized void close() {
        if (lifecycle.close()) {
            log.info("router {} stopped", config.routerId());
        }
    }
}
