package io.lastunit.bench.load;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.cli.CliError;
import io.lastunit.admin.cli.Closer;
import io.lastunit.admin.cli.ExitCodes;
import io.lastunit.admin.cli.JdbcOptions;
import io.lastunit.admin.cli.PlatformDatabases;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.GetMoveRequest;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.topology.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./lastunit bench move}: moves a tenant of {@code --items} items and {@code --holds} live
 * holds (plus {@code --history} holds already sold or released) from cell {@code shared} into a
 * dedicated cell while a sale runs, and reports what the move cost: the pause the mover measured
 * (fence to the target's activation), the clients' blocked time (every Reserve of the moving
 * tenant in flight at some moment of the fence: its latency, retries included), the other
 * tenant's latency over the same window and its errors, the copy time and catch-up passes.
 *
 * <p>A local platform (ZooKeeper, cells {@code shared} and {@code dedicated} of {@code --shards}
 * shard nodes each, a router, the admin server) on an embedded PostgreSQL or {@code --jdbc-url}
 * (its own databases, dropped first).
 * The sale is open loop: {@code --rate} Reserves a second for each tenant, each a new buyer and
 * key on a random item; a Reserve refused with a retryable status is sent again with the same
 * key after its hint. Afterwards every live hold is read back through the router (it must be
 * HELD, on the target), and every shard's invariants are checked. The last lines, for scripts:
 * {@code pause_ms=<mover's>}, {@code blocked_p99_ms=<x>}, {@code other_errors=<n>},
 * {@code result=OK} (or what failed). Exit 0 only when the move finished and everything checked.
 */
@Command(name = "move", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Moves a tenant into a dedicated cell while a sale runs, and reports the pause.",
                "The last lines are 'pause_ms=<n>', 'blocked_p99_ms=<x>', 'other_errors=<n>' and 'result=OK'."})
public final class MoveCommand implements Callable<Integer> {
    static final String MOVER = "moving-co";
    static final String OTHER = "other-co";
    static final String REGION = "local";
    static final String TARGET_CELL = "dedicated";
    static final String DB_PREFIX = "lastunit_move_";
    static final int ITEMS_MAX = 20_000;
    static final int HOLDS_MAX = 500_000;
    static final int IN_FLIGHT_MAX = 256;
    /** Units of each item beyond its holds: what the sale takes during the move never sells it out. */
    static final long SALE_UNITS_PER_ITEM = 1_000;
    static final long HOLD_TTL_MS = 3_600_000;
    /** Longest a call keeps being sent again after retryable refusals. */
    static final long CALL_GIVE_UP_MS = 60_000;
    static final long MOVE_WAIT_MAX_MS = 1_800_000;

    @Spec
    CommandSpec spec;

    @Option(names = "--items", paramLabel = "N", description = "Items of the moving tenant (default ${DEFAULT-VALUE}).")
    int items = 100;

    @Option(names = "--holds", paramLabel = "H", description = "Live (HELD) holds of the moving tenant when the move starts (default ${DEFAULT-VALUE}).")
    int holds = 1_000;

    @Option(names = "--history", paramLabel = "K", description = "Holds of the moving tenant already ended before the move, half sold, half released (default ${DEFAULT-VALUE}).")
    int history = 0;

    @Option(names = "--rate", paramLabel = "R", description = "Reserves per second of each tenant during the move, open loop (default ${DEFAULT-VALUE}).")
    int rate = 200;

    @Option(names = "--max-pause-ms", paramLabel = "MS", description = "The move's pause budget (default ${DEFAULT-VALUE}).")
    long maxPauseMs = 2_000;

    @Option(names = "--shards", paramLabel = "N", description = "Shards of each cell (default ${DEFAULT-VALUE}).")
    int shards = 2;

    @Mixin
    JdbcOptions jdbc = new JdbcOptions();

    @Option(names = "--out", paramLabel = "DIR", description = "Where the JSON report goes (default ${DEFAULT-VALUE}).")
    Path out = Path.of("bench/results/raw");

    /** One Reserve of the sale: when it was first sent, when its last answer came, what it came to. */
    record Call(String tenant, long sentMs, long endMs, boolean ok, String outcome, int sends) {
    }

    @Override
    public Integer call() throws Exception {
        validate();
        jdbc.validate(spec.commandLine());
        PrintWriter stdout = spec.commandLine().getOut();
        try (Closer closer = new Closer()) {
            if (!jdbc.embedded()) {
                dropOwnDatabases(jdbc.url(), jdbc.user(), jdbc.password());
            }
            PlatformDatabases dbs = closer.add(jdbc.open(DB_PREFIX, stdout));
            stdout.printf("starting a platform: cells %s and %s, %d shard nodes each ...%n", Topology.SHARED_CELL,
                    TARGET_CELL, shards);
            stdout.flush();
            LocalPlatform platform = closer.add(LocalPlatform.builder(dbs.forShards())
                    .cell(Topology.SHARED_CELL, List.of(REGION), shards).cell(TARGET_CELL, List.of(REGION), shards)
                    .balancers(0).start());
            ManagedChannel router = channel("127.0.0.1:" + platform.routerPort());
            closer.add(router::shutdownNow);
            ManagedChannel adminChannel = channel("127.0.0.1:" + platform.adminPort());
            closer.add(adminChannel::shutdownNow);
            ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
            closer.add(scheduler::shutdownNow);
            return run(stdout, platform, InventoryServiceGrpc.newFutureStub(router),
                    AdminServiceGrpc.newBlockingStub(adminChannel), scheduler);
        }
    }

    private int run(PrintWriter stdout, LocalPlatform platform, InventoryServiceGrpc.InventoryServiceFutureStub api,
                    AdminServiceGrpc.AdminServiceBlockingStub admin, ScheduledExecutorService scheduler)
            throws Exception {
        int otherItems = Math.max(10, items / 10);
        long perItem = (holds + history + items - 1L) / items + SALE_UNITS_PER_ITEM;
        createItems(api, MOVER, items, perItem);
        createItems(api, OTHER, otherItems, SALE_UNITS_PER_ITEM * 10);
        long t0 = System.nanoTime();
        List<ReserveRequest> ended = requests(MOVER, items, history, "history");
        List<String> endedIds = reserveAll(api, ended);
        endAll(api, endedIds);
        List<ReserveRequest> live = requests(MOVER, items, holds, "live");
        List<String> liveIds = reserveAll(api, live);
        stdout.printf(Locale.ROOT, "tenant %s: %,d items, %,d live holds, %,d ended holds (%.1f s); tenant %s: %,d"
                + " items%n", MOVER, items, holds, history, (System.nanoTime() - t0) / 1e9, OTHER, otherItems);
        stdout.flush();

        Sale sale = new Sale(api, scheduler, rate, items, otherItems);
        sale.start();
        Thread.sleep(2_000); // the sale in its steady state before the move starts
        Move started = admin.withDeadlineAfter(30, TimeUnit.SECONDS).startMove(StartMoveRequest.newBuilder()
                .setTenantId(MOVER).setToCell(TARGET_CELL).setMaxPauseMs(maxPauseMs).build());
        Map<MoveStep, Long> seen = new EnumMap<>(MoveStep.class);
        Move done = awaitFinished(admin, started.getMoveId(), seen, stdout);
        Thread.sleep(1_000);
        List<Call> calls = sale.stop();

        long fenceStart = done.getFencedAtMs();
        long fenceEnd = fenceStart + done.getPauseMs();
        List<Call> blocked = calls.stream().filter(c -> c.tenant.equals(MOVER) && overlaps(c, fenceStart, fenceEnd))
                .toList();
        List<Call> others = calls.stream().filter(c -> c.tenant.equals(OTHER)).toList();
        List<Call> othersInFence = others.stream().filter(c -> overlaps(c, fenceStart, fenceEnd)).toList();
        long otherErrors = others.stream().filter(c -> !c.ok || c.sends > 1).count();
        long moverErrors = calls.stream().filter(c -> c.tenant.equals(MOVER) && !c.ok).count();
        long held = countHeld(api, liveIds);
        List<String> drift = checkInvariants(platform);

        Map<String, Object> report = new LinkedHashMap<>();
        report.put("items", items);
        report.put("live_holds", holds);
        report.put("history_holds", history);
        report.put("rate_per_tenant", rate);
        report.put("move_id", done.getMoveId());
        report.put("step", done.getStep().name());
        report.put("reason", done.getReason());
        report.put("max_pause_ms", done.getMaxPauseMs());
        report.put("pause_ms", done.getPauseMs());
        report.put("copy_ms", fenceStart == 0 ? 0 : fenceStart - done.getCreatedAtMs());
        report.put("move_ms", done.getFinishedAtMs() - done.getCreatedAtMs());
        report.put("catch_up_rounds", done.getCatchUpRounds());
        report.put("last_delta_rows", done.getLastDeltaRows());
        report.put("copied_holds", done.getCopied().getHolds());
        report.put("copied_rows", done.getCopied().getItems() + done.getCopied().getBuckets() + done.getCopied().getHolds()
                + done.getCopied().getUsage() + done.getCopied().getTransfers() + done.getCopied().getRestocks());
        report.put("blocked_calls", blocked.size());
        report.put("blocked_p50_ms", percentile(latencies(blocked), 50));
        report.put("blocked_p99_ms", percentile(latencies(blocked), 99));
        report.put("blocked_max_ms", percentile(latencies(blocked), 100));
        report.put("blocked_resent", blocked.stream().filter(c -> c.sends > 1).count());
        report.put("other_calls_in_fence", othersInFence.size());
        report.put("other_p99_in_fence_ms", percentile(latencies(othersInFence), 99));
        report.put("other_p99_ms", percentile(latencies(others), 99));
        report.put("other_errors", otherErrors);
        report.put("mover_failed_calls", moverErrors);
        report.put("live_holds_held_after", held);
        report.put("drift", drift);
        report.put("steps_seen_ms", seenRelative(seen, done.getCreatedAtMs()));
        boolean ok = done.getStep() == MoveStep.CLEANED && held == holds && drift.isEmpty() && otherErrors == 0
                && moverErrors == 0;
        report.put("result", ok ? "OK" : "FAILED");
        write(report);

        stdout.printf(Locale.ROOT, "%nmove %s: %s in %.1f s (copy %.1f s, %d catch-up passes, last delta %,d rows,"
                        + " %,d rows copied)%n", done.getMoveId(), done.getStep(), (Long) report.get("move_ms") / 1e3,
                (Long) report.get("copy_ms") / 1e3, done.getCatchUpRounds(), done.getLastDeltaRows(),
                (Long) report.get("copied_rows"));
        stdout.printf(Locale.ROOT, "pause (mover): %d ms of a %d ms budget%n", done.getPauseMs(), done.getMaxPauseMs());
        stdout.printf(Locale.ROOT, "clients of %s blocked by the fence: %,d calls, p50 %.1f ms, p99 %.1f ms, max %.1f"
                        + " ms, %,d sent again%n", MOVER, blocked.size(), report.get("blocked_p50_ms"),
                report.get("blocked_p99_ms"), report.get("blocked_max_ms"), report.get("blocked_resent"));
        stdout.printf(Locale.ROOT, "%s meanwhile: %,d calls in the fence, p99 %.1f ms (whole sale p99 %.1f ms), %d"
                + " errors or resends%n", OTHER, othersInFence.size(), report.get("other_p99_in_fence_ms"),
                report.get("other_p99_ms"), otherErrors);
        stdout.printf(Locale.ROOT, "live holds HELD after the move: %,d of %,d; invariants: %s%n", held, holds,
                drift.isEmpty() ? "OK" : String.join("; ", drift));
        stdout.printf("pause_ms=%d%n", done.getPauseMs());
        stdout.printf(Locale.ROOT, "blocked_p99_ms=%.1f%n", report.get("blocked_p99_ms"));
        stdout.printf("other_errors=%d%n", otherErrors);
        stdout.printf("result=%s%n", ok ? "OK" : "FAILED (" + (done.getStep() != MoveStep.CLEANED ? done.getStep()
                + ": " + done.getReason() : held != holds ? "live holds lost" : !drift.isEmpty() ? "drift"
                : "failed calls") + ")");
        stdout.flush();
        return ok ? ExitCodes.OK : ExitCodes.FAILED;
    }

    private void validate() {
        List<String> problems = new ArrayList<>();
        if (items < 1 || items > ITEMS_MAX) {
            problems.add("--items " + items + " is outside [1, " + ITEMS_MAX + "]");
        }
        if (holds < 0 || holds > HOLDS_MAX || history < 0 || history > HOLDS_MAX) {
            problems.add("--holds and --history must be within [0, " + HOLDS_MAX + "]");
        }
        if (rate < 1 || rate > 20_000) {
            problems.add("--rate " + rate + " is outside [1, 20000]");
        }
        if (maxPauseMs < 100 || maxPauseMs > 60_000) {
            problems.add("--max-pause-ms " + maxPauseMs + " is outside [100, 60000]");
        }
        if (shards < 1 || shards > 8) {
            problems.add("--shards " + shards + " is outside [1, 8]");
        }
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", problems));
        }
    }

    /**
     * Drops this command's own shard databases ({@value #DB_PREFIX}&lt;shard&gt;) left by an earlier
     * run on the server, so that every run moves a tenant into an empty cell.
     */
    private void dropOwnDatabases(String url, String user, String password) throws java.sql.SQLException {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, user, password);
             java.sql.Statement st = c.createStatement()) {
            for (String cell : List.of(Topology.SHARED_CELL, TARGET_CELL)) {
                for (int i = 1; i <= shards; i++) {
                    String name = io.lastunit.admin.cli.JdbcUrls.databaseFor(DB_PREFIX, cell + "-" + REGION + "-" + i);
                    st.execute("DROP DATABASE IF EXISTS \"" + name.replace("\"", "\"\"") + "\" WITH (FORCE)");
                }
            }
        }
    }

    private static ManagedChannel channel(String target) {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        return NettyChannelBuilder.forTarget(target).usePlaintext().disableRetry()
                .intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
    }

    private static void createItems(InventoryServiceGrpc.InventoryServiceFutureStub api, String tenant, int n,
                                    long total) throws Exception {
        List<ListenableFuture<?>> window = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            window.add(api.withDeadlineAfter(60, TimeUnit.SECONDS).createItem(CreateItemRequest.newBuilder()
                    .setTenantId(tenant).setItemId("item-" + i).setTotal(total).setHomeRegion(REGION).build()));
            if (window.size() == 64 || i == n - 1) {
                for (ListenableFuture<?> f : window) {
                    f.get(60, TimeUnit.SECONDS);
                }
                window.clear();
            }
        }
    }

    private static List<ReserveRequest> requests(String tenant, int itemCount, int n, String tag) {
        List<ReserveRequest> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-" + (i % itemCount)).setQuantity(1)
                    .setIdempotencyKey(tag + "-" + i).setBuyerId(tag + "-buyer-" + i).setRegion(REGION)
                    .setHoldTtlMs(HOLD_TTL_MS).build());
        }
        return out;
    }

    /** Reserves every request (at most {@link #IN_FLIGHT_MAX} in flight); the hold ids, in order. */
    private static List<String> reserveAll(InventoryServiceGrpc.InventoryServiceFutureStub api,
                                           List<ReserveRequest> requests) throws Exception {
        String[] ids = new String[requests.size()];
        Semaphore window = new Semaphore(IN_FLIGHT_MAX);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < requests.size(); i++) {
            window.acquire();
            int slot = i;
            Futures.addCallback(api.withDeadlineAfter(60, TimeUnit.SECONDS).reserve(requests.get(i)),
                    new FutureCallback<>() {
                        @Override
                        public void onSuccess(ReserveResponse r) {
                            if (r.getOutcome() == ReserveOutcome.RESERVED) {
                                ids[slot] = r.getHold().getHoldId();
                            } else {
                                failures.add(new IllegalStateException("set-up Reserve answered " + r.getOutcome()));
                            }
                            window.release();
                        }

                        @Override
                        public void onFailure(Throwable t) {
                            failures.add(t);
                            window.release();
                        }
                    }, MoreExecutors.directExecutor());
        }
        window.acquire(IN_FLIGHT_MAX);
        window.release(IN_FLIGHT_MAX);
        if (!failures.isEmpty()) {
            throw CliError.failed("setting up holds failed: " + failures.peek());
        }
        return Arrays.asList(ids);
    }

    /** Ends the holds: even ones sold (Confirm), odd ones released. */
    private static void endAll(InventoryServiceGrpc.InventoryServiceFutureStub api, List<String> ids) throws Exception {
        Semaphore window = new Semaphore(IN_FLIGHT_MAX);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        for (int i = 0; i < ids.size(); i++) {
            window.acquire();
            ListenableFuture<?> f = i % 2 == 0
                    ? api.withDeadlineAfter(60, TimeUnit.SECONDS).confirm(ConfirmRequest.newBuilder()
                            .setHoldId(ids.get(i)).setOrderRef("order-" + i).build())
                    : api.withDeadlineAfter(60, TimeUnit.SECONDS).release(ReleaseRequest.newBuilder()
                            .setHoldId(ids.get(i)).build());
            f.addListener(window::release, MoreExecutors.directExecutor());
            Futures.addCallback(f, new FutureCallback<Object>() {
                @Override
                public void onSuccess(Object r) {
                }

                @Override
                public void onFailure(Throwable t) {
                    failures.add(t);
                }
            }, MoreExecutors.directExecutor());
        }
        window.acquire(IN_FLIGHT_MAX);
        if (!failures.isEmpty()) {
            throw CliError.failed("ending holds failed: " + failures.peek());
        }
    }

    /** How many of the holds read back HELD through the router. */
    private static long countHeld(InventoryServiceGrpc.InventoryServiceFutureStub api, List<String> ids)
            throws Exception {
        AtomicLong heldCount = new AtomicLong();
        Semaphore window = new Semaphore(IN_FLIGHT_MAX);
        for (String id : ids) {
            window.acquire();
            Futures.addCallback(api.withDeadlineAfter(60, TimeUnit.SECONDS).getHold(GetHoldRequest.newBuilder()
                    .setHoldId(id).build()), new FutureCallback<>() {
                        @Override
                        public void onSuccess(io.lastunit.api.inventory.v1.GetHoldResponse r) {
                            if (r.getHold().getState() == HoldState.HELD) {
                                heldCount.incrementAndGet();
                            }
                            window.release();
                        }

                        @Override
                        public void onFailure(Throwable t) {
                            window.release();
                        }
                    }, MoreExecutors.directExecutor());
        }
        window.acquire(IN_FLIGHT_MAX);
        return heldCount.get();
    }

    private static Move awaitFinished(AdminServiceGrpc.AdminServiceBlockingStub admin, String moveId,
                                      Map<MoveStep, Long> seen, PrintWriter stdout) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MOVE_WAIT_MAX_MS);
        MoveStep last = MoveStep.MOVE_STEP_UNSPECIFIED;
        while (System.nanoTime() < deadline) {
            Move m = admin.withDeadlineAfter(10, TimeUnit.SECONDS).getMove(GetMoveRequest.newBuilder()
                    .setMoveId(moveId).build());
            seen.putIfAbsent(m.getStep(), System.currentTimeMillis());
            if (m.getStep() != last) {
                stdout.printf("  %s%n", m.getStep());
                stdout.flush();
                last = m.getStep();
            }
            if ((m.getStep() == MoveStep.CLEANED || m.getStep() == MoveStep.ABORTED) && m.getFinishedAtMs() > 0) {
                return m;
            }
            Thread.sleep(5);
        }
        throw CliError.failed("move " + moveId + " did not finish in " + MOVE_WAIT_MAX_MS / 1000 + " s");
    }

    private static Map<String, Long> seenRelative(Map<MoveStep, Long> seen, long createdAtMs) {
        Map<String, Long> out = new LinkedHashMap<>();
        seen.forEach((step, at) -> out.put(step.name(), at - createdAtMs));
        return out;
    }

    private static boolean overlaps(Call c, long fromMs, long toMs) {
        return fromMs > 0 && c.sentMs <= toMs && c.endMs >= fromMs;
    }

    private static long[] latencies(List<Call> calls) {
        return calls.stream().mapToLong(c -> c.endMs - c.sentMs).sorted().toArray();
    }

    static double percentile(long[] sorted, int p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    private static List<String> checkInvariants(LocalPlatform platform) {
        List<String> drift = new ArrayList<>();
        for (ShardInfo s : platform.shards().values()) {
            ManagedChannel ch = NettyChannelBuilder.forTarget(s.getAddress()).usePlaintext().build();
            try {
                InvariantReport r = ShardServiceGrpc.newBlockingStub(ch).withDeadlineAfter(120, TimeUnit.SECONDS)
                        .checkInvariants(CheckInvariantsRequest.getDefaultInstance());
                if (!r.getOk()) {
                    drift.add(s.getShardId() + ": " + r.getDriftsCount() + " drift(s), first " + r.getDrifts(0)
                            .getDetail());
                }
            } catch (RuntimeException e) {
                drift.add(s.getShardId() + ": check failed: " + e.getMessage());
            } finally {
                ch.shutdownNow();
            }
        }
        return drift;
    }

    private void write(Map<String, Object> report) throws IOException {
        Files.createDirectories(out);
        String name = String.format(Locale.ROOT, "%s-move-%d-%d-%d.json",
                FlashSaleCommand.FILE_STAMP.format(Instant.now()), items, holds, history);
        Files.writeString(out.resolve(name), Json.write(report) + "\n", StandardCharsets.UTF_8);
    }

    /**
     * The sale during the move: {@code rate} Reserves a second of each tenant, open loop, each a new
     * buyer and key on a random item, at most {@link #IN_FLIGHT_MAX} of each tenant in flight (a
     * send past it waits: counted from its intended time). A retryable refusal is sent again with
     * the same key after its hint (at least 20 ms), for at most {@link #CALL_GIVE_UP_MS}.
     */
    private static final class Sale {
        private final InventoryServiceGrpc.InventoryServiceFutureStub api;
        private final ScheduledExecutorService scheduler;
        private final int rate;
        private final int moverItems;
        private final int otherItems;
        private final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
        private final Semaphore inFlight = new Semaphore(2 * IN_FLIGHT_MAX);
        private final AtomicLong seq = new AtomicLong();
        private volatile boolean running = true;
        private Thread sender;

        Sale(InventoryServiceGrpc.InventoryServiceFutureStub api, ScheduledExecutorService scheduler, int rate,
             int moverItems, int otherItems) {
            this.api = api;
            this.scheduler = scheduler;
            this.rate = rate;
            this.moverItems = moverItems;
            this.otherItems = otherItems;
        }

        void start() {
            sender = new Thread(this::send, "move-bench-sale");
            sender.setDaemon(true);
            sender.start();
        }

        private void send() {
            long intervalNanos = 1_000_000_000L / (2L * rate);
            long next = System.nanoTime();
            while (running) {
                long now = System.nanoTime();
                if (now < next) {
                    java.util.concurrent.locks.LockSupport.parkNanos(next - now);
                    continue;
                }
                next += intervalNanos;
                long n = seq.getAndIncrement();
                boolean mover = n % 2 == 0;
                String tenant = mover ? MOVER : OTHER;
                int item = ThreadLocalRandom.current().nextInt(mover ? moverItems : otherItems);
                ReserveRequest r = ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-" + item)
                        .setQuantity(1).setIdempotencyKey("sale-" + n).setBuyerId("sale-buyer-" + n)
                        .setRegion(REGION).setHoldTtlMs(HOLD_TTL_MS).build();
                try {
                    if (!inFlight.tryAcquire(10, TimeUnit.SECONDS)) {
                        calls.add(new Call(tenant, System.currentTimeMillis(), System.currentTimeMillis(), false,
                                "NOT_SENT", 0));
                        continue;
                    }
                } catch (InterruptedException e) {
                    return;
                }
                attempt(r, System.currentTimeMillis(), 1);
            }
        }

        private void attempt(ReserveRequest r, long sentMs, int sends) {
            Futures.addCallback(api.withDeadlineAfter(30, TimeUnit.SECONDS).reserve(r), new FutureCallback<>() {
                @Override
                public void onSuccess(ReserveResponse resp) {
                    end(r, sentMs, resp.getOutcome() == ReserveOutcome.RESERVED, resp.getOutcome().name(), sends);
                }

                @Override
                public void onFailure(Throwable t) {
                    Status.Code code = Status.fromThrowable(t).getCode();
                    String reason = GrpcErrors.errorInfo(t).map(i -> i.getReason()).orElse(code.name());
                    boolean retryable = code == Status.Code.UNAVAILABLE || code == Status.Code.ABORTED
                            || code == Status.Code.RESOURCE_EXHAUSTED;
                    if (retryable && System.currentTimeMillis() - sentMs < CALL_GIVE_UP_MS) {
                        long hintMs = Math.max(20, GrpcErrors.retryAfterMs(t));
                        scheduler.schedule(() -> attempt(r, sentMs, sends + 1), hintMs, TimeUnit.MILLISECONDS);
                        return;
                    }
                    end(r, sentMs, false, reason, sends);
                }
            }, MoreExecutors.directExecutor());
        }

        private void end(ReserveRequest r, long sentMs, boolean ok, String outcome, int sends) {
            calls.add(new Call(r.getTenantId(), sentMs, System.currentTimeMillis(), ok, outcome, sends));
            inFlight.release();
        }

        /** Stops sending, waits (bounded) for the calls in flight, and returns every call. */
        List<Call> stop() throws InterruptedException {
            running = false;
            sender.join(TimeUnit.SECONDS.toMillis(15));
            if (!inFlight.tryAcquire(2 * IN_FLIGHT_MAX, CALL_GIVE_UP_MS + 30_000, TimeUnit.MILLISECONDS)) {
                throw CliError.failed("the sale's calls did not all end");
            }
            return new ArrayList<>(calls);
        }
    }
}
