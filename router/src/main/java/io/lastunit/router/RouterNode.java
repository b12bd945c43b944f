package io.lastunit.router;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.RequestValidator;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import io.lastunit.router.auth.AuthInterceptor;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.grpc.RouterInventoryService;
import io.lastunit.router.route.BalancerClient;
import io.lastunit.router.route.ReserveBatcher;
import io.lastunit.router.route.KeyClaimer;
import io.lastunit.router.route.ReserveFlow;
import io.lastunit.router.route.Router;
import io.lastunit.router.route.ShardChannels;
import io.lastunit.router.shed.BuyerRateLimiter;
import io.lastunit.router.shed.InFlightLimiter;
import io.lastunit.router.shed.RecentKeys;
import io.lastunit.router.shed.SoldOutCache;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running router: a ZooKeeper client and the watched topology, pooled channels to the
 * shard nodes, the watched balancer leader endpoint with its channel, and the public gRPC server
 * behind authentication (InventoryService, health, and server reflection v1 and v1alpha; only
 * the last two are open without a token, see {@link AuthInterceptor}). Started in that order and
 * stopped in reverse. Lifecycle LATENT → STARTED → CLOSED; {@link #close()} is idempotent.
 * Thread-safe.
 */
public final class RouterNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RouterNode.class);

    private final RouterConfig config;
    private final LongSupplier nanoClock;
    private CuratorFramework curator;
    private TopologyCache topology;
    private ShardChannels channels;
    private ReserveBatcher batcher;
    private BalancerClient balancer;
    private ScheduledExecutorService scheduler;
    private RouterInventoryService service;
    private Server server;
    private HealthStatusManager health;
    private boolean started;
    private boolean closed;

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
    }

    public synchronized RouterNode start() throws IOException, InterruptedException {
        if (started || closed) {
            throw new IllegalStateException("router " + config.routerId() + " was already started");
        }
        started = true;
        curator = Curators.newClient(config.zookeeper(), Duration.ofSeconds(15));
        curator.start();
        topology = new TopologyCache(curator, config.namespace(), config.topologyStaleMax(), InstantSource.system());
        topology.start(Duration.ofSeconds(30));
        channels = new ShardChannels(config.shardTrustCertificate());
        topology.addListener(this::retainChannels);
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "router-retry");
            t.setDaemon(true);
            return t;
        });
        balancer = new BalancerClient(curator, config.namespace(), config.shardTrustCertificate()).start();
        Router router = new Router(topology::current, channels, scheduler, config.attemptsMax(), config.backoffBase(),
                config.defaultDeadline());
        ReserveFlow reserveFlow = new ReserveFlow(balancer::pull, new KeyClaimer(router), config.pullWait(),
                config.pullAttemptsMax());
        batcher = new ReserveBatcher(config.reserveBatchMax(), config.reserveQueueMax(),
                config.reserveBatchesInFlightMax(), config.reserveBatchHoldAbove());
        channels.onRemoved(batcher::forget);
        service = new RouterInventoryService(new RequestValidator(config.limits()), router, reserveFlow, batcher,
                topology::current,
                new SoldOutCache(config.soldOutTtl().toNanos(), config.soldOutEntriesMax(), nanoClock),
                new BuyerRateLimiter(config.buyerRatePerSecond(), config.buyerBurst(), config.buyersTrackedMax(),
                        nanoClock),
                new InFlightLimiter(config.inFlightPerItemMax()),
                new RecentKeys(Duration.ofMinutes(10).toNanos(), config.recentKeysMax(), nanoClock));
        health = new HealthStatusManager();
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(config.host(), config.port()))
                .directExecutor()
                // Every service on the port goes through authentication; AuthInterceptor opens
                // only health and reflection, so a service added here later is closed by default.
                .intercept(new AuthInterceptor(Authenticator.fromGrants(config.tokenGrants())))
                .addService(service)
                .addService(health.getHealthService())
                .addService(ProtoReflectionServiceV1.newInstance())
                .addService(reflectionV1Alpha())
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxInboundMessageSize(1 << 20);
        if (config.tlsCertificate() != null) {
            b.sslContext(GrpcSslContexts.forServer(config.tlsCertificate(), config.tlsKey()).build());
        }
        server = b.build().start();
        // By name too, for probes that ask for the API's service; close() turns both NOT_SERVING.
        health.setStatus("", io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
        health.setStatus(InventoryServiceGrpc.SERVICE_NAME, io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
        log.info("router {} serving on {}:{} (topology at {}{})", config.routerId(), config.host(), server.getPort(),
                config.zookeeper(), config.namespace());
        return this;
    }

    /** The older reflection protocol: some clients (older grpcurl releases among them) speak only this one. */
    @SuppressWarnings("deprecation")
    private static io.grpc.BindableService reflectionV1Alpha() {
        return ProtoReflectionService.newInstance();
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

    public RouterConfig config() {
        return config;
    }

    /** Reserve calls the router answered itself (sold-out cache, rate limit, in-flight cap). */
    public synchronized long shedCount() {
        return service.shedCount();
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

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (server != null) {
            health.enterTerminalState();
            server.shutdown();
            try {
                if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                    server.shutdownNow();
                }
            } catch (InterruptedException e) {
                server.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        if (batcher != null) {
            batcher.close();
        }
        if (channels != null) {
            channels.close();
        }
        if (balancer != null) {
            balancer.close();
        }
        if (topology != null) {
            topology.close();
        }
        if (curator != null) {
            curator.close();
        }
        log.info("router {} stopped", config.routerId());
    }
}
