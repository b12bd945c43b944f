package io.lastunit.admin.cli;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.demo.Catalog;
import io.lastunit.admin.demo.FlashSale;
import io.lastunit.admin.demo.SeatAudit;
import io.lastunit.admin.demo.SeatMapDrawing;
import io.lastunit.admin.demo.SeatSale;
import io.lastunit.admin.demo.Venue;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetSeatMapRequest;
import io.lastunit.api.inventory.v1.GetSeatMapResponse;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.SeatRules;
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
 *
 * <p>{@code lastunit demo --seats} (issue 26) sells a SEATED venue instead, on the same platform
 * and through the same router ({@link #seatDemo}): 50,000 buyers by default, each asking for 1..6
 * adjacent seats in one row ({@link SeatSale}), most confirming, some releasing, some keeping their
 * hold; then it draws the sold/held/free map read through the router ({@link SeatMapDrawing}),
 * runs the same invariant check and checks the buyers' own answers ({@link SeatAudit}). It ends
 * with the counts, {@code sold=<n> total=<n>} (seats) and {@code invariant=OK} (or
 * {@code invariant=FAILED <reasons>}); exit 0 only when no call failed and every check passed.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Start a local platform and run a flash sale through its router, then check every invariant.",
                "With --seats, sell a venue of named seats instead, buyers asking for 1-6 adjacent seats, and draw"
                        + " its map at the end.",
                "The last lines are 'sold=<n> total=<n>' and 'invariant=OK' (or 'invariant=DRIFT ...';"
                        + " with --seats 'invariant=FAILED ...')."})
public final class DemoCommand implements Callable<Integer> {
    static final String DEDICATED_CELL = "dedicated";
    static final int SHARED_SHARDS = 4;
    static final int DEDICATED_SHARDS = 2;
    static final String REGION = "local";
    static final long ITEM_TOTAL_MAX = 1_000_000_000L;
    static final int BUYERS_DEFAULT = 10_000;
    static final int SEAT_BUYERS_DEFAULT = 50_000;
    /** The tenant whose venue {@code --seats} sells, placed in the dedicated cell. */
    static final String SEAT_TENANT = "tenant-1";
    /** Held seats outlive the demo: the final map shows the holds the buyers kept. */
    static final long SEAT_HOLD_TTL_MS = 3_600_000L;

    @Spec
    CommandSpec spec;

    @Option(names = "--units", paramLabel = "N", description = "Units for sale, split across the items (default ${DEFAULT-VALUE}).")
    long units = 100;

    @Option(names = "--buyers", paramLabel = "N",
            description = "Buyers, each reserving one unit, or with --seats 1-6 adjacent seats (default 10,000;"
                    + " 50,000 with --seats).")
    Integer buyers;

    @Option(names = "--items", paramLabel = "N", description = "Items in all, spread over the tenants (default ${DEFAULT-VALUE}).")
    int items = 5;

    @Option(names = "--tenants", paramLabel = "N",
            description = "Tenants (default ${DEFAULT-VALUE}); the first gets cell " + DEDICATED_CELL + ", the others share cell shared.")
    int tenants = 2;

    @Option(names = "--concurrency", paramLabel = "N", description = "Requests in flight at once (default ${DEFAULT-VALUE}).")
    int concurrency = 256;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the buyers' random picks (default: random; printed).")
    Long seed;

    @Option(names = "--seats",
            description = "Sell a venue of named seats instead (one SEATED item of tenant " + SEAT_TENANT + "): each"
                    + " buyer asks for 1-6 adjacent seats in one row; the demo ends by drawing the sold/held/free map.")
    boolean seats;

    @Option(names = "--sections", paramLabel = "N",
            description = "With --seats: sections of the venue (default ${DEFAULT-VALUE}, at most " + Venue.SECTIONS_MAX + ").")
    int sections = 4;

    @Option(names = "--rows", paramLabel = "N",
            description = "With --seats: rows per section (default ${DEFAULT-VALUE}, at most " + Venue.ROWS_MAX + ").")
    int rows = 20;

    @Option(names = "--seats-per-row", paramLabel = "N",
            description = "With --seats: seats per row, an aisle in the middle of rows of 8 or more (default"
                    + " ${DEFAULT-VALUE}, at most " + Venue.SEATS_PER_ROW_MAX + ").")
    int seatsPerRow = 25;

    @Mixin
    JdbcOptions jdbc = new JdbcOptions();

    int buyers() {
        return buyers != null ? buyers : seats ? SEAT_BUYERS_DEFAULT : BUYERS_DEFAULT;
    }

    @Override
    public Integer call() throws Exception {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        long chosenSeed = seed != null ? seed : ThreadLocalRandom.current().nextLong();
        String runTag = Long.toString(System.currentTimeMillis(), 36);
        if (seats) {
            return callSeats(out, chosenSeed, runTag);
        }
        int buyers = buyers();
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
            return run(out, closer, catalog, buyers, chosenSeed, runTag);
        } finally {
            closer.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook closes (nothing is left to close)
            }
        }
    }

    private int run(PrintWriter out, Closer closer, Catalog catalog, int buyers, long chosenSeed, String runTag)
            throws Exception {
        LocalPlatform platform = startPlatform(out, closer);

        CuratorFramework zk = closer.add(Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15)));
        zk.start();
        TopologyStore store = new TopologyStore(zk, TopologyStore.ROOT_DEFAULT, InstantSource.system());
        String bigTenant = catalog.tenants().get(0);
        int epoch = store.assignTenant(bigTenant, DEDICATED_CELL, -1);
        awaitRouterSees(platform, bigTenant, DEDICATED_CELL);
        out.printf("tenant %s placed in cell %s (epoch %d); %s in cell shared%n", bigTenant, DEDICATED_CELL, epoch,
                catalog.tenants().size() == 1 ? "no other tenant" : String.join(", ",
                        catalog.tenants().subList(1, catalog.tenants().size())));

        ManagedChannel channel = routerChannel(platform, closer);
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
        List<ShardInfo> shards = allShards(store);
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

    /**
     * Starts the demo's platform (ZooKeeper, the databases, cell shared with {@value #SHARED_SHARDS}
     * shards, cell {@value #DEDICATED_CELL} with {@value #DEDICATED_SHARDS}, a router), registered with
     * {@code closer}, and says so on {@code out}.
     */
    private LocalPlatform startPlatform(PrintWriter out, Closer closer) {
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
        return platform;
    }

    /** A plaintext channel to the platform's router carrying the dev token, closed by {@code closer}. */
    private static ManagedChannel routerChannel(LocalPlatform platform, Closer closer) {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", platform.routerPort()).usePlaintext()
                .intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
        closer.add(() -> {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        });
        return channel;
    }

    private static List<ShardInfo> allShards(TopologyStore store) throws Exception {
        List<ShardInfo> shards = new ArrayList<>();
        for (Cell c : store.cells()) {
            shards.addAll(store.shards(c.getName()));
        }
        return shards;
    }

    /** Waits until the router routes {@code tenant} to {@code cell} (its topology is a watch, a moment behind). */
    private static void awaitRouterSees(LocalPlatform platform, String tenant, String cell) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!cell.equals(platform.router().topology().current().cellOf(tenant))) {
            if (System.nanoTime() > deadline) {
                throw CliError.failed("the router did not see tenant " + tenant + " in cell " + cell
                        + " within 10 s");
            }
            Thread.sleep(20);
        }
    }

    // ---------------------------------------------------------------- --seats

    private int callSeats(PrintWriter out, long chosenSeed, String runTag) throws Exception {
        Venue venue = Venue.of(sections, rows, seatsPerRow);
        int n = buyers();
        out.printf("lastunit demo --seats: %,d buyers for a venue of %,d seats (%s), each asking for 1-%d adjacent"
                        + " seats in one row, %,d in flight (seed %d)%n", n, venue.total(), venue.describe(),
                adjacentMax(venue), concurrency, chosenSeed);
        out.printf("starting ZooKeeper, %s, %d shard nodes (cell shared: %d, cell %s: %d) and a router ...%n",
                jdbc.describe(), SHARED_SHARDS + DEDICATED_SHARDS, SHARED_SHARDS, DEDICATED_CELL, DEDICATED_SHARDS);
        out.flush();
        Closer closer = new Closer();
        Thread hook = new Thread(closer::close, "lastunit-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            LocalPlatform platform = startPlatform(out, closer);
            SeatRun run = seatDemo(platform, closer, new SeatPlan(venue, SEAT_TENANT, DEDICATED_CELL, n, concurrency,
                    chosenSeed, runTag, System.console() != null, jdbc.embedded()), out);
            // The platform stops before the last lines, so they are the last lines.
            closer.close();
            run.printEnd(out);
            out.flush();
            return run.exitCode();
        } finally {
            closer.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // Ctrl-C: the hook closes (nothing is left to close)
            }
        }
    }

    /**
     * What {@link #seatDemo} sells and how: {@code venue} as one SEATED item of {@code tenant}, which is
     * placed in {@code cell}; {@code buyers} buyers, {@code concurrency} in flight.
     */
    record SeatPlan(Venue venue, String tenant, String cell, int buyers, int concurrency, long seed, String runTag,
            boolean liveProgress, boolean embeddedDatabase) {
        String itemId() {
            return "venue-" + runTag;
        }
    }

    /** How {@link #seatDemo} went: what it read and checked, and the lines it ends with. */
    record SeatRun(SeatPlan plan, SeatSale.Result sale, GetSeatMapResponse map, List<String> drawing,
            InvariantSweep sweep, SeatAudit.Report audit) {
        /** Seats of the venue on the map: sold + held + free + off sale. */
        long total() {
            return audit.sold() + audit.held() + audit.free() + audit.killed();
        }

        boolean ok() {
            return sale.errors() == 0 && sweep.ok() && audit.ok();
        }

        int exitCode() {
            return ok() ? ExitCodes.OK : ExitCodes.FAILED;
        }

        /** Why the check failed: drifts, shards not asked, then the buyers' answers' problems. */
        List<String> failures() {
            List<String> why = new ArrayList<>();
            if (sweep.driftCount() > 0) {
                why.add("DRIFT " + sweep.driftSummary());
            }
            for (var a : sweep.unreachable()) {
                why.add("UNCHECKED " + a.shard().getShardId() + ": " + a.error());
            }
            why.addAll(audit.problems());
            return why;
        }

        /** The counts, {@code sold=<n> total=<n>}, and {@code invariant=OK} (or FAILED with the reasons). */
        List<String> endLines() {
            List<String> lines = new ArrayList<>();
            if (sale.errors() > 0) {
                lines.add(String.format("expected no errors; %,d buyers' calls failed", sale.errors()));
            }
            lines.add(String.format("seats: %,d sold, %,d held, %,d free%s of %,d", audit.sold(), audit.held(),
                    audit.free(), audit.killed() == 0 ? "" : String.format(", %,d off sale", audit.killed()), total()));
            lines.add("sold=" + audit.sold() + " total=" + total());
            List<String> why = failures();
            lines.add(why.isEmpty() ? "invariant=OK" : "invariant=FAILED " + String.join("; ", why));
            return lines;
        }

        void printEnd(PrintWriter out) {
            endLines().forEach(out::println);
        }
    }

    /** The most seats a buyer asks for: 6, or fewer when no row offers 6 together (the shard refuses those). */
    static int adjacentMax(Venue venue) {
        return Math.min(SeatSale.ADJACENT_MAX, venue.longestRun());
    }

    /** Holds (or their seats) of {@code plan} that the buyers released. */
    private static long released(SeatSale.Result sale, SeatSale.Plan plan, boolean seats) {
        return sale.holds().stream().filter(h -> h.plan() == plan && h.fate() == SeatSale.Fate.RELEASED)
                .mapToLong(h -> seats ? h.seats().size() : 1).sum();
    }

    /**
     * The seat sale on a running platform, all through its router over gRPC: places the tenant in
     * its cell, creates the venue, runs {@link SeatSale}, reads the map back (compact), draws it,
     * runs the invariant check on every shard of the topology (as the counted demo does) and checks
     * the buyers' answers ({@link SeatAudit}), printing each step on {@code out}. The caller prints
     * {@link SeatRun#endLines()} once it has stopped what it started. What it opens goes to {@code closer}.
     */
    static SeatRun seatDemo(LocalPlatform platform, Closer closer, SeatPlan plan, PrintWriter out) throws Exception {
        Venue venue = plan.venue();
        CuratorFramework zk = closer.add(Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15)));
        zk.start();
        TopologyStore store = new TopologyStore(zk, TopologyStore.ROOT_DEFAULT, InstantSource.system());
        int epoch = store.assignTenant(plan.tenant(), plan.cell(), -1);
        awaitRouterSees(platform, plan.tenant(), plan.cell());
        out.printf("tenant %s placed in cell %s (epoch %d)%n", plan.tenant(), plan.cell(), epoch);

        ManagedChannel channel = routerChannel(platform, closer);
        var blocking = InventoryServiceGrpc.newBlockingStub(channel);
        CreateItemRequest create = CreateItemRequest.newBuilder().setTenantId(plan.tenant()).setItemId(plan.itemId())
                .setHomeRegion(REGION).setKind(ItemKind.SEATED).setSeatMap(venue.seatMap())
                .setHoldTtlMs(SEAT_HOLD_TTL_MS).build();
        Stock created = retrying("CreateItem " + plan.tenant() + "/" + plan.itemId(),
                () -> blocking.withDeadlineAfter(30, TimeUnit.SECONDS).createItem(create)).getStock();
        String shard = platform.router().topology().current().shardFor(plan.tenant(), plan.itemId(), REGION)
                .map(ShardInfo::getShardId).orElse("?");
        out.printf("created %s/%s through the router: SEATED, %,d seats, on shard %s (holds live %d min)%n%n",
                plan.tenant(), plan.itemId(), created.getTotal(), shard, SEAT_HOLD_TTL_MS / 60_000);
        out.flush();

        SeatSale.Result sale = new SeatSale(channel, plan.tenant(), plan.itemId(), plan.buyers(), adjacentMax(venue),
                plan.concurrency(), plan.seed(), REGION, plan.runTag(), out, plan.liveProgress()).run();

        GetSeatMapRequest read = GetSeatMapRequest.newBuilder().setTenantId(plan.tenant()).setItemId(plan.itemId())
                .setRegion(REGION).setCompact(true).build();
        GetSeatMapResponse map = retrying("GetSeatMap " + plan.tenant() + "/" + plan.itemId(),
                () -> blocking.withDeadlineAfter(30, TimeUnit.SECONDS).getSeatMap(read));
        List<String> drawing = SeatMapDrawing.draw(map.getRowsList(), "  ");

        long c0 = System.nanoTime();
        InvariantSweep sweep;
        try (ShardProbe probe = new ShardProbe()) {
            sweep = InvariantSweep.run(probe, allShards(store), "", "", Duration.ofSeconds(60));
        }
        double checkSeconds = (System.nanoTime() - c0) / 1e9;
        SeatAudit.Report audit = SeatAudit.check(venue, sale, map);

        out.println();
        out.printf("seat sale: %,d buyers in %.2f s through the router%n", sale.buyers(), sale.seconds());
        out.printf("  asked         %,d seats (ADJACENT k in one row, k uniform in 1..%d)%n", sale.seatsAsked(),
                adjacentMax(venue));
        out.printf("  holds         %,d (%,d seats)%n", sale.holds().size(),
                sale.holds().stream().mapToLong(h -> h.seats().size()).sum());
        out.printf("  confirmed     %,d holds, %,d seats (%d%% of holders confirm)%n",
                sale.holdsWith(SeatSale.Fate.SOLD), sale.seatsWith(SeatSale.Fate.SOLD), SeatSale.CONFIRM_PERCENT);
        out.printf("  released      %,d holds, %,d seats at once (%d%%; back on sale, taken again)%n",
                released(sale, SeatSale.Plan.RELEASE, false), released(sale, SeatSale.Plan.RELEASE, true),
                SeatSale.RELEASE_PERCENT / 2);
        out.printf("  and at close  %,d holds, %,d seats after the last buyer asked (%d%%; free at the end)%n",
                released(sale, SeatSale.Plan.RELEASE_LATE, false), released(sale, SeatSale.Plan.RELEASE_LATE, true),
                SeatSale.RELEASE_PERCENT - SeatSale.RELEASE_PERCENT / 2);
        out.printf("  kept held     %,d holds, %,d seats (the other %d%% keep their hold)%n",
                sale.holdsWith(SeatSale.Fate.HELD), sale.seatsWith(SeatSale.Fate.HELD),
                100 - SeatSale.CONFIRM_PERCENT - SeatSale.RELEASE_PERCENT);
        out.printf("  sold out      %,d (no k adjacent free seats left in any row)%n", sale.soldOut());
        out.printf("  errors        %,d%n", sale.errors());
        out.printf("  retries       %,d (rate limited, busy or unavailable; same idempotency key)%n", sale.retries());
        out.printf("  buyers/s      %,.0f (each: Reserve, then Confirm, Release or nothing when held)%n",
                sale.buyers() / Math.max(1e-9, sale.seconds()));
        out.println("  (the demo is not the benchmark: it runs every service and the buyers in one JVM on "
                + (plan.embeddedDatabase() ? "an embedded PostgreSQL" : "one PostgreSQL")
                + ", to show correctness; bench/run measures throughput and latency, docs/performance.md)");
        for (String e : sale.errorSamples()) {
            out.println("  error: " + e);
        }
        out.println();
        out.printf("seat map of %s/%s, read through the router (GetSeatMap, compact):%n", plan.tenant(),
                plan.itemId());
        drawing.forEach(out::println);
        out.println();
        out.println("  " + SeatMapDrawing.legend());
        out.println();
        out.printf("invariant check on %d shards (%.2f s):%n", sweep.shards(), checkSeconds);
        sweep.print(out, "  ");
        out.println();
        out.printf("the buyers' answers (%,d holds), checked against the venue and the map:%n", audit.holds());
        if (audit.ok()) {
            out.println("  no seat in two holds at once; every hold is k adjacent seats of one row, never across the"
                    + " aisle; the map is what the buyers did (sold where confirmed, held where kept, free elsewhere)");
        } else {
            audit.problems().forEach(p -> out.println("  " + p));
        }
        out.flush();
        return new SeatRun(plan, sale, map, drawing, sweep, audit);
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
        if (buyers != null && buyers < 1) {
            problems.add("--buyers " + buyers + " must be at least 1");
        }
        if (seats) {
            var parsed = spec.commandLine().getParseResult();
            for (String o : List.of("--units", "--items", "--tenants")) {
                if (parsed != null && parsed.hasMatchedOption(o)) {
                    problems.add(o + " does not apply to --seats (one venue of tenant " + SEAT_TENANT
                            + "; size it with --sections, --rows and --seats-per-row)");
                }
            }
            if (sections < 1 || sections > Venue.SECTIONS_MAX) {
                problems.add("--sections " + sections + " is outside [1, " + Venue.SECTIONS_MAX + "]");
            }
            if (rows < 1 || rows > Venue.ROWS_MAX) {
                problems.add("--rows " + rows + " is outside [1, " + Venue.ROWS_MAX + "]");
            }
            if (seatsPerRow < 1 || seatsPerRow > Venue.SEATS_PER_ROW_MAX) {
                problems.add("--seats-per-row " + seatsPerRow + " is outside [1, " + Venue.SEATS_PER_ROW_MAX + "]");
            }
            if ((long) sections * rows * seatsPerRow > SeatRules.ITEM_SEATS_MAX) {
                problems.add("--sections " + sections + " x --rows " + rows + " x --seats-per-row " + seatsPerRow
                        + " is more than " + SeatRules.ITEM_SEATS_MAX + " seats (max_item_seats)");
            }
        } else {
            var parsed = spec.commandLine().getParseResult();
            for (String o : List.of("--sections", "--rows", "--seats-per-row")) {
                if (parsed != null && parsed.hasMatchedOption(o)) {
                    problems.add(o + " needs --seats");
                }
            }
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
