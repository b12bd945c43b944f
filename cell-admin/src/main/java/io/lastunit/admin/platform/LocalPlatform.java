package io.lastunit.admin.platform;

import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.platform.wiring.Wired;
import io.lastunit.admin.server.AdminServer;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.balancer.BalancerConfig;
import io.lastunit.balancer.BalancerNode;
import io.lastunit.balancer.transfer.TransferFaults;
import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.common.tls.MutualTls;
import io.lastunit.common.tls.Role;
import io.lastunit.common.tls.ZooKeeperTls;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.ZooKeeperCredentials;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.router.RouterConfig;
import io.lastunit.router.RouterNode;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.shard.ShardConfig;
import io.lastunit.shard.ShardNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A whole lastunit platform in one process, wired exactly as separate processes would be: a
 * ZooKeeper server ({@link EmbeddedZooKeeper}, on 127.0.0.1, unless one is given), cells whose shard nodes each have their
 * own PostgreSQL database and gRPC port on 127.0.0.1, registered in ZooKeeper, one router,
 * bucket-balancers (one by default: the leader; more are standbys), and an admin server
 * ({@link AdminServer}: AdminService, the tenant moves) on 127.0.0.1.
 * Used by {@code ./lastunit up}, {@code ./lastunit demo} and the cluster tests. Shard nodes can be
 * stopped and started again on the same database and port. Not thread-safe: drive it from one
 * thread; the services it starts are.
 */
public final class LocalPlatform implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LocalPlatform.class);

    /** A cell to create: its name, regions, and shards per region. */
    public record CellSpec(String name, List<String> regions, int shardsPerRegion) {
    }

    /**
     * The address routers (and everyone else) are given for a shard, in front of the port its node
     * listens on: a fault harness answers with a TCP proxy's address, so the links to the shard can
     * be cut. Asked once per shard at start; the address is the shard's in the topology for good.
     */
    @FunctionalInterface
    public interface ShardFront {
        String advertise(String shardId, InetSocketAddress listen) throws IOException;
    }

    /**
     * Runs a shard node somewhere other than this JVM (its own process, for faults a thread cannot
     * take: kill -9, SIGSTOP), from the settings the platform would give it; null for a shard that
     * runs here. Closing what it returns stops that node.
     */
    @FunctionalInterface
    public interface ShardLauncher {
        AutoCloseable launch(String shardId, Map<String, Object> settings) throws IOException;
    }

    /** Gives each shard its database (created when absent). */
    @FunctionalInterface
    public interface ShardDatabases {
        ShardConfig.Jdbc forShard(String shardId) throws SQLException;
    }

    /** How often a local platform's admin server resumes moves no mover holds. */
    public static final Duration ADMIN_RESUME_INTERVAL_DEFAULT = Duration.ofSeconds(5);

    /** The token `./lastunit up` and the demo use: every tenant, admin. Never configure it in production. */
    public static final String DEV_TOKEN = "lastunit-dev-token";

    private final List<CellSpec> cells;
    private final ShardDatabases databases;
    private final String zookeeperGiven;
    private final int routerPort;
    private final List<String> tokenGrants;
    private final Map<String, Object> shardOverrides;
    private final Map<String, Map<String, Object>> shardOverridesById;
    private final Map<String, Object> routerOverrides;
    private final int balancerCount;
    private final java.util.function.Consumer<BalancerConfig.Builder> balancerSettings;
    private final Consumer<String> leftovers;
    private final LongSupplier routerClock;
    private final List<BalancerNode> balancers = new ArrayList<>();
    private final boolean adminServerOn;
    private final int adminPort;
    private final Duration adminResumeInterval;
    private final MoverSettings moverSettings;
    private final MovePolicy movePolicy;
    private final MoveFaults moveFaults;
    private final InstantSource moverClock;
    private final ShardFront shardFront;
    private final Function<String, InstantSource> shardClocks;
    private final ShardLauncher shardLauncher;
    private final boolean metricsOn;
    /** Where a secure platform's credentials go; null: plaintext, no ACLs. */
    private final Path secureDirectory;
    private final Duration tlsReloadInterval;
    private LocalCredentials credentials;
    private AdminServer adminServer;

    private EmbeddedZooKeeper zookeeperServer;
    private String zookeeper;
    private CuratorFramework admin;
    /** The most lanes {@link #lanesPerShard} gives a shard node: the shard's own default. */
    static final int LANES_PER_SHARD_MAX = 4;

    private final Map<String, ShardInfo> shards = new LinkedHashMap<>();
    private final Map<String, Wired> shardContexts = new HashMap<>();
    private final Map<String, ShardConfig.Jdbc> shardJdbc = new HashMap<>();
    /** The port each shard node listens on (its topology address differs behind a {@link ShardFront}). */
    private final Map<String, Integer> shardPorts = new HashMap<>();
    /** Shard nodes built here with a given clock (not the context's beans, so closed here). */
    private final Map<String, ShardNode> clockedShards = new HashMap<>();
    /** Shard nodes the {@link ShardLauncher} runs elsewhere. */
    private final Map<String, AutoCloseable> launchedShards = new HashMap<>();
    private Wired routerContext;
    private RouterNode router;

    private LocalPlatform(Builder b) {
        this.cells = List.copyOf(b.cells);
        this.databases = b.databases;
        this.zookeeperGiven = b.zookeeper;
        this.routerPort = b.routerPort;
        this.tokenGrants = List.copyOf(b.tokenGrants);
        this.shardOverrides = Map.copyOf(b.shardOverrides);
        Map<String, Map<String, Object>> byId = new HashMap<>();
        b.shardOverridesById.forEach((id, m) -> byId.put(id, Map.copyOf(m)));
        this.shardOverridesById = Map.copyOf(byId);
        this.routerOverrides = Map.copyOf(b.routerOverrides);
        this.balancerCount = b.balancers;
        this.balancerSettings = b.balancerSettings;
        this.leftovers = b.leftovers;
        this.routerClock = b.routerClock;
        this.adminServerOn = b.adminServer;
        this.adminPort = b.adminPort;
        this.adminResumeInterval = b.adminResumeInterval;
        this.moverSettings = b.moverSettings;
        this.movePolicy = b.movePolicy;
        this.moveFaults = b.moveFaults;
        this.moverClock = b.moverClock;
        this.shardFront = b.shardFront;
        this.shardClocks = b.shardClocks;
        this.shardLauncher = b.shardLauncher;
        this.metricsOn = b.metrics;
        this.secureDirectory = b.secureDirectory;
        this.credentials = b.secureCredentials;
        this.tlsReloadInterval = b.tlsReloadInterval;
    }

    public static Builder builder(ShardDatabases databases) {
        return new Builder(databases);
    }

    /** Settings of a platform to start. */
    public static final class Builder {
        private final ShardDatabases databases;
        private final List<CellSpec> cells = new ArrayList<>();
        private String zookeeper;
        private int routerPort;
        private final List<String> tokenGrants = new ArrayList<>(
                List.of(Authenticator.sha256Hex(DEV_TOKEN) + ":dev:*:admin"));
        private final Map<String, Object> shardOverrides = new HashMap<>();
        private final Map<String, Map<String, Object>> shardOverridesById = new HashMap<>();
        private final Map<String, Object> routerOverrides = new HashMap<>();
        private int balancers = 1;
        private java.util.function.Consumer<BalancerConfig.Builder> balancerSettings = b -> { };
        private Consumer<String> leftovers = line -> log.warn("{}", line);
        private LongSupplier routerClock;
        private boolean adminServer = true;
        private int adminPort;
        private Duration adminResumeInterval = ADMIN_RESUME_INTERVAL_DEFAULT;
        private MoverSettings moverSettings = MoverSettings.defaults();
        private MovePolicy movePolicy = MovePolicy.defaults();
        private MoveFaults moveFaults = MoveFaults.NONE;
        private InstantSource moverClock = InstantSource.system();
        private ShardFront shardFront = (id, listen) -> listen.getHostString() + ":" + listen.getPort();
        private Function<String, InstantSource> shardClocks = id -> null;
        private ShardLauncher shardLauncher = (id, settings) -> null;
        private boolean metrics = true;
        private Path secureDirectory;
        private LocalCredentials secureCredentials;
        private Duration tlsReloadInterval = io.lastunit.common.tls.MutualTls.RELOAD_INTERVAL_DEFAULT;

        private Builder(ShardDatabases databases) {
            this.databases = databases;
        }

        public Builder cell(String name, List<String> regions, int shardsPerRegion) {
            cells.add(new CellSpec(name, regions, shardsPerRegion));
            return this;
        }

        /** Use this ZooKeeper ensemble instead of starting one in process. */
        public Builder zookeeper(String connectString) {
            this.zookeeper = connectString;
            return this;
        }

        public Builder routerPort(int port) {
            this.routerPort = port;
            return this;
        }

        /** Adds a token grant ({@code <sha256-hex>:<name>:<tenants>[:admin]}) to the router's. */
        public Builder tokenGrant(String grant) {
            tokenGrants.add(grant);
            return this;
        }

        /** A {@code lastunit.shard.*} setting for every shard node. */
        public Builder shardSetting(String key, Object value) {
            shardOverrides.put(key, value);
            return this;
        }

        /**
         * A {@code lastunit.shard.*} setting for the one shard node {@code shardId} (ids are
         * {@code <cell>-<region>-<n>}, n from 1), applied after those of {@link #shardSetting(String, Object)}.
         */
        public Builder shardSetting(String shardId, String key, Object value) {
            shardOverridesById.computeIfAbsent(shardId, id -> new HashMap<>()).put(key, value);
            return this;
        }

        /** Bucket-balancers to start (0..3): the first to win the latch leads, the rest stand by. */
        public Builder balancers(int n) {
            if (n < 0 || n > 3) {
                throw new IllegalArgumentException("balancers=" + n + " is outside [0, 3]");
            }
            this.balancers = n;
            return this;
        }

        /** Changes to every balancer's settings (after the platform's: port 0, this ZooKeeper). */
        public Builder balancerSettings(java.util.function.Consumer<BalancerConfig.Builder> change) {
            this.balancerSettings = change;
            return this;
        }

        /**
         * Where to say what the start of the in-process ZooKeeper cleaned up after a killed platform
         * (default: a WARN log line).
         */
        public Builder leftovers(Consumer<String> report) {
            this.leftovers = report;
            return this;
        }

        /**
         * The router's nanosecond clock (its sold-out cache, buyer rate limiter and recent keys)
         * instead of {@link System#nanoTime()}: tests pass one they advance by hand.
         */
        public Builder routerClock(LongSupplier nanoClock) {
            this.routerClock = nanoClock;
            return this;
        }

        /** Whether to start the admin server (default yes). */
        public Builder adminServer(boolean on) {
            this.adminServer = on;
            return this;
        }

        /** The admin server's port (default 0: a free one). */
        public Builder adminPort(int port) {
            this.adminPort = port;
            return this;
        }

        /**
         * How often the admin server resumes moves that no mover holds (default 5 s); zero: never
         * (tests that resume a crashed mover's move themselves).
         */
        public Builder adminResumeInterval(Duration interval) {
            this.adminResumeInterval = interval;
            return this;
        }

        /** The admin server's movers: their bounds, their policy, faults injected after each recorded step, their clock. */
        public Builder movers(MoverSettings settings, MovePolicy policy, MoveFaults faults, InstantSource clock) {
            this.moverSettings = settings;
            this.movePolicy = policy;
            this.moveFaults = faults;
            this.moverClock = clock;
            return this;
        }

        /** The address each shard is given in the topology (default: the port its node listens on). */
        public Builder shardFront(ShardFront front) {
            this.shardFront = front;
            return this;
        }

        /**
         * The clock of each shard node's lanes (null for a shard: the system clock). A fault harness
         * gives a skewed one.
         */
        public Builder shardClocks(Function<String, InstantSource> clocks) {
            this.shardClocks = clocks;
            return this;
        }

        /** Where each shard node runs (default: all in this JVM). */
        public Builder shardLauncher(ShardLauncher launcher) {
            this.shardLauncher = launcher;
            return this;
        }

        /** A {@code lastunit.router.*} setting for the router. */
        /**
         * Whether every node serves its metrics (on any free port of 127.0.0.1; default on):
         * {@link LocalPlatform#metricsUrls()}. Off opens no metrics port at all.
         */
        public Builder metrics(boolean on) {
            this.metrics = on;
            return this;
        }

        /**
         * Runs the platform secured ({@code up --secure}): a CA and a certificate per service made in
         * {@code directory} ({@link LocalCredentials}), mutual TLS on every internal hop (router and
         * admin to shard nodes, balancer to shard nodes, router to balancer, callers of the admin
         * server), and ZooKeeper credentials with lastunit's ACLs on every znode. The router's public
         * listener stays as configured (bearer tokens; plaintext unless its TLS settings are given).
         */
        public Builder secure(Path directory) {
            this.secureDirectory = directory;
            return this;
        }

        /**
         * The same with credentials already made (by whoever started the secure ZooKeeper this
         * platform is given, {@code up --secure}).
         */
        public Builder secure(LocalCredentials made) {
            this.secureCredentials = made;
            this.secureDirectory = made.directory();
            return this;
        }

        /** How often a secure platform's services read their certificate files again (default 10 s). */
        public Builder tlsReloadInterval(Duration interval) {
            this.tlsReloadInterval = interval;
            return this;
        }

        public Builder routerSetting(String key, Object value) {
            routerOverrides.put(key, value);
            return this;
        }

        public LocalPlatform start() throws Exception {
            if (cells.isEmpty()) {
                throw new IllegalArgumentException("a platform needs at least one cell");
            }
            LocalPlatform p = new LocalPlatform(this);
            try {
                p.startAll();
            } catch (Exception | Error e) {
                p.close();
                throw e;
            }
            return p;
        }
    }

    private void startAll() throws Exception {
        if (secureDirectory != null && credentials == null) {
            credentials = LocalCredentials.create(secureDirectory, tlsReloadInterval);
        }
        if (zookeeperGiven == null) {
            zookeeperServer = credentials == null
                    ? EmbeddedZooKeeper.start(-1, OwnedTempDirectory.stateDirectory(), leftovers)
                    : EmbeddedZooKeeper.startSecure(-1, OwnedTempDirectory.stateDirectory(), leftovers,
                            credentials.zookeeperServer());
            zookeeper = zookeeperServer.connectString();
        } else {
            zookeeper = zookeeperGiven;
        }
        admin = Curators.newClient(zookeeper, Duration.ofSeconds(15), zookeeperCredentials(),
                zookeeperTls(Role.ADMIN, "local-platform"));
        admin.start();
        TopologyStore store = new TopologyStore(admin, TopologyStore.ROOT_DEFAULT, InstantSource.system());
        List<String> allRegions = new ArrayList<>();
        for (CellSpec cell : cells) {
            List<ShardInfo> cellShards = new ArrayList<>();
            for (String region : cell.regions()) {
                if (!allRegions.contains(region)) {
                    allRegions.add(region);
                }
                for (int i = 1; i <= cell.shardsPerRegion(); i++) {
                    String id = cell.name() + "-" + region + "-" + i;
                    int port = freePort();
                    shardPorts.put(id, port);
                    String address = shardFront.advertise(id, new InetSocketAddress("127.0.0.1", port));
                    cellShards.add(ShardInfo.newBuilder().setShardId(id).setCell(cell.name()).setRegion(region)
                            .setAddress(address).build());
                }
            }
            store.createCell(cell.name(), cell.regions(), cellShards);
            for (ShardInfo s : cellShards) {
                shards.put(s.getShardId(), s);
            }
        }
        for (ShardInfo s : shards.values()) {
            shardJdbc.put(s.getShardId(), databases.forShard(s.getShardId()));
            startShard(s.getShardId());
        }
        startRouter(allRegions);
        for (int i = 0; i < balancerCount; i++) {
            startBalancer(TransferFaults.NONE);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (balancerCount > 0 && balancers.stream().noneMatch(BalancerNode::isLeader)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no bucket-balancer became leader within 30 s");
            }
            Thread.sleep(20);
        }
        if (adminServerOn) {
            startAdminServer();
        }
    }

    private void startAdminServer() throws IOException, InterruptedException {
        Object trust = routerOverrides.get("lastunit.router.shard-trust-certificate");
        java.io.File trustFile = trust == null || trust.toString().isBlank() ? null : new java.io.File(trust.toString());
        AdminServer.Config config = new AdminServer.Config(zookeeper, TopologyStore.ROOT_DEFAULT, "127.0.0.1", adminPort,
                tokenGrants, trustFile, 4, adminResumeInterval, moverSettings, movePolicy,
                "local-platform-" + ProcessHandle.current().pid(), metrics(),
                io.lastunit.common.lifecycle.NodeServer.HEALTH_PORT_OFF,
                credentials == null ? null : credentials.service(Role.ADMIN, "admin-server"), zookeeperCredentials(),
                zookeeperTls(Role.ADMIN, "admin-server"));
        adminServer = new AdminServer(config, moveFaults, moverClock).start();
    }

    /** The admin server (AdminService, the tenant moves), or null when the platform runs none. */
    public AdminServer adminServer() {
        return adminServer;
    }

    /** The admin server's port. */
    public int adminPort() {
        return adminServer.port();
    }

    /** Starts one more bucket-balancer (a standby while another leads), with these injected faults. */
    public BalancerNode startBalancer(TransferFaults faults) throws IOException, InterruptedException {
        BalancerConfig config = BalancerConfig.defaults(zookeeper).with(b -> {
            b.host = "127.0.0.1";
            b.port = 0;
            b.metrics = metrics();
            // With TLS on the shard nodes the balancer dials them trusting what the router trusts,
            // and serves TLS itself with the shards' certificate (routers dial it like a shard).
            Object trust = routerOverrides.get("lastunit.router.shard-trust-certificate");
            Object cert = shardOverrides.get("lastunit.shard.tls-certificate");
            Object key = shardOverrides.get("lastunit.shard.tls-key");
            if (trust != null && !trust.toString().isBlank()) {
                b.shardTrustCertificate = new java.io.File(trust.toString());
            }
            if (cert != null && key != null && !cert.toString().isBlank()) {
                b.tlsCertificate = new java.io.File(cert.toString());
                b.tlsKey = new java.io.File(key.toString());
            }
            if (credentials != null) {
                b.mutualTls = credentials.service(Role.BALANCER, "balancer-" + (balancers.size() + 1));
                b.zookeeperCredentials = credentials.zookeeper();
                b.zookeeperTls = credentials.zookeeperClient(Role.BALANCER, "balancer-" + (balancers.size() + 1));
            }
            balancerSettings.accept(b);
        });
        BalancerNode node = new BalancerNode(config, faults).start();
        balancers.add(node);
        return node;
    }

    /** The running balancers, in start order. */
    public List<BalancerNode> balancers() {
        balancers.removeIf(b -> b.leadershipState() == null);
        return List.copyOf(balancers);
    }

    /** Stops a balancer (as a crash would look to the others: its latch and endpoint go away). */
    public void stopBalancer(BalancerNode node) {
        node.close();
        balancers.remove(node);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * Starts (or starts again) a shard node on its database and port; returns it, or null when the
     * {@link ShardLauncher} runs it elsewhere.
     */
    public ShardNode startShard(String shardId) throws IOException {
        if (shardContexts.containsKey(shardId) || launchedShards.containsKey(shardId)) {
            throw new IllegalStateException("shard " + shardId + " is running");
        }
        ShardInfo s = shards.get(shardId);
        ShardConfig.Jdbc jdbc = shardJdbc.get(shardId);
        Map<String, Object> props = new HashMap<>();
        props.put("lastunit.shard.id", shardId);
        props.put("lastunit.shard.host", "127.0.0.1");
        props.put("lastunit.shard.port", shardPorts.get(shardId));
        props.put("lastunit.shard.advertised-address", s.getAddress());
        // Its own region first (the one it serves), then the cell's others (valid in region quotas).
        List<String> regions = new ArrayList<>(List.of(s.getRegion()));
        for (CellSpec c : cells) {
            if (c.name().equals(s.getCell())) {
                c.regions().stream().filter(r -> !regions.contains(r)).forEach(regions::add);
            }
        }
        props.put("lastunit.shard.regions", regions);
        props.put("lastunit.shard.jdbc-url", jdbc.url());
        props.put("lastunit.shard.jdbc-user", jdbc.user());
        props.put("lastunit.shard.jdbc-password", jdbc.password());
        props.put("lastunit.shard.zookeeper", zookeeper);
        props.put("lastunit.shard.lanes", lanesPerShard(Runtime.getRuntime().availableProcessors(), shards.size()));
        props.put("lastunit.shard.read-threads", 1);
        props.put("lastunit.shard.metrics-enabled", metricsOn);
        props.put("lastunit.shard.metrics-host", "127.0.0.1");
        props.put("lastunit.shard.metrics-port", 0);
        if (credentials != null) {
            putMutualTls(props, "lastunit.shard.", credentials.service(Role.SHARD, shardId));
            props.put("lastunit.shard.zookeeper-credentials", zookeeperCredentialsSetting());
            putZooKeeperTls(props, "lastunit.shard.", credentials.zookeeperClient(Role.SHARD, shardId));
        }
        props.putAll(shardOverrides);
        props.putAll(shardOverridesById.getOrDefault(shardId, Map.of()));
        AutoCloseable launched = shardLauncher.launch(shardId, Map.copyOf(props));
        if (launched != null) {
            launchedShards.put(shardId, launched);
            return null;
        }
        Wired ctx = Wired.run(props);
        InstantSource clock = shardClocks.apply(shardId);
        ShardNode node = null;
        try {
            node = clock == null ? ctx.bean(ShardNode.class) : new ShardNode(ctx.bean(ShardConfig.class), clock, null);
            node.start();
            shardContexts.put(shardId, ctx);
            if (clock != null) {
                clockedShards.put(shardId, node);
            }
            return node;
        } catch (IOException | RuntimeException e) {
            if (clock != null && node != null) {
                node.close();
            }
            ctx.close();
            throw e;
        }
    }

    /**
     * Lanes for each shard node of a platform whose shards all share this host's cores and one
     * PostgreSQL server: the cores per shard, from 1 to {@value #LANES_PER_SHARD_MAX}. Each lane
     * is a writing connection; more of them than cores only adds backends waiting for a core and
     * splits the same Reserves into smaller commits (2 shards on 2 cores: 1 lane each, measured
     * 1.17–1.25× the Reserves per second of 2 lanes each on 1,000 items end to end).
     */
    static int lanesPerShard(int cores, int shardCount) {
        if (cores < 1 || shardCount < 1) {
            throw new IllegalArgumentException("cores=" + cores + ", shards=" + shardCount + ": both must be at least 1");
        }
        return Math.max(1, Math.min(LANES_PER_SHARD_MAX, cores / shardCount));
    }

    /** Stops a shard node: it leaves ZooKeeper, finishes what it accepted, and closes. */
    public void stopShard(String shardId) {
        AutoCloseable launched = launchedShards.remove(shardId);
        if (launched != null) {
            try {
                launched.close();
            } catch (Exception e) {
                log.warn("shard {} did not stop cleanly: {}", shardId, e.toString());
            }
        }
        ShardNode clocked = clockedShards.remove(shardId);
        if (clocked != null) {
            clocked.close();
        }
        Wired ctx = shardContexts.remove(shardId);
        if (ctx != null) {
            ctx.close();
        }
    }

    private void startRouter(List<String> regions) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("lastunit.router.port", routerPort);
        props.put("lastunit.router.zookeeper", zookeeper);
        props.put("lastunit.router.regions", regions);
        props.put("lastunit.router.tokens", tokenGrants);
        props.put("lastunit.router.metrics-enabled", metricsOn);
        props.put("lastunit.router.metrics-host", "127.0.0.1");
        props.put("lastunit.router.metrics-port", 0);
        if (credentials != null) {
            putMutualTls(props, "lastunit.router.", credentials.service(Role.ROUTER, "router-1"));
            props.put("lastunit.router.zookeeper-credentials", zookeeperCredentialsSetting());
            putZooKeeperTls(props, "lastunit.router.", credentials.zookeeperClient(Role.ROUTER, "router-1"));
        }
        props.putAll(routerOverrides);
        routerContext = Wired.run(props);
        router = routerClock == null ? routerContext.bean(RouterNode.class)
                : new RouterNode(routerContext.bean(RouterConfig.class), routerClock);
        router.start();
    }

    public RouterNode router() {
        return router;
    }

    private static void putMutualTls(Map<String, Object> props, String prefix, MutualTls files) {
        props.put(prefix + "mtls-certificate", files.certificate().getPath());
        props.put(prefix + "mtls-key", files.key().getPath());
        props.put(prefix + "mtls-ca", files.ca().getPath());
        props.put(prefix + "mtls-reload-interval-ms", files.reloadInterval().toMillis());
    }

    private static void putZooKeeperTls(Map<String, Object> props, String prefix, ZooKeeperTls files) {
        props.put(prefix + "zookeeper-tls-certificate", files.certificate().getPath());
        props.put(prefix + "zookeeper-tls-key", files.key().getPath());
        props.put(prefix + "zookeeper-tls-ca", files.ca().getPath());
    }

    /** A secure platform's TLS to ZooKeeper for that caller; null (plaintext) otherwise. */
    private ZooKeeperTls zookeeperTls(Role role, String name) {
        return credentials == null ? null : credentials.zookeeperClient(role, name);
    }

    private ZooKeeperCredentials zookeeperCredentials() {
        return credentials == null ? null : credentials.zookeeper();
    }

    private String zookeeperCredentialsSetting() {
        return credentials.zookeeper().user() + ":" + credentials.zookeeper().password();
    }

    /** A secure platform's credentials (null when it runs without): {@code up --secure} prints their directory. */
    public LocalCredentials credentials() {
        return credentials;
    }

    /** Every node's metrics: any free port of 127.0.0.1 when on, none when off. */
    private io.lastunit.common.metrics.MetricsConfig metrics() {
        return metricsOn ? io.lastunit.common.metrics.MetricsConfig.on("127.0.0.1")
                : io.lastunit.common.metrics.MetricsConfig.OFF;
    }

    /**
     * Where every running node serves its metrics, by node: {@code shard <id>} in start order,
     * {@code router}, {@code balancer <host:port>}, {@code admin}. Empty when metrics are off.
     */
    public Map<String, String> metricsUrls() {
        Map<String, String> urls = new LinkedHashMap<>();
        for (String id : shards.keySet()) {
            ShardNode n = shard(id);
            if (n != null) {
                n.metricsUrl().ifPresent(u -> urls.put("shard " + id, u));
            }
        }
        if (router != null) {
            router.metricsUrl().ifPresent(u -> urls.put("router", u));
        }
        for (BalancerNode b : balancers) {
            b.metricsUrl().ifPresent(u -> urls.put("balancer " + b.address(), u));
        }
        if (adminServer != null) {
            adminServer.metricsUrl().ifPresent(u -> urls.put("admin", u));
        }
        return urls;
    }

    public int routerPort() {
        return router.port();
    }

    public String zookeeper() {
        return zookeeper;
    }

    /** The ZooKeeper server, when the platform started its own (null otherwise). */
    public TestingServer zookeeperServer() {
        return zookeeperServer == null ? null : zookeeperServer.server();
    }

    /** Where the platform's own ZooKeeper keeps its files, deleted on close (null when it was given one). */
    public Path zookeeperDirectory() {
        return zookeeperServer == null ? null : zookeeperServer.directory();
    }

    /** Where the shard node listens: its topology address unless {@link Builder#shardFront} put something in front. */
    public String listenAddress(String shardId) {
        Integer port = shardPorts.get(shardId);
        if (port == null) {
            throw new IllegalArgumentException("no shard " + shardId + "; known: " + shardPorts.keySet());
        }
        return "127.0.0.1:" + port;
    }

    public Map<String, ShardInfo> shards() {
        return Map.copyOf(shards);
    }

    public ShardNode shard(String shardId) {
        ShardNode clocked = clockedShards.get(shardId);
        if (clocked != null) {
            return clocked;
        }
        Wired ctx = shardContexts.get(shardId);
        return ctx == null ? null : ctx.bean(ShardNode.class);
    }

    @Override
    public void close() {
        if (adminServer != null) {
            adminServer.close();
        }
        for (BalancerNode b : new ArrayList<>(balancers)) {
            b.close();
        }
        balancers.clear();
        if (router != null) {
            router.close(); // idempotent; a router built with a given clock is not the context's to close
        }
        if (routerContext != null) {
            routerContext.close();
        }
        for (String id : new ArrayList<>(shardContexts.keySet())) {
            stopShard(id);
        }
        for (String id : new ArrayList<>(launchedShards.keySet())) {
            stopShard(id);
        }
        if (admin != null) {
            admin.close();
        }
        if (zookeeperServer != null) {
            try {
                zookeeperServer.close();
            } catch (IOException e) {
                log.warn("could not delete the ZooKeeper files {}: {}", zookeeperServer.directory(), e.toString());
            }
        }
    }
}
