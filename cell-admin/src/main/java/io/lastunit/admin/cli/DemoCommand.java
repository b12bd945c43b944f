package io.lastunit.admin.cli;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.demo.Catalog;
import io.lastunit.admin.demo.FlashSale;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyStore;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit demo}: starts a whole platform in this process (as {@code up} does: ZooKeeper,
 * PostgreSQL, cell {@code shared} with 4 shards, cell {@code dedicated} with 2 for the first
 * tenant, a router), creates the items through the router, runs a flash sale through the router
 * over gRPC ({@link FlashSale}), reads every item's stock back through the router and checks the
 * invariants on every shard. The last two lines are for scripts: {@code sold=<n> total=<n>}, then
 * {@code invariant=OK} (or {@code invariant=DRIFT ...}). Exit 0 only when exactly min(units,
 * buyers) units were sold, no call failed and no shard drifted.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Start a local platform and run a flash sale through its router, then check every invariant.",
                "The last lines are 'sold=<n> total=<n>' and 'invariant=OK' (or 'invariant=DRIFT ...')."})
public final class DemoCommand implements Callable<Integer> {
    static final String DEDICATED_CELL = "dedicated";
    static final int SHARED_SHARDS = 4;
    static final int DEDICATED_SHARDS = 2;
    static final String REGION = "local";
    static final long ITEM_TOTAL_MAX = 1_000_000_000L;

    @Spec
    CommandSpec spec;

    @Option(names = "--units", paramLabel = "N", description = "Units for sale, split across the items (default ${DEFAULT-VALUE}).")
    long units = 100;

    @Option(names = "--buyers", paramLabel = "N", description = "Buyers, each reserving one unit (default ${DEFAULT-VALUE}).")
    int buyers = 10_000;

    @Option(names = "--items", paramLabel = "N", description = "Items in all, spread over the tenants (default ${DEFAULT-VALUE}).")
    int items = 5;

    @Option(names = "--tenants", paramLabel = "N",
            description = "Tenants (default ${DEFAULT-VALUE}); the first gets cell " + DEDICATED_CELL + ", the others share cell shared.")
    int tenants = 2;

    @Option(names = "--concurrency", paramLabel = "N", description = "Requests in flight at once (default ${DEFAULT-VALUE}).")
    int concurrency = 256;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the buyers' random picks (default: random; printed).")
    Long seed;

    @Mixin
    JdbcOptions jdbc = new JdbcOptions();

    @Override
    public Integer call() throws Exception {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        long chosenSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong();
        String runTag = Long.toString(System.currentTimeMillis(), 36);
        Catalog catalog = Catalog.of(tenants, items, units, runTag);
        out.printf("lastunit demo: %,d buyers for %,d units of %d item%s of %d tenant%s, %,d in flight (seed %d)%n",
                buyers, units, items, items == 1 ? "" : "s", tenants, tenants == 1 ? "" : "s", concurrency, chosenSeed);
        out.printf("starting ZooKeeper, %s, %d shard nodes (cell shared: %d, cell %s: %d) and a router ...%n",
                jdbc.describe(),
                SHARED_SHARDS + DEDICATED_SHARDS, SHARED_SHARDS, DEDICATED_CELL, DEDICATED_SHARDS);
        out.flush();

        Closer closer = new Closer();
        Thread hook = new Thread(closer::close, "lastunit-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return run(out, closer, catalog, chosenSeed, runTag);
        } finally {
            closer.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook closes (nothing is left to close)
            }
        }
    }

    private int run(PrintWriter out, Closer closer, Catalog catalog, long chosenSeed, String runTag) throws Exception {
        long t0 = System.nanoTime();
        LocalPlatform platform;
        PlatformDatabases dbs;
        try {
            dbs = closer.add(jdbc.open("lastunit_demo_", out));
            platform = closer.add(LocalPlatform.builder(dbs.forShards())
                    .leftovers(line -> {
                        out.println("lastunit: " + line);
                        out.flush();
                    })
                    .cell(Topology.SHARED_CELL, List.of(REGION), SHARED_SHARDS)
                    .cell(DEDICATED_CELL, List.of(REGION), DEDICATED_SHARDS)
                    .start());
        } catch (CliError e) {
            throw e;
        } catch (Exception e) {
            throw CliError.failed("the platform did not start: " + UpCommand.rootMessage(e));
        }
        out.printf("platform up in %.1f s: router 127.0.0.1:%d, ZooKeeper %s%n", (System.nanoTime() - t0) / 1e9,
                platform.routerPort(), platform.zookeeper());
        if (dbs.unsafeNoFsync()) {
            out.println("WARNING: --unsafe-no-fsync: PostgreSQL does not flush commits to disk; a crash of this machine"
                    + " can lose confirmed reservations and sales.");
        }

        CuratorFramework zk = closer.add(Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15)));
        zk.start();
        TopologyStore store = new TopologyStore(zk, TopologyStore.ROOT_DEFAULT, InstantSource.system());
        String bigTenant = catalog.tenants().get(0);
        int epoch = store.assignTenant(bigTenant, DEDICATED_CELL, -1);
        awaitRouterSees(platform, bigTenant);
        out.printf("tenant %s placed in cell %s (epoch %d); %s in cell shared%n", bigTenant, DEDICATED_CELL, epoch,
                catalog.tenants().size() == 1 ? "no other tenant" : String.join(", ",
                        catalog.tenants().subList(1, catalog.tenants().size())));

        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", platform.routerPort()).usePlaintext()
                .intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
        closer.add(() -> {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        });
        var blocking = InventoryServiceGrpc.newBlockingStub(channel);
        for (Catalog.Item item : catalog.items()) {
            CreateItemRequest req = CreateItemRequest.newBuilder().setTenantId(item.tenant()).setItemId(item.itemId())
                    .setTotal(item.total()).setHomeRegion(REGION).build();
            retrying("CreateItem " + item.tenant() + "/" + item.itemId(),
                    () -> blocking.withDeadlineAfter(10, TimeUnit.SECONDS).createItem(req));
        }
        out.printf("created %d items through the router (%,d units)%n%n", catalog.items().size(), catalog.units());
        out.flush();

        FlashSale.Result sale = new FlashSale(channel, catalog, buyers, concurrency, chosenSeed, REGION, runTag, out,
                System.console() != null).run();

        // Read back through the router, and check on every shard the topology lists.
        Topology routerView = platform.router().topology().current();
        Table stockTable = new Table("tenant", "cell", "item", "shard", "#total", "#sold", "#held", "#available");
        long sold = 0;
        long total = 0;
        List<String> stockErrors = new ArrayList<>();
        for (Catalog.Item item : catalog.items()) {
            String shard = routerView.shardFor(item.tenant(), item.itemId(), REGION).map(ShardInfo::getShardId).orElse("?");
            try {
                Stock s = retrying("GetStock " + item.tenant() + "/" + item.itemId(), () -> blocking
                        .withDeadlineAfter(10, TimeUnit.SECONDS).getStock(GetStockRequest.newBuilder()
                                .setTenantId(item.tenant()).setItemId(item.itemId()).setRegion(REGION).build()))
                        .getStock();
                sold += s.getSold();
                total += s.getTotal();
                stockTable.row(item.tenant(), routerView.cellOf(item.tenant()), item.itemId(), shard, s.getTotal(),
                        s.getSold(), s.getHeld(), s.getAvailable());
            } catch (CliError e) {
                stockErrors.add(e.getMessage());
                stockTable.row(item.tenant(), routerView.cellOf(item.tenant()), item.itemId(), shard, "?", "?", "?", "?");
            }
        }
        List<ShardInfo> shards = new ArrayList<>();
        for (Cell c : store.cells()) {
            shards.addAll(store.shards(c.getName()));
        }
        long c0 = System.nanoTime();
        InvariantSweep sweep;
        try (ShardProbe probe = new ShardProbe()) {
            sweep = InvariantSweep.run(probe, shards, "", "", Duration.ofSeconds(60));
        }
        double checkSeconds = (System.nanoTime() - c0) / 1e9;

        out.println();
        out.printf("flash sale: %,d buyers in %.2f s through the router%n", sale.buyers(), sale.seconds());
        out.printf("  reserved      %,d%n", sale.reserved());
        out.printf("  confirmed     %,d%n", sale.confirmed());
        out.printf("  sold out      %,d%n", sale.soldOut());
        out.printf("  errors        %,d%n", sale.errors());
        out.printf("  retries       %,d (rate limited, busy or unavailable; same idempotency key)%n", sale.retries());
        out.printf("  second tries  %,d (a buyer's item sold out, another one still had stock)%n", sale.fallbacks());
        out.printf("  buyers/s      %,.0f (each: Reserve, then Confirm when reserved)%n", sale.buyers() / sale.seconds());
        out.println("  (the demo is not the benchmark: it runs every service and the buyers in one JVM on "
                + (jdbc.embedded() ? "an embedded PostgreSQL" : "one PostgreSQL")
                + ", with a small sale, to show correctness; bench/run measures throughput and latency,"
                + " docs/performance.md)");
        for (String e : sale.errorSamples()) {
            out.println("  error: " + e);
        }
        for (String e : stockErrors) {
            out.println("  error: " + e);
        }
        out.println();
        out.println("stock, read through the router:");
        stockTable.print(out, "  ");
        out.println();
        out.printf("invariant check on %d shards (%.2f s):%n", sweep.shards(), checkSeconds);
        sweep.print(out, "  ");
        out.flush();

        closer.close();

        long expected = Math.min(units, (long) buyers);
        boolean exact = sold == expected && total == units && sale.errors() == 0 && stockErrors.isEmpty();
        if (!exact) {
            out.printf("expected sold=%d total=%d with no errors%n", expected, units);
        }
        out.println("sold=" + sold + " total=" + total);
        if (sweep.ok()) {
            out.println("invariant=OK");
        } else if (sweep.driftCount() > 0) {
            out.println("invariant=DRIFT " + sweep.driftSummary());
        } else {
            out.println("invariant=UNCHECKED " + String.join("; ", sweep.unreachable().stream()
                    .map(a -> a.shard().getShardId() + ": " + a.error()).toList()));
        }
        out.flush();
        return exact && sweep.ok() ? ExitCodes.OK : ExitCodes.FAILED;
    }

    /** Waits until the router routes {@code tenant} to the dedicated cell (its topology is a watch, a moment behind). */
    private static void awaitRouterSees(LocalPlatform platform, String tenant) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!DEDICATED_CELL.equals(platform.router().topology().current().cellOf(tenant))) {
            if (System.nanoTime() > deadline) {
                throw CliError.failed("the router did not see tenant " + tenant + " in cell " + DEDICATED_CELL
                        + " within 10 s");
            }
            Thread.sleep(20);
        }
    }

    /** A setup or read call, retried while the platform answers UNAVAILABLE, ABORTED or RESOURCE_EXHAUSTED. */
    private static <T> T retrying(String what, Supplier<T> call) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.get();
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                boolean retryable = code == Status.Code.UNAVAILABLE || code == Status.Code.ABORTED
                        || code == Status.Code.RESOURCE_EXHAUSTED;
                if (!retryable || attempt >= 20) {
                    throw CliError.failed(what + ": " + code
                            + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription()));
                }
                Thread.sleep(Math.min(1_000, 20L << Math.min(attempt, 6)));
            }
        }
    }

    void validate() {
        List<String> problems = new ArrayList<>();
        if (units < 0) {
            problems.add("--units " + units + " is negative");
        }
        if (buyers < 1) {
            problems.add("--buyers " + buyers + " must be at least 1");
        }
        if (tenants < 1 || tenants > 100) {
            problems.add("--tenants " + tenants + " is outside [1, 100]");
        }
        if (items < 1 || items > 10_000) {
            problems.add("--items " + items + " is outside [1, 10000]");
        } else if (tenants >= 1 && items < tenants) {
            problems.add("--items " + items + " is fewer than --tenants " + tenants + " (each tenant sells at least one item)");
        }
        if (items >= 1 && units >= 0 && (units + items - 1) / items > ITEM_TOTAL_MAX) {
            problems.add("--units " + units + " over " + items + " items is more than " + ITEM_TOTAL_MAX + " per item");
        }
        if (concurrency < 1 || concurrency > 10_000) {
            problems.add("--concurrency " + concurrency + " is outside [1, 10000]");
        }
        try {
            jdbc.validate(spec.commandLine());
        } catch (ParameterException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", problems));
        }
    }
}
