package io.lastunit.balancer;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.lastunit.api.balancer.v1.BalancerServiceGrpc;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.balancer.grpc.BalancerGrpcService;
import io.lastunit.balancer.invariant.InvariantWatch;
import io.lastunit.balancer.leader.Leadership;
import io.lastunit.balancer.move.BalancingLoop;
import io.lastunit.balancer.move.ItemLocks;
import io.lastunit.balancer.move.ItemMover;
import io.lastunit.balancer.move.LevelReader;
import io.lastunit.balancer.plan.DemandTracker;
import io.lastunit.balancer.transfer.Fence;
import io.lastunit.balancer.transfer.TransferExecutor;
import io.lastunit.balancer.transfer.TransferFaults;
import io.lastunit.balancer.transfer.TransferRecovery;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.invariant.CrossShardChecker;
import io.lastunit.common.invariant.CrossShardReport;
import io.lastunit.common.invariant.DriftTracker;
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
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.lastunit.common.health.ReadinessWatch;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running bucket-balancer: a ZooKeeper client and the watched topology, channels to the
 * shard nodes, the transfer machinery and the pull threads, the gRPC server (BalancerService,
 * health, server reflection v1 and v1alpha; with its meters on a {@link MetricsServer} when
 * {@code metrics} is enabled), the scheduled balancing loop and invariant check, and
 * its part in the election ({@link Leadership}), started in that order and stopped in reverse
 * ({@link NodeLifecycle}). Once elected it completes every PENDING transfer, publishes
 * its endpoint, and then runs the balancing loop and the invariant check on their schedules and
 * serves pulls; a standby serves only NOT_LEADER. Health: {@code ""} SERVING while running,
 * {@code lastunit.balancer.v1.BalancerService} SERVING only while leading.
 *
 * <p>Lifecycle LATENT → STARTED → CLOSED; {@link #close()} is idempotent and leaves the election
 * first, so a standby takes over at once. Usable in-process (tests, the local platform).
 * Thread-safe.
 */
public final class BalancerNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BalancerNode.class);
    /** Pause between two recovery attempts of a new leader (doubles up to 5 s). */
    static final Duration RECOVERY_RETRY = Duration.ofMillis(200);
    /** Backoff before the second attempt of a transfer step (doubles up to 1 s). */
    static final Duration STEP_BACKOFF = Duration.ofMillis(50);
    /** Samples kept per item region for demand rates. */
    static final int DEMAND_SAMPLES_MAX = 120;
    /**
     * Largest reply accepted from a shard node. Hazard: {@code ListLevels} without a tenant answers
     * every item of a shard in one message; beyond this bound (about 200,000 items) the call fails,
     * and so does the balancing of that shard's cell.
     */
    static final int SHARD_REPLY_BYTES_MAX = 64 << 20;
    /** How long a stop waits for the scheduled work, and then for the pulls, to end. */
    static final Duration WORKERS_STOP_WAIT = Duration.ofSeconds(5);
    /** How long a stop waits for each shard channel to terminate. */
    static final Duration SHARD_CHANNEL_CLOSE_WAIT = Duration.ofSeconds(2);
    /** Under mutual TLS, only routers call a balancer (Pull, into a dry region). */
    static final AllowList BALANCER_CALLERS = AllowList.builder("bucket-balancer")
            .service(BalancerServiceGrpc.SERVICE_NAME, Role.ROUTER).build();

    private final BalancerConfig config;
    private final TransferFaults faults;
    private final BalancerMetrics metrics = new BalancerMetrics();
    private final NodeLifecycle lifecycle;
    private CuratorFramework curator;
    /** Keeps the process's health true once serving. */
    private ReadinessWatch readiness;
    private TopologyCache topology;
    private ShardChannels channels;
    private TransferExecutor executor;
    private TransferRecovery recovery;
    private ItemMover mover;
    private InvariantWatch invariants;
    private ThreadPoolExecutor pullThreads;
    private ScheduledExecutorService scheduler;
    private Server server;
    /** The plaintext health-only listener, or null when there is none. */
    private Server healthListener;
    private HealthStatusManager health;
    private Leadership leadership;
    private String address;
    /** The balancer's meters, or null when metrics are off. */
    private PrometheusMeterRegistry registry;
    private MetricsServer metricsServer;

    public BalancerNode(BalancerConfig config) {
        this(config, TransferFaults.NONE);
    }

    /** @param faults fault injection between transfer steps (tests); {@link TransferFaults#NONE} in production */
    public BalancerNode(BalancerConfig config, TransferFaults faults) {
        this.config = config;
        this.faults = faults;
        this.lifecycle = new NodeLifecycle("balancer", log);
    }

    /** Starts every part, in the order of the class comment; a start that fails closes what it opened. */
    public synchronized BalancerNode start() throws IOException, InterruptedException {
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
            registry = Metrics.newRegistry("balancer");
            metrics.bindTo(registry);
        }
        curator = Curators.newClient(config.zookeeper(), config.zookeeperSessionTimeout(), config.zookeeperCredentials(),
                config.zookeeperTls());
        lifecycle.onClose("ZooKeeper client", curator::close);
        curator.start();
        if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IOException("no ZooKeeper connection to " + config.zookeeper() + " within 30 s");
        }
        topology = new TopologyCache(curator, config.namespace(), config.topologyStaleMax(), InstantSource.system());
        lifecycle.onClose("topology cache", topology::close);
        topology.start(Duration.ofSeconds(30));
        TlsCredentials credentials = NodeTls.open(config.mutualTls(), lifecycle, registry);
        channels = shardChannels(ClientTls.of(credentials, config.shardTrustCertificate()), registry);
        lifecycle.onClose("shard channels", channels::close);
        topology.addListener(this::retainChannels);
        executor = new TransferExecutor(channels, faults, metrics, config.stepAttemptsMax(), config.stepTimeout(),
                STEP_BACKOFF);
        recovery = new TransferRecovery(channels, executor, config.stepTimeout(), InstantSource.system());
        DemandTracker demand = new DemandTracker(config.demandWindow(), DEMAND_SAMPLES_MAX);
        LevelReader reader = new LevelReader(channels, config.stepTimeout());
        mover = new ItemMover(executor, reader, config.policy(), demand, new ItemLocks());
        pullThreads = new ThreadPoolExecutor(config.pullThreads(), config.pullThreads(), 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(config.pullQueueMax()), threads("balancer-pull"));
        NodeLifecycle.Closer pulls = lifecycle.onClose("pull threads", NodeLifecycle.executor(pullThreads,
                WORKERS_STOP_WAIT));
        health = new HealthStatusManager();
        NettyServerBuilder builder = NodeServer.builder(config.host(), config.port(), health, 1 << 16);
        if (credentials != null) {
            // Inside the metrics interceptor (added below): refused calls are counted too.
            builder.sslContext(credentials.forServer()).intercept(new PeerAuthInterceptor(BALANCER_CALLERS));
        } else if (config.tlsCertificate() != null) {
            builder.sslContext(GrpcSslContexts.forServer(config.tlsCertificate(), config.tlsKey()).build());
        }
        if (registry != null) {
            builder.intercept(Metrics.grpcServerInterceptor(registry));
            CuratorFramework zk = curator;
            Gauge.builder(Metrics.PREFIX + "zookeeper.connected", zk, z -> z.getZookeeperClient().isConnected() ? 1 : 0)
                    .description("1 while the balancer's ZooKeeper session is connected").register(registry);
            Gauge.builder(Metrics.PREFIX + "balancer.leader", this, n -> n.isLeader() ? 1 : 0)
                    .description("1 while this balancer leads (elected, recovered, endpoint published)")
                    .register(registry);
            Gauge.builder(Metrics.PREFIX + "topology.staleness", topology, t -> t.staleness().toNanos() / 1e9)
                    .baseUnit("seconds")
                    .description("time since the topology view was last known current (0 while ZooKeeper is connected)")
                    .register(registry);
            metricsServer = MetricsServer.start(metricsConfig.host(), metricsConfig.port(), registry);
            lifecycle.onClose("metrics server", metricsServer::close);
        }
        Server built = builder
                .addService(new BalancerGrpcService(this::servingFence, topology, mover, pullThreads, metrics))
                .build();
        healthListener = NodeServer.startHealthListener(config.host(), config.healthPort(), health);
        if (healthListener != null) {
            // Registered before the server's closer, so it closes after it: probes see the drain.
            lifecycle.onClose("health listener", healthListener::shutdownNow);
        }
        lifecycle.onClose("gRPC server and workers", () -> stopServing(built, pulls));
        server = built.start();
        address = config.advertisedAddress().isEmpty() ? config.host() + ":" + server.getPort()
                : config.advertisedAddress();
        health.setStatus(BalancerServiceGrpc.SERVICE_NAME, ServingStatus.NOT_SERVING);
        // The process ("") is NOT_SERVING while ZooKeeper has been gone past the staleness bound;
        // BalancerService follows leadership (onLeadership).
        CuratorFramework zk = curator;
        readiness = new ReadinessWatch("balancer " + address, health, List.of(""),
                List.of(new ReadinessWatch.Condition("zookeeper", config.topologyStaleMax(),
                        () -> zk.getZookeeperClient().isConnected())),
                Duration.ofMillis(500), System::nanoTime).start();
        lifecycle.onClose("readiness watch", readiness::close);

        invariants = new InvariantWatch(this::servingFence, topology,
                new CrossShardChecker(channels::get, config.stepTimeout()),
                new DriftTracker(config.invariantConsecutive()), metrics, registry);
        BalancingLoop loop = new BalancingLoop(this::servingFence, topology, reader, mover, demand, recovery, metrics,
                config.movesPerTickMax(), config.recoveryInterval(), System::nanoTime);
        scheduler = Executors.newScheduledThreadPool(3, threads("balancer"));
        scheduler.scheduleWithFixedDelay(loop, config.interval().toMillis(), config.interval().toMillis(),
                TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(invariants, config.invariantInterval().toMillis(),
                config.invariantInterval().toMillis(), TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(() -> log.info(metrics.summaryLine()), config.metricsLogInterval().toMillis(),
                config.metricsLogInterval().toMillis(), TimeUnit.MILLISECONDS);

        leadership = new Leadership(curator, config.namespace(), address, this::recoverAll, this::onLeadership,
                RECOVERY_RETRY);
        // Left right after the grace on close: it fences at once, withdraws the endpoint, and a
        // standby takes over.
        lifecycle.onClose("leadership", leadership::close);
        // First on close: NOT_SERVING, then the grace while it still leads and takes calls.
        ReadinessWatch r = readiness;
        lifecycle.onClose("shutdown grace", () -> r.drain(config.shutdownGrace()));
        try {
            leadership.start();
        } catch (Exception e) {
            throw new IOException("cannot join the balancer election at " + config.namespace() + "/balancer/leader", e);
        }
        log.info("balancer {} started (topology at {}{}; interval {} ms){}", address, config.zookeeper(),
                config.namespace(), config.interval().toMillis(),
                metricsServer == null ? "" : "; metrics " + metricsServer.url());
    }

    /**
     * The stop of the server and of the work behind it: every service NOT_SERVING; the scheduled
     * work (started after the server, so it has no closer of its own) and the pulls interrupted;
     * the server's calls awaited; then the scheduled work and the pulls, each wait bounded.
     */
    private void stopServing(Server built, NodeLifecycle.Closer pulls) {
        health.enterTerminalState();
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        pullThreads.shutdownNow();
        built.shutdown();
        NodeServer.awaitCalls(built, NodeServer.STOP_WAIT);
        if (scheduler != null) {
            NodeLifecycle.awaitTermination(scheduler, WORKERS_STOP_WAIT);
        }
        pulls.close();
    }

    /** A new leader's duty: complete every PENDING OUT transfer on every live shard. */
    private boolean recoverAll(Fence fence) {
        TransferRecovery.Summary s = recovery.completePending(fence, topology.current(), Duration.ZERO);
        metrics.recoveryPass();
        return s.complete();
    }

    private Optional<Fence> servingFence() {
        Leadership l = leadership;
        return l == null ? Optional.empty() : l.servingFence();
    }

    /** Health of BalancerService follows leadership: SERVING only while leading. */
    private void onLeadership(Leadership.State s) {
        if (s != Leadership.State.CLOSED) {
            health.setStatus(BalancerServiceGrpc.SERVICE_NAME, s == Leadership.State.SERVING ? ServingStatus.SERVING
                    : ServingStatus.NOT_SERVING);
        }
    }

    /**
     * The balancer's channels to shard nodes, over TLS trusting {@code trustCertificate} or
     * plaintext when it is null. Replies are handed off the transport threads, and gRPC's
     * transparent retry stays on beneath the transfer steps' own retries.
     */
    static ShardChannels shardChannels(File trustCertificate) {
        return shardChannels(ClientTls.trusting(trustCertificate), null);
    }

    /** As {@link #shardChannels(File)}, dialled as {@code tls} says, each channel's calls counted on {@code registry} when it is not null. */
    static ShardChannels shardChannels(ClientTls tls, io.micrometer.core.instrument.MeterRegistry registry) {
        ShardChannels.Dial dial = new ShardChannels.Dial(tls, SHARD_REPLY_BYTES_MAX, false, true);
        return new ShardChannels(address -> registry == null ? dial.open(address)
                : dial.open(address, Metrics.grpcClientInterceptor(registry, address)), SHARD_CHANNEL_CLOSE_WAIT);
    }

    private void retainChannels(Topology t) {
        Set<String> addresses = new HashSet<>();
        for (var cell : t.cells()) {
            for (ShardInfo s : t.shards(cell.getName())) {
                addresses.add(s.getAddress());
            }
        }
        channels.retain(addresses);
    }

    private static java.util.concurrent.ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    public BalancerConfig config() {
        return config;
    }

    public BalancerMetrics metrics() {
        return metrics;
    }

    /** Where the balancer's metrics are served ({@code http://host:port/metrics}), or empty when they are off. */
    public synchronized Optional<String> metricsUrl() {
        return metricsServer == null ? Optional.empty() : Optional.of(metricsServer.url());
    }

    /** The balancer's meters, or null when metrics are off. */
    public synchronized io.micrometer.core.instrument.MeterRegistry meters() {
        return registry;
    }

    /** The gRPC port (the bound one when configured 0). */
    public synchronized int port() {
        return server.getPort();
    }

    /** The port of the health-only listener, or -1 when there is none. */
    public synchronized int healthPort() {
        return healthListener == null ? -1 : healthListener.getPort();
    }

    /** host:port: participant id and, while leading, the published endpoint. */
    public synchronized String address() {
        return address;
    }

    /** The node's ZooKeeper client (for fault tests that expire its session). */
    public synchronized CuratorFramework curator() {
        return curator;
    }

    /** Elected, done recovering, endpoint published. */
    public boolean isLeader() {
        Leadership l = leadership;
        return l != null && l.isServing();
    }

    public Leadership.State leadershipState() {
        Leadership l = leadership;
        return l == null ? Leadership.State.LATENT : l.state();
    }

    /** The latest scheduled invariant check's report, or null before the first. */
    public CrossShardReport lastInvariantReport() {
        InvariantWatch w = invariants;
        return w == null ? null : w.lastReport();
    }

    /** Runs the invariant check now (on the caller's thread; only acts while leading). */
    public void checkInvariantsNow() {
        invariants.run();
    }

    /** Stops every part in the reverse order of the start (see the class comment). Idempotent. */
    @Override
    public synchronized void close() {
        if (lifecycle.close()) {
            log.info("balancer {} stopped ({})", address == null ? "(never listened)" : address,
                    metrics.summaryLine());
        }
    }
}
