package io.lastunit.balancer;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.lastunit.api.balancer.v1.BalancerServiceGrpc;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListTransfersRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.balancer.transfer.TransferFaults;
import io.lastunit.common.invariant.CrossShardChecker;
import io.lastunit.common.invariant.CrossShardReport;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.shard.ShardNode;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.micronaut.context.ApplicationContext;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A cell for balancer tests, wired as production wires it: an in-process ZooKeeper
 * ({@link TestingServer}) holding the topology, the cell {@code shared} with one real shard node
 * per region (each on its own fresh PostgreSQL database, serving gRPC on 127.0.0.1, registered in
 * ZooKeeper), and any number of real balancers started in-process against it. Clients talk to
 * everything over real sockets. Drive it from one thread; close it once.
 */
final class BalancerCluster implements AutoCloseable {
    static final String CELL = Topology.SHARED_CELL;
    static final String HOME = "eu";

    private final PostgresFixture pg;
    private final List<String> regions;
    private TestingServer zookeeper;
    private CuratorFramework admin;
    private TopologyCache topology;
    private final Map<String, ShardInfo> shardsByRegion = new LinkedHashMap<>();
    private final Map<String, ApplicationContext> shardContexts = new LinkedHashMap<>();
    private final Map<String, String> jdbcUrls = new LinkedHashMap<>();
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final List<BalancerNode> balancers = new ArrayList<>();

    BalancerCluster(PostgresFixture pg, List<String> regions) {
        this.pg = pg;
        this.regions = List.copyOf(regions);
    }

    BalancerCluster start() throws Exception {
        zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"), true);
        admin = Curators.newClient(zookeeper.getConnectString(), Duration.ofSeconds(10));
        admin.start();
        if (!admin.blockUntilConnected((int) scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("no ZooKeeper at " + zookeeper.getConnectString());
        }
        List<ShardInfo> shards = new ArrayList<>();
        for (String region : regions) {
            ShardInfo s = ShardInfo.newBuilder().setShardId("s-" + region).setCell(CELL).setRegion(region)
                    .setAddress("127.0.0.1:" + freePort()).build();
            shards.add(s);
            shardsByRegion.put(region, s);
        }
        new TopologyStore(admin, TopologyStore.ROOT_DEFAULT, InstantSource.system()).createCell(CELL, regions, shards);
        for (ShardInfo s : shards) {
            jdbcUrls.put(s.getRegion(), pg.newDatabase(s.getShardId()));
            startShard(s, jdbcUrls.get(s.getRegion()));
        }
        topology = new TopologyCache(admin, TopologyStore.ROOT_DEFAULT, Duration.ofSeconds(10), InstantSource.system());
        topology.start(scaled(Duration.ofSeconds(30)));
        return this;
    }

    private void startShard(ShardInfo s, String jdbcUrl) throws IOException {
        List<String> shardRegions = new ArrayList<>();
        shardRegions.add(s.getRegion());
        regions.stream().filter(r -> !r.equals(s.getRegion())).forEach(shardRegions::add);
        Map<String, Object> props = new HashMap<>();
        props.put("lastunit.shard.id", s.getShardId());
        props.put("lastunit.shard.host", "127.0.0.1");
        props.put("lastunit.shard.port", Integer.parseInt(s.getAddress().substring(s.getAddress().lastIndexOf(':') + 1)));
        props.put("lastunit.shard.regions", String.join(",", shardRegions));
        props.put("lastunit.shard.jdbc-url", jdbcUrl);
        props.put("lastunit.shard.jdbc-user", pg.user());
        props.put("lastunit.shard.jdbc-password", pg.password());
        props.put("lastunit.shard.zookeeper", zookeeper.getConnectString());
        props.put("lastunit.shard.lanes", 2);
        props.put("lastunit.shard.read-threads", 1);
        ApplicationContext ctx = ApplicationContext.run(props);
        try {
            ctx.getBean(ShardNode.class).start();
        } catch (IOException | RuntimeException e) {
            ctx.close();
            throw e;
        }
        shardContexts.put(s.getShardId(), ctx);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * The settings balancer tests start from: fast intervals, a free port, and the longest session
     * the test server grants (20 ticks of 500 ms), so a stalled host does not expire a leader's
     * session behind a test's back; the fault tests end sessions on purpose.
     */
    BalancerConfig config(Consumer<BalancerConfig.Builder> change) {
        return BalancerConfig.defaults(zookeeper.getConnectString()).with(b -> {
            b.port = 0;
            b.zookeeperSessionTimeout = Duration.ofSeconds(10);
            b.interval = Duration.ofMillis(200);
            b.invariantInterval = Duration.ofMillis(500);
            b.recoveryInterval = Duration.ofSeconds(2);
            b.stepTimeout = Duration.ofSeconds(10);
            change.accept(b);
        });
    }

    BalancerNode startBalancer(Consumer<BalancerConfig.Builder> change, TransferFaults faults) throws Exception {
        BalancerNode node = new BalancerNode(config(change), faults).start();
        balancers.add(node);
        return node;
    }

    BalancerNode startBalancer() throws Exception {
        return startBalancer(b -> { }, TransferFaults.NONE);
    }

    /** Stops the shard node of {@code region} (its gRPC port closes; it stays in the cell's topology). */
    void stopShard(String region) {
        ApplicationContext ctx = shardContexts.remove(shard(region).getShardId());
        if (ctx != null) {
            ctx.close();
        }
    }

    /** Stops the ZooKeeper server (every client goes SUSPENDED); {@link #restartZooKeeper} brings it back. */
    void stopZooKeeper() throws IOException {
        zookeeper.stop();
    }

    void restartZooKeeper() throws Exception {
        zookeeper.restart();
    }

    String zookeeper() {
        return zookeeper.getConnectString();
    }

    CuratorFramework admin() {
        return admin;
    }

    Topology topology() {
        return topology.current();
    }

    ShardInfo shard(String region) {
        return shardsByRegion.get(region);
    }

    /** The database of the region's shard (for tests that tamper with it behind the shard's back). */
    java.sql.Connection connect(String region) throws java.sql.SQLException {
        return java.sql.DriverManager.getConnection(jdbcUrls.get(region), pg.user(), pg.password());
    }

    List<String> regions() {
        return regions;
    }

    ManagedChannel channel(String address) {
        return channels.computeIfAbsent(address, a -> NettyChannelBuilder.forTarget(a).usePlaintext().build());
    }

    ShardServiceGrpc.ShardServiceBlockingStub shardApi(String region) {
        return ShardServiceGrpc.newBlockingStub(channel(shard(region).getAddress()))
                .withDeadlineAfter(callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    InventoryServiceGrpc.InventoryServiceBlockingStub inventory(String region) {
        return InventoryServiceGrpc.newBlockingStub(channel(shard(region).getAddress()))
                .withDeadlineAfter(callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    BalancerServiceGrpc.BalancerServiceBlockingStub balancerApi(BalancerNode node) {
        return BalancerServiceGrpc.newBlockingStub(channel("127.0.0.1:" + node.port()))
                .withDeadlineAfter(callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    /** Creates a multi-region item the way a router does: CreateItem with the quotas at each region's shard. */
    void createItem(String tenant, String item, Map<String, Long> quotas) {
        CreateItemRequest.Builder r = CreateItemRequest.newBuilder().setTenantId(tenant).setItemId(item)
                .setTotal(quotas.values().stream().mapToLong(Long::longValue).sum()).setHomeRegion(HOME);
        quotas.forEach((region, q) -> r.addRegionQuotas(RegionQuota.newBuilder().setRegion(region).setQuantity(q)));
        for (String region : quotas.keySet()) {
            inventory(region).createItem(r.build());
        }
    }

    /** The item's level at each region's shard, by region. */
    Map<String, ItemLevel> levels(String tenant, String item) {
        Map<String, ItemLevel> out = new LinkedHashMap<>();
        for (String region : regions) {
            var items = shardApi(region).listLevels(ListLevelsRequest.newBuilder().setTenantId(tenant)
                    .setItemId(item).build()).getItemsList();
            if (!items.isEmpty()) {
                out.put(region, items.get(0));
            }
        }
        return out;
    }

    long allotmentSum(String tenant, String item) {
        return levels(tenant, item).values().stream().mapToLong(ItemLevel::getAllotment).sum();
    }

    long availableSum(String tenant, String item) {
        return levels(tenant, item).values().stream().mapToLong(ItemLevel::getAvailable).sum();
    }

    /** The records with this id on each region's shard, by region (regions without one absent). */
    Map<String, List<Transfer>> transferRecords(String transferId) {
        Map<String, List<Transfer>> out = new LinkedHashMap<>();
        for (String region : regions) {
            List<Transfer> t = shardApi(region).listTransfers(ListTransfersRequest.newBuilder()
                    .addTransferIds(transferId).build()).getTransfersList();
            if (!t.isEmpty()) {
                out.put(region, t);
            }
        }
        return out;
    }

    /** Every PENDING record on every shard. */
    List<Transfer> pending() {
        List<Transfer> out = new ArrayList<>();
        for (String region : regions) {
            out.addAll(shardApi(region).listTransfers(ListTransfersRequest.getDefaultInstance()).getTransfersList());
        }
        return out;
    }

    /** The cross-shard invariant over every item of the cell, as {@code admin check} would run it. */
    CrossShardReport check() throws InterruptedException {
        return new CrossShardChecker(this::channel, scaled(Duration.ofSeconds(10))).check(topology());
    }

    static Duration scaled(Duration d) {
        return TestTimeouts.scaled(d);
    }

    /** How long one call of a balancer test may take: 30 s, scaled for slow machines. */
    static long callDeadlineMillis() {
        return scaled(Duration.ofSeconds(30)).toMillis();
    }

    @Override
    public void close() {
        for (BalancerNode b : balancers) {
            b.close();
        }
        for (ManagedChannel c : channels.values()) {
            c.shutdownNow();
        }
        for (ApplicationContext ctx : shardContexts.values()) {
            ctx.close();
        }
        if (topology != null) {
            topology.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (zookeeper != null) {
            try {
                zookeeper.close();
            } catch (IOException ignored) {
                // its port and files go with the JVM
            }
        }
    }
}
