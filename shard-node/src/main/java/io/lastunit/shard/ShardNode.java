package io.lastunit.shard;

import com.zaxxer.hikari.HikariConfig;
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
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
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
    /** Move calls waiting for the move thread (one mover makes them one at a time per shard). */
    static final int MOVE_CALLS_QUEUED_MAX = 64;

    private final ShardConfig config;
    private final InstantSource clock;
    private final NodeLifecycle lifecycle;
    private HikariDataSource dataSource;
    private LaneEngine engine;
    private ExpirySweeper sweeper;
    private ReadPool reads;
    private InvariantChecker checker;
    private Server server;
    private InventoryGrpcService inventory;
    private ShardGrpcService shardService;
    private CuratorFramework curator;
    /** Read by the lanes (a MOVED answer's epoch) from their threads; set once in start. */
    private volatile TopologyCache topology;
    private ShardRegistration registration;
    /** The tenants this node served a move's call for lately: retention leaves them alone. */
    private final MoveActivity moveActivity = new MoveActivity(System::nanoTime);
    private Retention retention;

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
        log.info("shard {} serving on {}:{} ({} lanes, regions {})", config.shardId(), config.host(), port(),
                config.lanes().laneCount(), config.limits().regions());
        return this;
    }

    private void startAll() throws IOException {
        // First and released last: one node per shard database (a second one waits, then refuses).
        DatabaseOwner owner;
        try {
            owner = DatabaseOwner.acquire(config.jdbc().url(), config.jdbc().user(), config.jdbc().password(),
                    "lastunit-shard-" + config.shardId() + "-owner", OWNER_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while taking the shard database's ownership", e);
        }
        lifecycle.onClose("database ownership", owner::close);
        dataSource = dataSource(config);
        lifecycle.onClose("connection pool", dataSource::close);
        Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();
        engine = new LaneEngine(dataSource, config.lanes(), config.limits(), clock, this::epochOf);
        NodeLifecycle.Closer lanes = lifecycle.onClose("lane engine", engine::close);
        engine.start();
        reads = new ReadPool(dataSource, config.readThreads(), config.readQueueCapacity(),
                Duration.ofMillis(config.lanes().retryAfterMs()));
        NodeLifecycle.Closer readPool = lifecycle.onClose("read pool", reads::close);
        checker = new InvariantChecker(dataSource, config.shardId());
        sweeper = new ExpirySweeper(dataSource, engine, config.sweepInterval(), config.sweepBucketsPerTickMax());
        NodeLifecycle.Closer sweeping = lifecycle.onClose("expiry sweeper", sweeper::close);
        sweeper.start();
        RequestValidator validator = new RequestValidator(config.limits());
        PlacementGuard placement = PlacementGuard.STANDALONE;
        if (config.topology().enabled()) {
            curator = Curators.newClient(config.topology().zookeeper(), Duration.ofSeconds(15));
            lifecycle.onClose("ZooKeeper client", curator::close);
            curator.start();
            topology = new TopologyCache(curator, config.topology().namespace(), config.topology().staleMax(),
                    InstantSource.system());
            lifecycle.onClose("topology cache", topology::close);
            topology.start(Duration.ofSeconds(30));
            placement = new PlacementGuard(topology, config.shardId());
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
        if (config.tls().enabled()) {
            builder.sslContext(io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts
                    .forServer(config.tls().certificate(), config.tls().key()).build());
        }
        PlacementGuard guard = placement;
        inventory = new InventoryGrpcService(validator, engine, reads, placement, standaloneRegion());
        // A move's calls (an export holds its thread and connection for as long as the mover takes its
        // chunks) run on a thread of their own, so GetStock, GetHold and the balancer's reads never
        // wait behind a copy.
        ReadPool moveCalls = new ReadPool(dataSource, 1, MOVE_CALLS_QUEUED_MAX,
                Duration.ofMillis(config.lanes().retryAfterMs()), "move-");
        NodeLifecycle.Closer movePool = lifecycle.onClose("move calls", moveCalls::close);
        TenantMoves moves = new TenantMoves(moveCalls, engine, config.shardId(),
                Duration.ofMillis(config.lanes().retryAfterMs()), moveActivity);
        shardService = new ShardGrpcService(validator, checker, reads, config.shardId(), engine, placement,
                () -> guard.regionOr("", standaloneRegion()), moves);
        Server built = builder.addService(inventory).addService(shardService).build();
        lifecycle.onClose("gRPC server", () -> {
            NodeServer.stopTakingCalls(built, health);
            // What was accepted is answered before the wait for the calls in flight ends.
            sweeping.close();
            lanes.close();
            readPool.close();
            movePool.close();
            NodeServer.awaitCalls(built, NodeServer.STOP_WAIT);
        });
        server = built.start();
        // By name too, for probes that ask for one service; close() turns all three NOT_SERVING.
        NodeServer.serving(health, "", InventoryServiceGrpc.SERVICE_NAME, ShardServiceGrpc.SERVICE_NAME);
        if (curator != null) {
            // Registered only once listening, so no router is sent to a port that is not open yet.
            String address = config.topology().advertisedAddress().isBlank()
                    ? config.host() + ":" + server.getPort() : config.topology().advertisedAddress();
            registration = new ShardRegistration(curator, config.topology().namespace(), LiveShard.newBuilder()
                    .setShardId(config.shardId()).setAddress(address).setStartedAtMs(clock.millis()).build());
            // Deleted first on close: routers stop sending new calls here.
            lifecycle.onClose("live registration", registration::close);
            registration.start();
            if (!registration.awaitRegistered(Duration.ofSeconds(30))) {
                throw new IOException("shard " + config.shardId() + " could not register in ZooKeeper");
            }
        }
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

    private static HikariDataSource dataSource(ShardConfig config) {
        HikariConfig h = new HikariConfig();
        h.setPoolName("shard-" + config.shardId());
        h.setJdbcUrl(config.jdbc().url());
        h.setUsername(config.jdbc().user());
        h.setPassword(config.jdbc().password());
        h.setMaximumPoolSize(config.poolSize());
        h.setMinimumIdle(config.poolSize());
        h.setAutoCommit(false);
        h.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        h.setConnectionTimeout(5_000);
        h.setValidationTimeout(2_000);
        h.addDataSourceProperty("tcpKeepAlive", "true");
        h.addDataSourceProperty("ApplicationName", "lastunit-shard-" + config.shardId());
        return new HikariDataSource(h);
    }

    public synchronized int port() {
        return server.getPort();
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
