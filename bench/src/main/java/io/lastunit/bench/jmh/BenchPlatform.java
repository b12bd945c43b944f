package io.lastunit.bench.jmh;

import com.google.common.util.concurrent.ListenableFuture;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.shard.ShardNode;
import io.lastunit.shard.lane.LaneEngine;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link LocalPlatform} for a benchmark trial: an in-process ZooKeeper, the cell
 * {@code shared} with {@value #SHARDS} shard nodes in region {@code local} (each on its own fresh
 * {@link BenchDatabase}, with the platform's shard settings: lanes by cores per shard, 1 read thread; {@code -Dlastunit.shard.*} system properties override them), one router,
 * and a {@link RouterClient} to it. The router's per-buyer rate and per-item in-flight limits are
 * raised out of the way ({@link #ROUTER_LIMITS}): benchmark callers are a handful of threads
 * each playing millions of buyers, and the measurement is of the path, not of load shedding.
 * {@link #close()} stops the platform and drops every database. Not thread-safe: set up and
 * torn down by one thread; {@link #client()} is thread-safe.
 */
final class BenchPlatform implements AutoCloseable {
    static final int SHARDS = 2;
    static final Map<String, Object> ROUTER_LIMITS = Map.of(
            "lastunit.router.buyer-rate-per-second", 1_000_000.0,
            "lastunit.router.buyer-burst", 1_000_000,
            "lastunit.router.in-flight-per-item-max", 1_000_000);

    private final List<BenchDatabase> databases = Collections.synchronizedList(new ArrayList<>());
    private LocalPlatform platform;
    private RouterClient client;

    /** Starts the platform; {@code routerSettings} are added to (and override) {@link #ROUTER_LIMITS}. */
    static BenchPlatform start(String label, Map<String, Object> routerSettings) throws Exception {
        return start(BenchServer.start(BenchServer.SERVER), label, routerSettings);
    }

    /**
     * As {@link #start(String, Map)}, with every shard's database on {@code server}; the caller
     * closes {@code server} after this platform.
     */
    static BenchPlatform start(BenchServer server, String label, Map<String, Object> routerSettings) throws Exception {
        return start(server, label, routerSettings, true);
    }

    /**
     * The same with every node's metrics on or off ({@code metrics-enabled}). The shards' scheduled
     * invariant check is off either way: its cost is the check's, not the metrics'.
     */
    static BenchPlatform start(BenchServer server, String label, Map<String, Object> routerSettings, boolean metrics)
            throws Exception {
        BenchPlatform p = new BenchPlatform();
        try {
            LocalPlatform.Builder b = LocalPlatform.builder(shardId -> {
                BenchDatabase db = server.create(label + "_" + shardId);
                p.databases.add(db);
                return db.jdbc(0);
            }).cell("shared", List.of(BenchItems.REGION), SHARDS);
            b.metrics(metrics).shardSetting("lastunit.shard.invariant-check-interval-ms", 0);
            ROUTER_LIMITS.forEach(b::routerSetting);
            routerSettings.forEach(b::routerSetting);
            shardSettingsFromSystem().forEach(b::shardSetting);
            p.platform = b.start();
            p.client = new RouterClient(p.platform.routerPort());
            return p;
        } catch (Exception | Error e) {
            p.close();
            throw e;
        }
    }

    /**
     * The {@code -Dlastunit.shard.*} system properties of this JVM, as shard settings over the
     * platform's (e.g. {@code -jvmArgsAppend -Dlastunit.shard.lanes=1}): the platform's own shard
     * defaults would otherwise hide them.
     */
    static Map<String, Object> shardSettingsFromSystem() {
        Map<String, Object> settings = new java.util.TreeMap<>();
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("lastunit.shard."))
                .forEach(k -> settings.put(k, System.getProperty(k)));
        return settings;
    }

    LocalPlatform platform() {
        return platform;
    }

    RouterClient client() {
        return client;
    }

    /**
     * Creates items {@code item-0 …} with {@code total} units each through the router (each
     * lands on the shard the placement picks), up to 64 at a time.
     */
    void createItems(int n, long total) throws Exception {
        createItems(n, total, 1);
    }

    /** As {@link #createItems(int, long)}, each item split into {@code buckets} escrow buckets. */
    void createItems(int n, long total, int buckets) throws Exception {
        List<ListenableFuture<CreateItemResponse>> window = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            window.add(client.inventoryAsync().createItem(CreateItemRequest.newBuilder().setTenantId(BenchItems.TENANT)
                    .setItemId(BenchItems.itemId(i)).setTotal(total).setHomeRegion(BenchItems.REGION)
                    .setBucketCount(buckets).build()));
            if (window.size() == 64 || i == n - 1) {
                for (ListenableFuture<CreateItemResponse> f : window) {
                    f.get(RouterClient.DEADLINE_SECONDS, TimeUnit.SECONDS);
                }
                window.clear();
            }
        }
    }

    /** The lane engines of the shard nodes running now. */
    List<LaneEngine> engines() {
        List<LaneEngine> engines = new ArrayList<>();
        for (String id : platform.shards().keySet()) {
            ShardNode node = platform.shard(id);
            if (node != null) {
                engines.add(node.engine());
            }
        }
        return engines;
    }

    /** Per shard its engine's counters and what its database holds; the router's shed count. */
    String report() throws java.sql.SQLException {
        StringBuilder sb = new StringBuilder();
        for (String id : platform.shards().keySet().stream().sorted().toList()) {
            ShardNode node = platform.shard(id);
            if (node == null) {
                continue;
            }
            LaneEngine.Stats s = node.engine().stats();
            sb.append(String.format("  %s: calls=%d batches=%d ops=%d meanBatch=%.1f redos=%d transactions=%d"
                    + " one-statement=%d refused=%d paced=%d%n", id, node.callsServed(), s.batches(), s.opsApplied(),
                    s.meanBatch(), s.redos(), s.transactions(), s.oneStatementBatches(), s.oneStatementRefusals(),
                    s.paced()));
            sb.append("    ").append(PlainJdbc.ledger(node.dataSource())).append(System.lineSeparator());
        }
        long[] batches = platform.router().reserveBatches();
        sb.append("  router: shed=").append(platform.router().shedCount()).append(" reserveBatches=").append(batches[0])
                .append(" meanReserveBatch=").append(String.format("%.1f", batches[0] == 0 ? 0.0
                        : (double) batches[1] / batches[0]));
        return sb.toString();
    }

    @Override
    public void close() {
        try {
            if (client != null) {
                client.close();
            }
        } finally {
            try {
                if (platform != null) {
                    platform.close();
                }
            } finally {
                RuntimeException failure = null;
                for (BenchDatabase db : new ArrayList<>(databases)) {
                    try {
                        db.close();
                    } catch (RuntimeException e) {
                        if (failure == null) {
                            failure = e;
                        } else {
                            failure.addSuppressed(e);
                        }
                    }
                }
                databases.clear();
                if (failure != null) {
                    throw failure;
                }
            }
        }
    }
}
