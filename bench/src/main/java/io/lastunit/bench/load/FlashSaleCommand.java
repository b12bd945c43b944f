package io.lastunit.bench.load;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.cli.CliError;
import io.lastunit.admin.cli.Closer;
import io.lastunit.admin.cli.PlatformDatabases;
import io.lastunit.admin.cli.InvariantSweep;
import io.lastunit.admin.cli.JdbcUrls;
import io.lastunit.admin.cli.ShardProbe;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.Placement;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.shard.store.EmbeddedDatabase;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Predicate;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./lastunit bench flash-sale}: a flash sale as load. Against a running router
 * ({@code --target}) or a local platform it starts (ZooKeeper, PostgreSQL, cell {@code shared}
 * with {@code --shards} shard nodes, a router), it creates the items through the router, sends
 * one Reserve per buyer ({@link SaleDriver}: closed loop, or open loop with {@code --rate}), reads
 * every item's stock back through the router, checks the invariants on every shard, prints a
 * summary and writes it as JSON and Markdown under {@code --out}.
 *
 * <p>The summary ends with exactly four lines for scripts: {@code sold=<n> total=<n>},
 * {@code invariant=OK} (or {@code DRIFT ...}, {@code UNCHECKED ...}, {@code SKIPPED}),
 * {@code reserve_per_s=<n>} and {@code p99_ms=<x>} (see {@link RunReport}). Exit 0 only with no
 * error, no drift and exactly min(units, buyers) units taken.
 */
@Command(name = "flash-sale", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"A flash sale as load: many buyers, one Reserve each, through a router.",
                "Reports throughput, Reserve latency percentiles, outcome counts and the invariant check, on the "
                        + "terminal and as <out>/<timestamp>-flash-sale.json and .md.",
                "The last lines are 'sold=<n> total=<n>', 'invariant=OK' (or the drift), 'reserve_per_s=<n>' and "
                        + "'p99_ms=<x>'."})
public final class FlashSaleCommand implements Callable<Integer> {
    static final int SHARDS_DEFAULT = 2;
    static final int SHARDS_MAX = 32;
    static final int ITEMS_MAX = 10_000;
    static final int CONCURRENCY_MAX = 10_000;
    static final long ITEM_TOTAL_MAX = 1_000_000_000L;
    static final double RATE_MAX = 10_000_000;
    static final int WARMUP_SECONDS_MAX = 600;
    static final int WARMUP_SOLD_OUT_MAX = 10_000_000;
    static final String DB_PREFIX = "lastunit_load_";
    static final DateTimeFormatter FILE_STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    /** Most regions --regions accepts. */
    static final int REGIONS_MAX = 8;

    /** Most escrow buckets --buckets accepts (the platform's default bucket_count bound). */
    static final int BUCKETS_MAX = 64;

    @Spec
    CommandSpec spec;

    @Option(names = "--units", paramLabel = "N", description = "Units for sale, split evenly over the items (default ${DEFAULT-VALUE}).")
    long units = 10_000;

    @Option(names = "--buyers", paramLabel = "N", description = "Buyers, each a distinct buyer id and idempotency key reserving one unit (default ${DEFAULT-VALUE}).")
    int buyers = 1_000_000;

    @Option(names = "--concurrency", paramLabel = "N", description = "Reserves in flight at most (default ${DEFAULT-VALUE}); with --rate, the cap on calls in flight.")
    int concurrency = 512;

    @Option(names = "--items", paramLabel = "N", description = "Items; buyer i reserves item i mod N (default ${DEFAULT-VALUE}).")
    int items = 1;

    @Option(names = "--regions", paramLabel = "R", description = "Regions the stock is split over, evenly, 1..8 (default ${DEFAULT-VALUE}): --region-name, then --region-name-2 ... as home first; buyer i is served in region (i / items) mod R. The local platform then runs a shard per region and a bucket-balancer.")
    int regions = 1;

    @Option(names = "--buckets", paramLabel = "B", description = "Escrow buckets per item and region, 1..64; 0 = the platform's default, one per 1,024 units up to 8 (default ${DEFAULT-VALUE}).")
    int buckets = 0;

    @Option(names = "--rate", paramLabel = "N", description = "Open loop: send Reserves at N per second, latency from the intended send time (default: closed loop).")
    Double rate;

    @Option(names = "--confirm", description = "Confirm each RESERVED hold (default: leave holds HELD).")
    boolean confirm;

    @Option(names = "--warmup", paramLabel = "N", description = "Before the sale, sell N units of separate warm-up items to N buyers (closed loop, not measured, not in sold/total) so that the JIT and the pools are warm (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--warmup-sold-out", paramLabel = "N", description = "After the --warmup buyers, N more buyers of the warm-up items, which are sold out by then (closed loop, not measured): the SOLD_OUT answer is warm too, as it would be on a platform that has served sales before. Without it the first seconds after a sell-out run that path cold (default ${DEFAULT-VALUE}; 0.." + WARMUP_SOLD_OUT_MAX + "; needs --warmup).")
    int warmupSoldOut;

    @Option(names = "--host-probe", paramLabel = "SECONDS", description = "Before anything else, SECONDS of a thread asking to sleep 0.5 ms again and again: how late this host wakes it (p50, p99, p99.9, max) goes into the summary beside the sale's conditions. On a shared host the latency tail moves with it (default ${DEFAULT-VALUE}: off; 0.." + HostProbe.SECONDS_MAX + ").")
    int hostProbe;

    @Option(names = "--warmup-seconds", paramLabel = "S", description = "With --rate: after the --warmup buyers, S seconds of open-loop load at the same rate on other separate warm-up items (not measured), so the sale starts on a platform already in its steady state at that rate, as JMH measures after its warm-up iterations (default ${DEFAULT-VALUE}; 0..600).")
    int warmupSeconds;

    @Option(names = "--target", paramLabel = "HOST:PORT", description = "A running router (plaintext) to sell through, instead of starting a local platform.")
    String target;

    @Option(names = "--token", paramLabel = "TOKEN", description = "The bearer token for --target (default: the development token " + LocalPlatform.DEV_TOKEN + ").")
    String token;

    @Option(names = "--zookeeper", paramLabel = "HOST:PORT[,...]", description = "The --target platform's ZooKeeper, for the invariant check on every shard; without it the check is SKIPPED.")
    String zookeeper;

    @Option(names = "--namespace", paramLabel = "PATH", description = "The topology root in that ZooKeeper (default " + TopologyStore.ROOT_DEFAULT + ").")
    String namespace;

    @Option(names = "--tenant", paramLabel = "TENANT", description = "The tenant that sells (default ${DEFAULT-VALUE}).")
    String tenant = "bench";

    @Option(names = "--region-name", paramLabel = "REGION", description = "The region buyers are served in and the items' home region (default ${DEFAULT-VALUE}).")
    String regionName = "local";

    @Option(names = "--shards", paramLabel = "N", description = "Shards of the local platform's cell shared (default " + SHARDS_DEFAULT + "; not with --target).")
    Integer shards;

    @Option(names = "--jdbc-url", paramLabel = "URL", description = "A PostgreSQL server for the local platform's shard databases (" + DB_PREFIX + "<shard>, kept), through a database the user may connect to. Default: LASTUNIT_JDBC_URL, else an embedded PostgreSQL.")
    String jdbcUrl;

    @Option(names = "--jdbc-user", paramLabel = "USER", description = "Its user, who needs CREATEDB (default: LASTUNIT_JDBC_USER, else lastunit).")
    String jdbcUser;

    @Option(names = "--jdbc-password", paramLabel = "PASSWORD", description = "Its password (default: LASTUNIT_JDBC_PASSWORD, else lastunit).")
    String jdbcPassword;

    @Option(names = "--out", paramLabel = "DIR", description = "Where the JSON and Markdown reports go (default ${DEFAULT-VALUE}).")
    Path out = Path.of("bench", "results", "runs");

    @Option(names = "--progress", paramLabel = "MODE", description = "auto, bar (redrawn in place), lines (one a second) or none; on stderr (default ${DEFAULT-VALUE}).")
    String progress = "auto";

    @Override
    public Integer call() throws Exception {
        validate();
        PrintWriter stdout = spec.commandLine().getOut();
        Closer closer = new Closer();
        Thread hook = new Thread(closer::close, "lastunit-bench-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return run(stdout, closer);
        } finally {
            closer.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook closes
            }
        }
    }

    /** The event loop of the buyers' connection, set when the run opens it; open loops send from it. */
    private ScheduledExecutorService sendLoop;

    private int run(PrintWriter stdout, Closer closer) throws Exception {
        Instant startedAt = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        String runTag = Long.toString(System.currentTimeMillis(), 36);
        List<SaleDriver.Item> catalog = catalog(tenant, items, units, runTag);
        SaleDriver.Plan plan = new SaleDriver.Plan(catalog, buyers, concurrency, rate == null ? 0 : rate, confirm,
                regionNames(), runTag);
        stdout.printf(Locale.ROOT, "lastunit bench flash-sale: %,d buyers for %,d units of %d item%s, %s (run %s)%n",
                buyers, units, items, items == 1 ? "" : "s", rate == null ? "closed loop, " + concurrency + " in flight"
                        : String.format(Locale.ROOT, "open loop at %,.0f Reserves/s, at most %d in flight", rate,
                                concurrency), runTag);

        HostProbe probe = null;
        if (hostProbe > 0) {
            probe = HostProbe.measure(hostProbe);
            stdout.println(probe.line());
            stdout.flush();
        }

        long t0 = System.nanoTime();
        LocalPlatform platform = null;
        String router;
        if (target == null) {
            String url = jdbcUrl();
            int nodes = shards() * regionNames().size();
            stdout.printf("starting ZooKeeper, %s, %d shard node%s (cell shared, region%s %s), a router and a"
                            + " bucket-balancer ...%n",
                    url == null ? "an embedded PostgreSQL" : "PostgreSQL at " + url, nodes, nodes == 1 ? "" : "s",
                    regionNames().size() == 1 ? "" : "s", String.join(", ", regionNames()));
            stdout.flush();
            try {
                PlatformDatabases dbs = closer.add(url == null
                        ? PlatformDatabases.embedded(DB_PREFIX, EmbeddedDatabase.Durability.FSYNC, stdout::println)
                        : PlatformDatabases.external(url, jdbcUser(), jdbcPassword(), DB_PREFIX));
                platform = closer.add(LocalPlatform.builder(dbs.forShards())
                        .cell(Topology.SHARED_CELL, regionNames(), shards()).start());
            } catch (CliError e) {
                throw e;
            } catch (Exception e) {
                throw CliError.failed("the platform did not start: " + rootMessage(e));
            }
            router = "127.0.0.1:" + platform.routerPort();
            stdout.printf(Locale.ROOT, "platform up in %.1f s: router %s, ZooKeeper %s%n", (System.nanoTime() - t0) / 1e9,
                    router, platform.zookeeper());
        } else {
            router = target;
        }

        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token());
        // The buyers' connection has an event loop of its own, as a client in its own process would.
        // On gRPC's shared loops it could land on the thread that also serves the router's end of the
        // same connection (with a local platform, one JVM), which then did both ends' work: up to
        // three quarters of a core at 12,000 Reserves/s.
        EventLoopGroup clientLoop = closer.add(new ClientLoop()).group;
        sendLoop = clientLoop.next(); // an open loop sends from it too (SaleDriver.OpenLoopSender)
        // The driver retries by its own rules (Outcomes), so gRPC's transparent retry is off.
        ManagedChannel channel = NettyChannelBuilder.forTarget(router).usePlaintext().directExecutor().disableRetry()
                .eventLoopGroup(clientLoop).channelType(ClientLoop.channelType())
                .intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
        closer.add(() -> {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        });
        var blocking = InventoryServiceGrpc.newBlockingStub(channel);
        long c0 = System.nanoTime();
        createAll(catalog, blocking, router);
        stdout.printf(Locale.ROOT, "created %,d item%s (%,d units) of tenant %s through router %s in %.1f s%n%n",
                catalog.size(), catalog.size() == 1 ? "" : "s", units, tenant, router, (System.nanoTime() - c0) / 1e9);
        stdout.flush();
        if (warmup > 0) {
            warmUp(channel, blocking, router, stdout, catalog, platform);
        }
        double setupSeconds = (System.nanoTime() - t0) / 1e9;

        Conditions.Snapshot before = Conditions.take(platform);
        SaleResult sale = new SaleDriver(channel, plan, new Progress(progressMode(), System.err), sendLoop).run();
        Conditions conditions = Conditions.between(before, Conditions.take(platform));

        long sold = 0;
        long total = 0;
        List<String> stockErrors = new ArrayList<>();
        for (SaleDriver.Item item : catalog) {
            for (String region : regionNames()) {
                try {
                    Stock s = retrying("GetStock " + item.tenant() + "/" + item.itemId() + " in " + region, () -> blocking
                            .withDeadlineAfter(10, TimeUnit.SECONDS).getStock(GetStockRequest.newBuilder()
                                    .setTenantId(item.tenant()).setItemId(item.itemId()).setRegion(region).build()))
                            .getStock();
                    sold += s.getHeld() + s.getSold();
                    total += s.getTotal(); // the region's allotment; summed over regions: the total less transfers in flight
                } catch (CliError e) {
                    stockErrors.add(e.getMessage());
                }
            }
        }

        long k0 = System.nanoTime();
        Invariant invariant = checkInvariants(platform);
        double checkSeconds = (System.nanoTime() - k0) / 1e9;

        RunReport report = new RunReport(startedAt, commandLine(), optionsMap(), machine(), sale, sold, total, units,
                invariant, stockErrors, setupSeconds, checkSeconds, conditions, probe);
        report.printTerminal(stdout);
        stdout.println();
        writeReports(report, stdout);
        if (rate == null && sale.reserved() > 0) {
            stdout.printf(Locale.ROOT, "latency at half this throughput: add --rate %d (half of reserve/s)%n",
                    Math.max(1, Math.round(sale.reservePerSecond() / 2)));
        }
        stdout.flush();
        closer.close(); // stop the platform before the last lines, so its shutdown is not printed after them
        for (String l : report.scriptLines()) {
            stdout.println(l);
        }
        stdout.flush();
        return report.exitCode();
    }

    /** Sells {@code warmup} units of fresh items to as many buyers; nothing of it is reported but a line. */
    private void warmUp(ManagedChannel channel, InventoryServiceGrpc.InventoryServiceBlockingStub blocking, String router,
            PrintWriter stdout, List<SaleDriver.Item> sale, LocalPlatform platform) throws InterruptedException {
        String tag = Long.toString(System.currentTimeMillis(), 36) + "w";
        stdout.printf(Locale.ROOT, "warming up: %,d buyers for %,d units of separate items ...%n", warmup, warmup);
        stdout.flush();
        List<SaleDriver.Item> warmItems = twins(catalog(tenant, items, warmup, tag), "warmup-", sale, platform);
        createAll(warmItems, blocking, router);
        SaleResult w = new SaleDriver(channel, new SaleDriver.Plan(warmItems, warmup, concurrency, 0, confirm,
                regionNames(), tag), new Progress(Progress.Mode.NONE, System.err)).run();
        stdout.printf(Locale.ROOT, "warm-up: %,d buyers in %.2f s (%,.0f reserve/s, %,d errors; not measured)%n%n",
                w.buyers(), w.durationSeconds(), w.reservePerSecond(), w.errors());
        stdout.flush();
        if (warmupSoldOut > 0) {
            // New keys for the same (now sold-out) items: every one is answered SOLD_OUT.
            SaleResult x = new SaleDriver(channel, new SaleDriver.Plan(warmItems, warmupSoldOut, concurrency, 0, confirm,
                    regionNames(), tag + "x"), new Progress(Progress.Mode.NONE, System.err)).run();
            stdout.printf(Locale.ROOT, "warm-up, sold out: %,d buyers in %.2f s (%,d SOLD_OUT, %,d reserved, %,d "
                    + "errors; not measured)%n%n", x.buyers(), x.durationSeconds(), x.soldOut(), x.reserved(), x.errors());
            stdout.flush();
        }
        if (rate == null || warmupSeconds == 0) {
            return;
        }
        int openBuyers = (int) Math.min(Integer.MAX_VALUE, Math.round(rate * warmupSeconds));
        String openTag = tag + "o";
        List<SaleDriver.Item> openItems = twins(catalog(tenant, items, openBuyers, openTag), "warmup-open-", sale,
                platform);
        createAll(openItems, blocking, router);
        SaleResult o = new SaleDriver(channel, new SaleDriver.Plan(openItems, openBuyers, concurrency, rate, confirm,
                regionNames(), openTag), new Progress(Progress.Mode.NONE, System.err), sendLoop).run();
        stdout.printf(Locale.ROOT, "warm-up, open loop: %,d buyers in %.2f s at %,.0f Reserves/s (p99 %.2f ms, %,d "
                + "errors; not measured)%n%n", o.buyers(), o.durationSeconds(), rate, o.allLatency().p99(), o.errors());
        stdout.flush();
    }

    /** Candidate ids tried per warm-up item for a twin of its sale item, at most. */
    static final int TWIN_TRIES_MAX = 100_000;

    /**
     * Warm-up items named {@code prefix + id}; on a local platform, item k's id is chosen so that
     * it lives where sale item k does: on the same shard in every region, and there on the same
     * lane for bucket 0. A warm-up then warms what the sale will use (the shard's lanes, its
     * pooled connections and their prepared statements, its database's caches), not whichever
     * shard the warm-up item's name happened to hash to. (Seen before: with the sale item on the
     * other shard, the first second of an open-loop sale read p99 39-43 ms, and the next five
     * 12-19 ms, against about 10.) Against {@code --target} the ids are plain.
     */
    List<SaleDriver.Item> twins(List<SaleDriver.Item> warm, String prefix, List<SaleDriver.Item> sale,
            LocalPlatform platform) {
        List<List<ShardInfo>> regionShards = new ArrayList<>();
        if (platform != null) {
            for (String region : regionNames()) {
                List<ShardInfo> shards = platform.shards().values().stream()
                        .filter(s -> s.getCell().equals(Topology.SHARED_CELL) && s.getRegion().equals(region)).toList();
                if (!shards.isEmpty()) {
                    regionShards.add(shards);
                }
            }
        }
        List<SaleDriver.Item> out = new ArrayList<>(warm.size());
        for (int k = 0; k < warm.size(); k++) {
            SaleDriver.Item w = warm.get(k);
            String id = prefix + w.itemId();
            if (platform != null) {
                String saleItem = sale.get(k).itemId();
                id = twinId(id, candidate -> sameHome(platform, regionShards, w.tenant(), saleItem, candidate));
            }
            out.add(new SaleDriver.Item(w.tenant(), id, w.total()));
        }
        return out;
    }

    /** {@code base} or {@code base-N}, the first that lands where {@code saleItem} does; {@code base} if none does. */
    static String twinId(String base, Predicate<String> landsWithSale) {
        for (int n = 0; n < TWIN_TRIES_MAX; n++) {
            String candidate = n == 0 ? base : base + "-" + n;
            if (landsWithSale.test(candidate)) {
                return candidate;
            }
        }
        return base;
    }

    /** Whether items {@code a} and {@code b} live on the same shard of each region, and there on bucket 0's lane. */
    private static boolean sameHome(LocalPlatform platform, List<List<ShardInfo>> regionShards, String tenantId,
            String a, String b) {
        for (List<ShardInfo> shards : regionShards) {
            ShardInfo home = Placement.pick(tenantId, a, shards);
            if (!home.getShardId().equals(Placement.pick(tenantId, b, shards).getShardId())) {
                return false;
            }
            var engine = platform.shard(home.getShardId()).engine();
            if (engine.laneOf(tenantId, a, 0) != engine.laneOf(tenantId, b, 0)) {
                return false;
            }
        }
        return true;
    }

    /** Creates each of {@code items} through the router, retrying as {@link #retrying} does. */
    private void createAll(List<SaleDriver.Item> items, InventoryServiceGrpc.InventoryServiceBlockingStub blocking,
                           String router) throws InterruptedException {
        for (SaleDriver.Item item : items) {
            CreateItemRequest req = createItem(item);
            retrying("CreateItem " + item.tenant() + "/" + item.itemId() + " at " + router,
                    () -> blocking.withDeadlineAfter(10, TimeUnit.SECONDS).createItem(req));
        }
    }

    /** Item k of n gets units/n, the first units mod n one more; ids carry the run tag (fresh items every run). */
    static List<SaleDriver.Item> catalog(String tenant, int itemCount, long units, String runTag) {
        List<SaleDriver.Item> list = new ArrayList<>(itemCount);
        long base = units / itemCount;
        long extra = units % itemCount;
        for (int k = 0; k < itemCount; k++) {
            list.add(new SaleDriver.Item(tenant, "flash-" + runTag + "-" + (k + 1), base + (k < extra ? 1 : 0)));
        }
        return list;
    }

    /** The regions of the sale, home first: --region-name, --region-name-2, ... */
    List<String> regionNames() {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < regions; i++) {
            names.add(i == 0 ? regionName : regionName + "-" + (i + 1));
        }
        return names;
    }

    /** CreateItem of one item: home --region-name, the units split evenly over the regions. */
    CreateItemRequest createItem(SaleDriver.Item item) {
        CreateItemRequest.Builder b = CreateItemRequest.newBuilder().setTenantId(item.tenant())
                .setItemId(item.itemId()).setTotal(item.total()).setHomeRegion(regionName).setBucketCount(buckets);
        if (regions > 1) {
            List<String> names = regionNames();
            for (int i = 0; i < names.size(); i++) {
                long share = item.total() / regions + (i == 0 ? item.total() % regions : 0);
                b.addRegionQuotas(io.lastunit.api.inventory.v1.RegionQuota.newBuilder().setRegion(names.get(i))
                        .setQuantity(share));
            }
        }
        return b.build();
    }

    private Invariant checkInvariants(LocalPlatform platform) throws InterruptedException {
        List<ShardInfo> shardList = new ArrayList<>();
        if (platform != null) {
            shardList.addAll(platform.shards().values());
        } else if (zookeeper == null) {
            return Invariant.skipped();
        } else {
            CuratorFramework zk;
            try {
                zk = Curators.newClient(zookeeper, Duration.ofSeconds(15));
            } catch (IllegalArgumentException e) {
                return Invariant.unchecked("--zookeeper '" + zookeeper + "': " + e.getMessage());
            }
            try (zk) {
                zk.start();
                if (!zk.blockUntilConnected(10, TimeUnit.SECONDS)) {
                    return Invariant.unchecked("ZooKeeper at " + zookeeper + " did not answer within 10 s");
                }
                TopologyStore store = new TopologyStore(zk, namespace(), InstantSource.system());
                for (Cell c : store.cells()) {
                    shardList.addAll(store.shards(c.getName()));
                }
            } catch (RuntimeException e) {
                return Invariant.unchecked("the topology at " + zookeeper + namespace() + " could not be read: "
                        + rootMessage(e));
            }
            if (shardList.isEmpty()) {
                return Invariant.unchecked("the topology at " + zookeeper + namespace() + " lists no shards");
            }
        }
        InvariantSweep sweep;
        try (ShardProbe probe = new ShardProbe()) {
            sweep = InvariantSweep.run(probe, shardList, "", "", Duration.ofSeconds(60));
        }
        Invariant.Status status = sweep.ok() ? Invariant.Status.OK
                : sweep.driftCount() > 0 ? Invariant.Status.DRIFT : Invariant.Status.UNCHECKED;
        String detail = switch (status) {
            case DRIFT -> sweep.driftSummary();
            case UNCHECKED -> String.join("; ", sweep.unreachable().stream()
                    .map(a -> a.shard().getShardId() + ": " + a.error()).toList());
            default -> "";
        };
        return new Invariant(status, detail, sweep.shards(), sweep.items(), sweep.holds(), sweep.driftCount(),
                sweep.problemLines());
    }

    private void writeReports(RunReport report, PrintWriter stdout) {
        String stamp = FILE_STAMP.format(report.startedAt());
        Path json = out.resolve(stamp + "-flash-sale.json");
        Path md = out.resolve(stamp + "-flash-sale.md");
        try {
            Files.createDirectories(out);
            Files.writeString(json, report.json(), StandardCharsets.UTF_8);
            Files.writeString(md, report.markdown(), StandardCharsets.UTF_8);
            stdout.println("wrote " + json + " and " + md);
        } catch (IOException | RuntimeException e) {
            stdout.println("warning: could not write the reports under " + out + ": " + e);
        }
    }

    /**
     * A setup or read call, retried while the platform answers UNAVAILABLE, ABORTED or
     * RESOURCE_EXHAUSTED. Failing for good: exit 3 when unreachable, 2 when refused (token, tenant,
     * region), 1 otherwise.
     */
    private static <T> T retrying(String what, Supplier<T> call) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.get();
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                boolean retryable = code == Status.Code.UNAVAILABLE || code == Status.Code.ABORTED
                        || code == Status.Code.RESOURCE_EXHAUSTED;
                if (!retryable || attempt >= 20) {
                    String message = what + ": " + Outcomes.describe(e);
                    throw switch (code) {
                        case UNAVAILABLE -> CliError.unreachable(message);
                        case UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT, ALREADY_EXISTS, NOT_FOUND ->
                                CliError.usage(message);
                        default -> CliError.failed(message);
                    };
                }
                Thread.sleep(Math.min(1_000, 20L << Math.min(attempt, 6)));
            }
        }
    }

    private Map<String, Object> optionsMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("units", units);
        m.put("buyers", buyers);
        m.put("concurrency", concurrency);
        m.put("items", items);
        m.put("regions", regions);
        m.put("buckets", buckets);
        m.put("rate", rate);
        m.put("confirm", confirm);
        m.put("warmup", warmup);
        m.put("warmup_sold_out", warmupSoldOut);
        m.put("host_probe_s", hostProbe);
        m.put("warmup_seconds", warmupSeconds);
        m.put("target", target);
        m.put("zookeeper", zookeeper);
        m.put("tenant", tenant);
        m.put("region_name", regionName);
        m.put("shards", target == null ? shards() : null);
        m.put("database", target != null ? null : jdbcUrl() == null ? "embedded" : jdbcUrl());
        m.put("attempts_max", SaleDriver.ATTEMPTS_MAX);
        m.put("deadline_ms", SaleDriver.DEADLINE_MS);
        return m;
    }

    private String commandLine() {
        List<String> args = spec.commandLine().getParseResult().originalArgs();
        List<String> shown = new ArrayList<>();
        boolean hideNext = false;
        for (String a : args) {
            if (hideNext) {
                shown.add("***");
                hideNext = false;
            } else if (a.equals("--token") || a.equals("--jdbc-password")) {
                shown.add(a);
                hideNext = true;
            } else if (a.startsWith("--token=") || a.startsWith("--jdbc-password=")) {
                shown.add(a.substring(0, a.indexOf('=') + 1) + "***");
            } else {
                shown.add(a);
            }
        }
        return "./lastunit bench " + String.join(" ", shown);
    }

    static Map<String, Object> machine() {
        Map<String, Object> m = new LinkedHashMap<>();
        Runtime rt = Runtime.getRuntime();
        m.put("cores", rt.availableProcessors());
        m.put("cpu", cpuModel());
        m.put("java_version", System.getProperty("java.version"));
        m.put("java_vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        m.put("max_heap_mb", rt.maxMemory() / (1024 * 1024));
        m.put("jvm_args", ManagementFactory.getRuntimeMXBean().getInputArguments());
        return m;
    }

    private static String cpuModel() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("model name")) {
                    return l.substring(l.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return null;
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }

    // ---- options

    String jdbcUrl() {
        String u = jdbcUrl != null ? jdbcUrl : env("LASTUNIT_JDBC_URL", "");
        return u.isBlank() ? null : u;
    }

    private String jdbcUser() {
        return jdbcUser != null ? jdbcUser : env("LASTUNIT_JDBC_USER", "lastunit");
    }

    private String jdbcPassword() {
        return jdbcPassword != null ? jdbcPassword : env("LASTUNIT_JDBC_PASSWORD", "lastunit");
    }

    int shards() {
        return shards == null ? SHARDS_DEFAULT : shards;
    }

    String token() {
        return token == null ? LocalPlatform.DEV_TOKEN : token;
    }

    String namespace() {
        return namespace == null ? TopologyStore.ROOT_DEFAULT : namespace;
    }

    Progress.Mode progressMode() {
        return progress.equalsIgnoreCase("auto") ? Progress.Mode.auto()
                : Progress.Mode.valueOf(progress.toUpperCase(Locale.ROOT));
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null ? fallback : v;
    }

    void validate() {
        List<String> problems = problems();
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", problems));
        }
    }

    /** Every problem with the options, named; no I/O. */
    List<String> problems() {
        List<String> problems = new ArrayList<>();
        if (units < 0) {
            problems.add("--units " + units + " is negative");
        }
        if (buyers < 1) {
            problems.add("--buyers " + buyers + " must be at least 1");
        }
        if (concurrency < 1 || concurrency > CONCURRENCY_MAX) {
            problems.add("--concurrency " + concurrency + " is outside [1, " + CONCURRENCY_MAX + "]");
        }
        if (items < 1 || items > ITEMS_MAX) {
            problems.add("--items " + items + " is outside [1, " + ITEMS_MAX + "]");
        } else if (units >= 0 && (units + items - 1) / items > ITEM_TOTAL_MAX) {
            problems.add("--units " + units + " over " + items + " item" + (items == 1 ? "" : "s") + " is more than "
                    + ITEM_TOTAL_MAX + " per item");
        }
        if (regions < 1 || regions > REGIONS_MAX) {
            problems.add("--regions " + regions + " is outside [1, " + REGIONS_MAX + "]");
        }
        if (buckets < 0 || buckets > BUCKETS_MAX) {
            problems.add("--buckets " + buckets + " is outside [0, " + BUCKETS_MAX + "] (0 = the platform's default)");
        }
        if (warmup < 0) {
            problems.add("--warmup " + warmup + " is negative");
        } else if (items >= 1 && items <= ITEMS_MAX && (warmup + items - 1L) / items > ITEM_TOTAL_MAX) {
            problems.add("--warmup " + warmup + " over " + items + " items is more than " + ITEM_TOTAL_MAX + " per item");
        }
        if (hostProbe < 0 || hostProbe > HostProbe.SECONDS_MAX) {
            problems.add("--host-probe " + hostProbe + " is outside [0, " + HostProbe.SECONDS_MAX + "]");
        }
        if (warmupSoldOut < 0 || warmupSoldOut > WARMUP_SOLD_OUT_MAX) {
            problems.add("--warmup-sold-out " + warmupSoldOut + " is outside [0, " + WARMUP_SOLD_OUT_MAX + "]");
        } else if (warmupSoldOut > 0 && warmup <= 0) {
            problems.add("--warmup-sold-out needs --warmup (it asks for the warm-up items once they are sold out)");
        }
        if (warmupSeconds < 0 || warmupSeconds > WARMUP_SECONDS_MAX) {
            problems.add("--warmup-seconds " + warmupSeconds + " is outside [0, " + WARMUP_SECONDS_MAX + "]");
        } else if (warmupSeconds > 0 && rate == null) {
            problems.add("--warmup-seconds needs --rate (it warms up open loop at that rate)");
        } else if (warmupSeconds > 0 && rate * warmupSeconds / items > ITEM_TOTAL_MAX) {
            problems.add("--warmup-seconds " + warmupSeconds + " at --rate " + rate + " over " + items
                    + " items is more than " + ITEM_TOTAL_MAX + " units per item");
        }
        if (rate != null && !(rate > 0 && rate <= RATE_MAX)) {
            problems.add("--rate " + rate + " is outside (0, " + (long) RATE_MAX + "] Reserves per second");
        }
        if (target != null) {
            if (!isHostPort(target)) {
                problems.add("--target '" + target + "' is not HOST:PORT (port 1-65535)");
            }
            if (shards != null) {
                problems.add("--shards is for the local platform, not with --target");
            }
            if (jdbcUrl != null || jdbcUser != null || jdbcPassword != null) {
                problems.add("--jdbc-url/--jdbc-user/--jdbc-password are for the local platform, not with --target");
            }
        } else {
            if (token != null) {
                problems.add("--token needs --target (the local platform uses the development token)");
            }
            if (zookeeper != null) {
                problems.add("--zookeeper needs --target (the local platform checks its own shards)");
            }
            if (namespace != null) {
                problems.add("--namespace needs --target and --zookeeper");
            }
            if (shards() < 1 || shards() > SHARDS_MAX) {
                problems.add("--shards " + shards() + " is outside [1, " + SHARDS_MAX + "]");
            }
            if (jdbcUrl != null && !jdbcUrl.isBlank()) {
                try {
                    JdbcUrls.withDatabase(jdbcUrl, "x");
                } catch (IllegalArgumentException e) {
                    problems.add("--jdbc-url: " + e.getMessage());
                }
            }
        }
        if (zookeeper != null && zookeeper.isBlank()) {
            problems.add("--zookeeper is empty");
        }
        if (namespace != null && zookeeper == null && target != null) {
            problems.add("--namespace needs --zookeeper");
        }
        if (token != null && (token.isBlank() || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f))) {
            problems.add("--token must be printable ASCII without spaces");
        }
        if (!isName(tenant, 64)) {
            problems.add("--tenant '" + tenant + "' is not 1..64 printable ASCII characters without spaces");
        }
        if (!isName(regionName, 32)) {
            problems.add("--region-name '" + regionName + "' is not 1..32 printable ASCII characters without spaces");
        }
        if (!List.of("auto", "bar", "lines", "none").contains(progress.toLowerCase(Locale.ROOT))) {
            problems.add("--progress '" + progress + "' is not one of auto, bar, lines, none");
        }
        return problems;
    }

    static boolean isHostPort(String s) {
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1) {
            return false;
        }
        try {
            int port = Integer.parseInt(s.substring(colon + 1));
            return port >= 1 && port <= 65_535 && s.substring(0, colon).chars().noneMatch(Character::isWhitespace);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static boolean isName(String s, int max) {
        return s != null && !s.isEmpty() && s.length() <= max && s.chars().allMatch(c -> c > 0x20 && c < 0x7f);
    }
}
