package io.lastunit.bench.chaos;

import io.lastunit.admin.cli.JdbcUrls;
import io.lastunit.admin.platform.EmbeddedZooKeeper;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.bench.chaos.plan.ScheduledFault;
import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.common.topology.Topology;
import io.lastunit.shard.ShardConfig;
import io.lastunit.shard.store.local.BaseBackupMethod;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.lastunit.shard.store.local.PostgresServer;
import io.lastunit.shard.store.local.ServerSettings;
import io.lastunit.shard.store.local.ShutdownMode;
import io.lastunit.shard.store.local.StandbyPair;
import io.lastunit.testkit.faults.ClockSkewNemesis;
import io.lastunit.testkit.faults.Nemesis;
import io.lastunit.testkit.faults.PauseNemesis;
import io.lastunit.testkit.faults.ProxyNemesis;
import io.lastunit.testkit.faults.SkewedClock;
import io.lastunit.testkit.faults.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The platform a chaos run breaks, all on 127.0.0.1 in this process: a PostgreSQL primary with a
 * synchronous standby ({@link StandbyPair}, fsync off: the faults are process crashes, not machine
 * crashes), ZooKeeper, one cell of {@code shards} shard nodes and a router, with a {@link TcpProxy}
 * on every link a fault cuts: each shard's two JDBC hosts (primary and standby, in its multi-host
 * URL), each shard's gRPC port (the address the topology gives routers), and ZooKeeper (the
 * connect string everyone is given). Each shard node in this JVM runs its lanes on a
 * {@link SkewedClock}; the one a pause or a kill targets runs as its own JVM ({@link ShardProcess}).
 *
 * <p>{@link #nemesis} turns a scheduled fault into a {@link Nemesis} on these parts. After the one
 * failover a run may have, the promoted server commits alone until its new synchronous standby
 * ({@value #REBUILT_STANDBY}, made by the failover's heal) streams: {@link #asynchronousMillis()}
 * says for how long, and the report prints it. Not thread-safe: one fault at a time, from one thread.
 */
final class ChaosPlatform implements AutoCloseable {
    static final String TENANT = "chaos-co";
    static final String REGION = "local";
    static final String DB_PREFIX = "lastunit_chaos_";
    static final String REBUILT_STANDBY = "standby_b";
    /** The shard nodes' bounds on the database, small so that a fault ends calls fast (as the fault tests). */
    static final Map<String, Object> SHARD_SETTINGS = Map.of(
            "lastunit.shard.jdbc-socket-timeout-ms", 3_000,
            "lastunit.shard.jdbc-lock-timeout-ms", 1_000,
            "lastunit.shard.jdbc-connect-timeout-ms", 2_000);
    static final Duration LATENCY_DATABASE = Duration.ofMillis(20);
    static final Duration LATENCY_SHARD = Duration.ofMillis(50);
    static final long THROTTLE_BYTES_PER_SECOND = 64 * 1024;

    private final List<AutoCloseable> opened = new ArrayList<>();
    private final Map<String, TcpProxy[]> databaseLinks = new LinkedHashMap<>();
    private final Map<String, TcpProxy> shardLinks = new LinkedHashMap<>();
    private final Map<String, SkewedClock> clocks = new LinkedHashMap<>();
    private final Map<String, ShardProcess> processes = new LinkedHashMap<>();
    private StandbyPair pair;
    private PostgresServer rebuilt;
    private TcpProxy zookeeperLink;
    private LocalPlatform platform;
    private long failedOverAtNanos;
    private long asynchronousNanos = -1;
    private boolean closed; // guarded by this

    ChaosPlatform() {
    }

    /**
     * Starts everything, each step said on {@code say}; {@code processShard}, when given, runs as its
     * own JVM ({@link ShardProcess}). On a failure the caller closes what started.
     */
    void start(int shards, java.util.Optional<String> processShard, Consumer<String> say) throws Exception {
        say.accept("starting PostgreSQL: a primary and a synchronous standby ...");
        pair = opened(StandbyPair.start(PostgresBinaries.find(), ServerSettings.defaults().withFsync(false),
                BaseBackupMethod.AUTO));
        EmbeddedZooKeeper zk = opened(EmbeddedZooKeeper.start(-1, OwnedTempDirectory.stateDirectory(), say));
        zookeeperLink = proxy("zookeeper", zk.port());
        say.accept("starting " + shards + " shard nodes" + processShard.map(id -> " (" + id + " as its own JVM)")
                .orElse("") + " and a router ...");
        LocalPlatform.Builder b = LocalPlatform.builder(this::database)
                .cell(Topology.SHARED_CELL, List.of(REGION), shards)
                .zookeeper(zookeeperLink.address())
                .balancers(0)
                .adminServer(false)
                .leftovers(say)
                .shardFront(this::front)
                .shardClocks(id -> clocks.computeIfAbsent(id, x -> new SkewedClock()))
                .shardLauncher((id, settings) -> processShard.filter(id::equals).isEmpty() ? null
                        : launch(id, settings));
        SHARD_SETTINGS.forEach(b::shardSetting);
        platform = opened(b.start());
    }

    private ShardProcess launch(String shardId, Map<String, Object> settings) throws IOException {
        String logFile = System.getProperty(ChaosCommand.LOG_PROPERTY);
        java.nio.file.Path dir = logFile != null ? java.nio.file.Path.of(logFile).toAbsolutePath().getParent()
                : java.nio.file.Path.of(System.getProperty("java.io.tmpdir"));
        ShardProcess p = ShardProcess.start(shardId, settings, dir);
        processes.put(shardId, p);
        return p;
    }

    private TcpProxy proxy(String name, int port) throws IOException {
        return opened(TcpProxy.start(name, new InetSocketAddress(PostgresServer.HOST, port)));
    }

    /** Remembers a part to close; closed at once if the platform was closed meanwhile (a shutdown). */
    private synchronized <T extends AutoCloseable> T opened(T part) throws IOException {
        if (closed) {
            try {
                part.close();
            } catch (Exception e) {
                throw new IOException("closed while it started: " + e.getMessage(), e);
            }
            throw new IOException("the chaos platform is closed");
        }
        opened.add(part);
        return part;
    }

    /** The shard's database on the pair, reached through a proxy to each of the two hosts. */
    private ShardConfig.Jdbc database(String shardId) throws java.sql.SQLException {
        String name = JdbcUrls.databaseFor(DB_PREFIX, shardId);
        try {
            pair.createDatabase(name);
            TcpProxy toPrimary = proxy(shardId + "-pg-primary", pair.primary().port());
            TcpProxy toStandby = proxy(shardId + "-pg-standby", pair.standby().port());
            databaseLinks.put(shardId, new TcpProxy[] {toPrimary, toStandby});
            String url = "jdbc:postgresql://" + toPrimary.address() + "," + toStandby.address() + "/" + name
                    + "?targetServerType=primary&connectTimeout=" + StandbyPair.CONNECT_TIMEOUT_SECONDS
                    + "&loginTimeout=" + StandbyPair.LOGIN_TIMEOUT_SECONDS;
            return new ShardConfig.Jdbc(url, PostgresServer.SUPERUSER, "", 0);
        } catch (IOException e) {
            throw new java.sql.SQLException("could not set up database " + name + ": " + e.getMessage(), e);
        }
    }

    private String front(String shardId, InetSocketAddress listen) throws IOException {
        TcpProxy link = proxy(shardId + "-grpc", listen.getPort());
        shardLinks.put(shardId, link);
        return link.address();
    }

    List<String> shardIds() {
        return List.copyOf(shardLinks.keySet());
    }

    List<ShardInfo> shards() {
        return List.copyOf(platform.shards().values());
    }

    int routerPort() {
        return platform.routerPort();
    }

    /** A JDBC URL of the shard's database on the server that takes writes now, past every proxy. */
    String directJdbcUrl(String shardId) {
        return pair.writable().jdbcUrl(JdbcUrls.databaseFor(DB_PREFIX, shardId));
    }

    String databaseUser() {
        return PostgresServer.SUPERUSER;
    }

    /** How long the promoted server committed without a synchronous standby; -1: no failover healed. */
    long asynchronousMillis() {
        return asynchronousNanos < 0 ? -1 : asynchronousNanos / 1_000_000;
    }

    /** Whether a failover happened and its heal did not make a synchronous standby (durability is reduced). */
    boolean runningWithoutStandby() {
        return failedOverAtNanos != 0 && asynchronousNanos < 0;
    }

    /** The nemesis that carries out {@code f}. */
    Nemesis nemesis(ScheduledFault f) {
        String name = f.kind().label() + " " + f.target();
        return switch (f.kind()) {
            case PG_RESTART_FAST -> restart(name, ShutdownMode.FAST);
            case PG_RESTART_IMMEDIATE -> restart(name, ShutdownMode.IMMEDIATE);
            case PG_FAILOVER -> Nemesis.of(name, io(() -> {
                pair.failover();
                failedOverAtNanos = System.nanoTime();
            }), io(this::rebuildStandby));
            case SHARD_PG_CUT -> both(name, databaseLinks(f), ProxyNemesis::cut);
            case SHARD_PG_BLACKHOLE -> both(name, databaseLinks(f), ProxyNemesis::blackhole);
            case SHARD_PG_LATENCY -> both(name, databaseLinks(f),
                    p -> ProxyNemesis.latency(p, LATENCY_DATABASE, LATENCY_DATABASE.dividedBy(2)));
            case SHARD_PG_THROTTLE -> both(name, databaseLinks(f),
                    p -> ProxyNemesis.throttle(p, THROTTLE_BYTES_PER_SECOND));
            case ROUTER_SHARD_CUT -> ProxyNemesis.cut(shardLink(f));
            case ROUTER_SHARD_LATENCY -> ProxyNemesis.latency(shardLink(f), LATENCY_SHARD, LATENCY_SHARD.dividedBy(2));
            case ZOOKEEPER_CUT -> ProxyNemesis.cut(zookeeperLink);
            case CLOCK_SKEW -> new ClockSkewNemesis(clock(f), f.skew());
            case SHARD_PAUSE -> new PauseNemesis(name, process(f)::pid);
            case SHARD_KILL -> Nemesis.of(name, process(f)::kill9, io(process(f)::startAgain));
        };
    }

    private Nemesis restart(String name, ShutdownMode mode) {
        // The server taking writes at the time of the fault (after a failover, the promoted one).
        PostgresServer[] stopped = new PostgresServer[1];
        return Nemesis.of(name, io(() -> {
            stopped[0] = pair.writable();
            stopped[0].stop(mode);
        }), io(() -> stopped[0].start()));
    }

    /**
     * The failover's heal: a new standby copied from the promoted server and made synchronous, so
     * that from then on commits wait for it again. It is not in the shards' JDBC URLs (they name the
     * two original ports), which is why a run has at most one failover.
     */
    private void rebuildStandby() throws IOException {
        PostgresServer promoted = pair.writable();
        if (rebuilt == null) { // a heal tried again after the copy was made goes on from there
            try {
                rebuilt = PostgresServer.standbyOf(promoted, REBUILT_STANDBY, BaseBackupMethod.AUTO);
            } catch (java.sql.SQLException e) {
                throw new IOException("could not make standby " + REBUILT_STANDBY + " of " + promoted.describe()
                        + ": " + e.getMessage(), e);
            }
            opened(rebuilt);
        }
        promoted.requireSynchronousStandby("FIRST 1 (" + REBUILT_STANDBY + ")");
        promoted.awaitSynchronous(REBUILT_STANDBY);
        asynchronousNanos = System.nanoTime() - failedOverAtNanos;
    }

    private TcpProxy[] databaseLinks(ScheduledFault f) {
        return require(databaseLinks.get(f.target()), f);
    }

    private TcpProxy shardLink(ScheduledFault f) {
        return require(shardLinks.get(f.target()), f);
    }

    private ShardProcess process(ScheduledFault f) {
        return require(processes.get(f.target()), f);
    }

    /** Where the shard nodes running as their own JVMs log. */
    List<java.io.File> processLogs() {
        return processes.values().stream().map(ShardProcess::log).toList();
    }

    private SkewedClock clock(ScheduledFault f) {
        return require(clocks.get(f.target()), f);
    }

    private static <T> T require(T part, ScheduledFault f) {
        if (part == null) {
            throw new IllegalArgumentException(f + ": no shard " + f.target() + " on this platform");
        }
        return part;
    }

    private static Nemesis both(String name, TcpProxy[] links, java.util.function.Function<TcpProxy, Nemesis> make) {
        Nemesis a = make.apply(links[0]);
        Nemesis b = make.apply(links[1]);
        return Nemesis.of(name, () -> {
            a.start();
            b.start();
        }, () -> {
            a.stop();
            b.stop();
        });
    }

    @FunctionalInterface
    private interface IoAction {
        void run() throws IOException;
    }

    private static Runnable io(IoAction action) {
        return () -> {
            try {
                action.run();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    /**
     * Closes the platform first (its shards finish their commits while every server still runs),
     * then the rest in the reverse order of the start. Idempotent and thread-safe: a shutdown hook
     * may call it while the run is still going.
     */
    @Override
    public synchronized void close() throws Exception {
        closed = true;
        Exception failure = null;
        if (platform != null && opened.remove(platform)) {
            opened.add(platform); // first: its shards finish their commits while every server still runs
        }
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        opened.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** Every proxy's toxics cleared: the links as they were before any fault. */
    void healAllLinks() {
        databaseLinks.values().forEach(links -> {
            links[0].restore();
            links[1].restore();
        });
        shardLinks.values().forEach(TcpProxy::restore);
        zookeeperLink.restore();
        clocks.values().forEach(c -> c.skew(Duration.ZERO));
    }
}
