package io.lastunit.shard;

import com.zaxxer.hikari.HikariDataSource;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.RequestValidator;
import io.lastunit.common.lifecycle.NodeLifecycle;
import io.lastunit.common.lifecycle.NodeServer;
import io.lastunit.shard.expiry.ExpirySweeper;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.lifecycle.NodeTls;
import io.lastunit.common.tls.PeerAuthInterceptor;
import io.lastunit.common.tls.TlsCredentials;
import io.lastunit.shard.grpc.ShardAllowList;
import io.lastunit.common.topology.ShardRegistration;
import io.lastunit.common.topology.TopologyCache;
import io.lastunit.shard.grpc.InventoryGrpcService;
import io.lastunit.shard.grpc.PlacementGuard;
import org.apache.curator.framework.CuratorFramework;
import io.lastunit.shard.grpc.ShardGrpcService;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.move.MoveActivity;
import io.lastunit.shard.move.TenantMoves;
import io.lastunit.shard.retention.Retention;
import io.lastunit.shard.store.EmbeddedDatabase;
import io.lastunit.shard.store.DatabaseOwner;
import io.lastunit.shard.store.InvariantChecker;
import io.lastunit.shard.store.ReadPool;
import io.lastunit.shard.store.ShardPools;
import io.lastunit.shard.store.StandbyWatch;
import io.lastunit.common.metrics.Metrics;
import io.lastunit.common.metrics.MetricsConfig;
import io.lastunit.common.metrics.MetricsServer;
import io.lastunit.common.health.ReadinessWatch;
import io.lastunit.shard.health.LaneProgress;
import io.lastunit.shard.metrics.ShardChecks;
import io.lastunit.shard.metrics.ShardMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running shard node: its connection pool and schema, the lane engine, the read pool, the
 * expiry sweeper, with {@code zookeeper} set the ZooKeeper client and the topology, retention, the gRPC
 * server (InventoryService, ShardService, health, server reflection v1 and v1alpha; none
 * authenticates) and the live registration, started in that order and stopped in reverse
 * ({@link NodeLifecycle}): the live registration goes first, then the server stops taking calls,
 * the lanes finish what they accepted before the server's calls in flight are awaited, and the
 * pool closes last. Lifecycle LATENT → STARTED → CLOSED; {@link #close()} is idempotent.
 * Thread-safe.
 */
public final class ShardNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShardNode.class);
    /**
     * How long a starting node waits for the shard database's previous owner to let go (a node
     * killed a moment ago leaves its session for PostgreSQL to end) before it refuses to start.
     */
    static final Duration OWNER_WAIT = Duration.ofSeconds(10);
    /**
     * How often the node asks whether it still owns the shard database, and takes the ownership
     * again after a database restart or failover ended its session (DatabaseOwner).
     */
    static final Duration OWNER_CHECK_INTERVAL = Duration.ofSeconds(1);
    /** Move calls waiting for the move thread (one mover makes them one at a time per shard). */
    static final int MOVE_CALLS_QUEUED_MAX = 64;

    private final ShardConfig config;
    private final InstantSource clock;
    private final NodeLifecycle lifecycle;
    private ShardPools pools;
    private DatabaseOwner owner;
    /** This start of the node, in its ownership session's name: unique, so a fence can tell two starts apart. */
    private final String instance = String.format("%08x", new SecureRandom().nextInt());
    private HikariDataSource dataSource;
    private LaneEngine engine;
    private ExpirySweeper sweeper;
    private ReadPool reads;
    private InvariantChecker checker;
    private Server server;
    /** The plaintext health-only listener, or null when there is none. */
    private Server healthListener;
    private InventoryGrpcService inventory;
    private ShardGrpcService shardService;
    private CuratorFramework curator;
    /** Read by the lanes (a MOVED answer's epoch) from their threads; set once in start. */
    private volatile TopologyCache topology;
    private ShardRegistration registration;
    /** The tenants this node served a move's call for lately: retention leaves them alone. */
    private final MoveActivity moveActivity = new MoveActivity(System::nanoTime);
    private Retention retention;
    /** The node's meters, or null when metrics are off. */
    private PrometheusMeterRegistry registry;
    private MetricsServer metricsServer;
    /** Keeps the gRPC health true; set once serving, read by the server's closer. */
    private volatile ReadinessWatch readiness;
    /** How often the health's conditions are looked at. */
    static final Duration READINESS_INTERVAL = Duration.ofMillis(500);

    /**
     * @param embedded an embedded database this node owns and closes, or null
     */
    public ShardNode(ShardConfig config, InstantSource clock, EmbeddedDatabase embedded) {
        this.config = config;
        this.clock = clock;
        this.lifecycle = new NodeLifecycle("shard node " + config.shardId(), log);
        if (embedded != null) {
            lifecycle.onClose("embedded PostgreSQL", embedded::close);
        }
    }

    /** Starts every part, in the order of the class comment; a start that fails closes what it opened. */
    public synchronized ShardNode start() throws IOException {
        lifecycle.begin();
        try {
            startAll();
        } catch (Throwable t) {
            close();
            throw t;
        }
        log.info("shard {} serving on {}:{} ({} lanes, regions {}){}", config.shardId(), config.host(), port(),
                config.lanes().laneCount(), config.limits().regions(),
                metricsServer == null ? "" : "; metrics " + metricsServer.url());
        return this;
    }

    private void startAll() throws IOException {
        // First and released last: one node per shard database (a second one waits, then refuses).
        DatabaseOwner.TakeOver takeOver = DatabaseOwner.TakeOver.NEVER;
        if (config.topology().enabled()) {
            curator = Curators.newClient(config.topology().zookeeper(), config.topology().sessionTimeout(),
                    config.topology().credentials(), config.topology().tls());
            lifecycle.onClose("ZooKeeper client", curator::close);
            curator.start();
            takeOver = this::sessionsOfAGoneNode;
        }
        DatabaseOwner owner;
        try {
            owner = DatabaseOwner.acquire(config.jdbc().url(), config.jdbc().user(), config.jdbc().password(),
                    ownerPrefix() + instance, OWNER_WAIT, takeOver);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while taking the shard database's ownership", e);
        }
        lifecycle.onClose("database ownership", owner::close);
        owner.watch(OWNER_CHECK_INTERVAL, state -> {
            if (state == DatabaseOwner.State.LOST) {
                log.error("shard {}: another node owns the shard database now; this node's connections are"
                        + " refused from now on, and it leaves the live shards (stop it)", config.shardId());
                leaveLiveShards();
            } else {
                log.warn("shard {}: database ownership {}", config.shardId(), state);
            }
        });
        this.owner = owner;
        MetricsConfig metricsConfig = config.observability().metrics();
        if (metricsConfig.enabled()) {
            registry = Metrics.newRegistry("shard", "shard", config.shardId());
        }
        pools = ShardPools.open(config, owner.fenceSql(), registry);
        dataSource = pools.writes();
        lifecycle.onClose("connection pools", pools::close);
        Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();
        engine = new LaneEngine(dataSource, config.lanes(), config.limits(), clock, this::epochOf);
        if (registry != null) {
            engine.observe(new ShardMetrics(registry, engine));
        }
        NodeLifecycle.Closer lanes = lifecycle.onClose("lane engine", engine::close);
        // Before the lanes take work: a node started while its standby is away refuses writes at once.
        StandbyWatch standbyWatch = new StandbyWatch(pools.reads(), config.jdbc().timeouts().standbyCheck(),
                engine.gate(), config.shardId()).start();
        lifecycle.onClose("standby watch", standbyWatch::close);
        engine.start();
        reads = new ReadPool(pools.reads(), config.readThreads(), config.readQueueCapacity(),
                Duration.ofMillis(config.lanes().retryAfterMs()));
        NodeLifecycle.Closer readPool = lifecycle.onClose("read pool", reads::close);
        checker = new InvariantChecker(pools.reads(), config.shardId());
        ShardChecks checks = new ShardChecks(checker, pools.reads(), registry,
                config.observability().invariantCheckInterval(), config.observability().databaseSampleInterval(),
                config.shardId()).start();
        lifecycle.onClose("scheduled checks", checks::close);
        sweeper = new ExpirySweeper(dataSource, engine, config.sweepInterval(), config.sweepBucketsPerTickMax());
        NodeLifecycle.Closer sweeping = lifecycle.onClose("expiry sweeper", sweeper::close);
        sweeper.start();
        RequestValidator validator = new RequestValidator(config.limits());
        PlacementGuard placement = PlacementGuard.STANDALONE;
        if (config.topology().enabled()) {
            topology = new TopologyCache(curator, config.topology().namespace(), config.topology().staleMax(),
                    InstantSource.system());
            lifecycle.onClose("topology cache", topology::close);
            topology.start(Duration.ofSeconds(30));
            placement = new PlacementGuard(topology, config.shardId());
        }
        if (registry != null) {
            // The cell of this shard, as a label to join its meters with (shards never change cells).
            String cell = topology == null ? "" : topology.current().shard(config.shardId())
                    .map(io.lastunit.api.topology.v1.ShardInfo::getCell).orElse("");
            Gauge.builder(Metrics.PREFIX + "shard.info", () -> 1).tag("cell", cell)
                    .description("1, with the shard's cell as a label (join: * on(shard) group_left(cell))")
                    .register(registry);
        }
        if (config.retention().enabled()) {
            // After the topology, which tells it the tenants a move names; its batches take a pooled
            // connection each, for milliseconds (the pool's spare).
            retention = new Retention(dataSource, config.retention(), this::moving);
            lifecycle.onClose("retention", retention::close);
            retention.start();
        }
        HealthStatusManager health = new HealthStatusManager();
        // Handlers never block (they validate and enqueue), so they run on the transport threads.
        NettyServerBuilder builder = NodeServer.builder(config.host(), config.port(), health, 1 << 20);
        if (config.tls().mutual() != null) {
            // Mutual TLS: callers are admitted by their certificate's role (inside the metrics
            // interceptor, added below, so refused calls are counted too).
            TlsCredentials credentials = NodeTls.open(config.tls().mutual(), lifecycle, registry);
            builder.sslContext(credentials.forServer())
                    .intercept(new PeerAuthInterceptor(ShardAllowList.of(config.shardId())));
        } else if (config.tls().enabled()) {
            builder.sslContext(io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts
                    .forServer(config.tls().certificate(), config.tls().key()).build());
        }
        PlacementGuard guard = placement;
        inventory = new InventoryGrpcService(validator, engine, reads, placement, standaloneRegion());
        // A move's calls (an export holds its thread and connection for as long as the mover takes its
        // chunks) run on a thread of their own, so GetStock, GetHold and the balancer's reads never
        // wait behind a copy.
        ReadPool moveCalls = new ReadPool(dataSource, 1, MOVE_CALLS_QUEUED_MAX,
                Duration.ofMillis(config.lanes().retryAfterMs()), "move-", false);
        // CompleteTransfer writes off the lanes: on the write pool, never on the read-only one.
        ReadPool completions = new ReadPool(dataSource, 1, config.readQueueCapacity(),
                Duration.ofMillis(config.lanes().retryAfterMs()), "complete-", false);
        NodeLifecycle.Closer completionPool = lifecycle.onClose("transfer completions", completions::close);
        NodeLifecycle.Closer movePool = lifecycle.onClose("move calls", moveCalls::close);
        TenantMoves moves = new TenantMoves(moveCalls, engine, config.shardId(),
                Duration.ofMillis(config.lanes().retryAfterMs()), moveActivity);
        shardService = new ShardGrpcService(validator, checker, reads, completions, config.shardId(), engine,
                placement, () -> guard.regionOr("", standaloneRegion()), moves);
        if (registry != null) {
            builder.intercept(Metrics.grpcServerInterceptor(registry));
            if (curator != null) {
                CuratorFramework zk = curator;
                Gauge.builder(Metrics.PREFIX + "zookeeper.connected", zk, z -> z.getZookeeperClient().isConnected() ? 1 : 0)
                        .description("1 while the node's ZooKeeper session is connected").register(registry);
            }
            metricsServer = MetricsServer.start(metricsConfig.host(), metricsConfig.port(), registry);
            lifecycle.onClose("metrics server", metricsServer::close);
        }
        Server built = builder.addService(inventory).addService(shardService).build();
        healthListener = NodeServer.startHealthListener(config.host(), config.observability().healthPort(), health);
        if (healthListener != null) {
            // Registered before the server's closer, so it closes after it: probes see the drain.
            lifecycle.onClose("health listener", healthListener::shutdownNow);
        }
        lifecycle.onClose("gRPC server", () -> {
            ReadinessWatch r = readiness;
            if (r != null) {
                r.drain(config.observability().shutdownGrace());
            }
            NodeServer.stopTakingCalls(built, health);
            // What was accepted is answered before the wait for the calls in flight ends.
            sweeping.close();
            lanes.close();
            readPool.close();
            movePool.close();
            completionPool.close();
            NodeServer.awaitCalls(built, NodeServer.STOP_WAIT);
        });
        server = built.start();
        // By name too, for probes that ask for one service; close() turns all three NOT_SERVING.
        readiness = new ReadinessWatch("shard " + config.shardId(), health,
                List.of("", InventoryServiceGrpc.SERVICE_NAME, ShardServiceGrpc.SERVICE_NAME), readinessConditions(),
                READINESS_INTERVAL, System::nanoTime).start();
        lifecycle.onClose("readiness watch", readiness::close);
        if (curator != null) {
            // Registered only once listening, so no router is sent to a port that is not open yet.
            String address = config.topology().advertisedAddress().isBlank()
                    ? config.host() + ":" + server.getPort() : config.topology().advertisedAddress();
            registration = new ShardRegistration(curator, config.topology().namespace(), LiveShard.newBuilder()
                    .setShardId(config.shardId()).setAddress(address).setStartedAtMs(clock.millis())
                    .setMetricsUrl(metricsServer == null ? "" : metricsServer.url()).build());
            // Deleted first on close: routers stop sending new calls here.
            lifecycle.onClose("live registration", registration::close);
            registration.start();
            if (!registration.awaitRegistered(Duration.ofSeconds(30))) {
                throw new IOException("shard " + config.shardId() + " could not register in ZooKeeper");
            }
        }
    }

    /**
     * What the node's health depends on (docs/operations.md, "Health"): its database's ownership
     * session, its ZooKeeper session (with topology), and lanes that finish batches while work waits.
     */
    private List<ReadinessWatch.Condition> readinessConditions() {
        ShardConfig.Observability o = config.observability();
        List<ReadinessWatch.Condition> conditions = new java.util.ArrayList<>();
        DatabaseOwner own = owner;
        conditions.add(new ReadinessWatch.Condition("database", o.databaseDownMax(),
                () -> own.state() == DatabaseOwner.State.OWNED));
        if (curator != null) {
            CuratorFramework zk = curator;
            conditions.add(new ReadinessWatch.Condition("zookeeper", config.topology().staleMax(),
                    () -> zk.getZookeeperClient().isConnected()));
        }
        LaneProgress lanes = new LaneProgress(engine);
        conditions.add(new ReadinessWatch.Condition("lanes", o.laneStuckMax(), lanes::moving));
        return conditions;
    }

    /**
     * The tenant's epoch in this node's topology view, for a lane's MOVED answer: -1 standalone (or
     * while the topology is not loaded yet, or once it is closed). Throws TOPOLOGY_UNAVAILABLE when
     * the view is too stale to tell.
     */
    private int epochOf(String tenant) {
        TopologyCache t = topology;
        if (t == null) {
            return -1;
        }
        try {
            return t.current().epochOf(tenant);
        } catch (IllegalStateException notServing) {
            return -1;
        }
    }

    /**
     * Whether a tenant move names the tenant, for retention: this node served a move's call for it
     * lately, or its placement names a move or is MOVING. Throws when the topology is too stale to
     * tell (retention then deletes nothing).
     */
    private boolean moving(String tenant) {
        if (moveActivity.recent(tenant)) {
            return true;
        }
        TopologyCache t = topology;
        if (t == null) {
            return false;
        }
        Topology now = t.current();
        return !now.moveOf(tenant).isEmpty() || now.stateOf(tenant) == TenantState.MOVING;
    }

    public synchronized int port() {
        return server.getPort();
    }

    /** The port of the health-only listener, or -1 when there is none. */
    public synchronized int healthPort() {
        return healthListener == null ? -1 : healthListener.getPort();
    }

    /** Where the node's metrics are served ({@code http://host:port/metrics}), or empty when they are off. */
    public synchronized java.util.Optional<String> metricsUrl() {
        return metricsServer == null ? java.util.Optional.empty() : java.util.Optional.of(metricsServer.url());
    }

    /** The node's meters, or null when metrics are off. */
    public synchronized io.micrometer.core.instrument.MeterRegistry meters() {
        return registry;
    }

    public ShardConfig config() {
        return config;
    }

    public synchronized LaneEngine engine() {
        return engine;
    }

    /** The region this node serves when no topology says otherwise. */
    private String standaloneRegion() {
        String r = config.topology().standaloneRegion();
        return r.isEmpty() ? config.limits().regions().iterator().next() : r;
    }

    public synchronized InvariantChecker checker() {
        return checker;
    }

    /** Public API calls this node has received (answered or refused), each entry of a ReserveBatch as one. */
    public synchronized long callsServed() {
        return inventory == null ? 0 : inventory.calls() + shardService.calls();
    }

    /** The node's ZooKeeper client, or null when standalone. */
    public synchronized CuratorFramework curator() {
        return curator;
    }

    /** How this shard's ownership sessions are named, before the start's own 8 hex digits. */
    private String ownerPrefix() {
        return "lastunit-shard-" + config.shardId() + "-owner-";
    }

    /**
     * The take-over rule: the database's owner is another start of this shard whose node is not
     * live in ZooKeeper (its ephemeral {@code live/{shard}} is gone: the node was killed, paused
     * or cut off for longer than its session). Then its ownership session and its pools' sessions
     * are ended; if it comes back, its connections fail the fence. Anything else: wait, then refuse.
     */
    private List<String> sessionsOfAGoneNode(String holder) {
        if (!holder.startsWith(ownerPrefix())) {
            return List.of();
        }
        try {
            if (!curator.blockUntilConnected((int) OWNER_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                return List.of();
            }
            String live = ShardRegistration.pathOf(config.topology().namespace(), config.shardId());
            if (curator.checkExists().forPath(live) != null) {
                return List.of();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        } catch (Exception e) {
            log.warn("shard {}: cannot tell from ZooKeeper whether the database's owner {} is gone: {}",
                    config.shardId(), holder, e.toString());
            return List.of();
        }
        return List.of(holder, "lastunit-shard-" + config.shardId());
    }

    /** After the ownership was lost: no router is sent here any more. */
    private void leaveLiveShards() {
        ShardRegistration r;
        synchronized (this) {
            r = registration;
        }
        if (r != null) {
            r.close();
        }
    }

    /** The node's ownership of its database (null before the start). */
    public synchronized DatabaseOwner owner() {
        return owner;
    }

    /** The read pool (read-only sessions with a statement timeout). */
    public synchronized DataSource readDataSource() {
        return pools.reads();
    }

    public synchronized DataSource dataSource() {
        return dataSource;
    }

    public synchronized ExpirySweeper sweeper() {
        return sweeper;
    }

    /** The node's retention, or null when {@code retention-enabled} is false. */
    public synchronized Retention retention() {
        return retention;
    }

    /** Stops every part in the reverse order of the start (see the class comment). Idempotent. */
    @Override
    public synchronized void close() {
        if (lifecycle.close()) {
            log.info("shard {} stopped", config.shardId());
        }
    }
}
