package io.lastunit.bench.jmh;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.SeatMap;
import io.lastunit.api.inventory.v1.SeatMode;
import io.lastunit.api.inventory.v1.SeatRow;
import io.lastunit.api.inventory.v1.SeatSection;
import io.lastunit.api.inventory.v1.SeatSelection;
import io.lastunit.common.Failure;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.common.SeatRules;
import io.lastunit.shard.ShardNode;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.wiring.ShardProperties;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * Seat holds per second on one hot event (issue 26), lastunit's lane engine in process: no gRPC,
 * no router, no network besides PostgreSQL. Built exactly as {@link LaneEngineBench}: a fresh
 * database per trial ({@link BenchDatabase}, on the server of {@code LASTUNIT_BENCH_JDBC_URL}), a
 * standalone {@link ShardNode} on it with the shard defaults (4 lanes, batch-max 512; the
 * scheduled invariant check off, metrics on), the JMH threads as callers, each blocked on its call
 * ({@code -t 64}, {@code -t 256}; or, in {@link #reservePipelined}, keeping 64 calls in flight each:
 * {@code -t 4 -p pipeline=64} is 256 in flight), with a key and buyer never used before ({@link Caller}).
 * Measured side by side with {@link SkipLockedBaseline}, the same calls as plain JDBC
 * transactions on the same server.
 *
 * <p><b>The event.</b> A SEATED item of {@link #SEATS} = 100,000 seats ({@link SeatRules#ITEM_SEATS_MAX},
 * the most one item may have): one section of {@link #ROWS} numbered rows of {@link #ROW_SEATS}
 * seats (row {@code r} is "R<r>", its seats "R<r>-1" … "R<r>-50", no aisles), rank {@code r / 10}
 * (ten rows per price zone, the front ones best). {@link SkipLockedBaseline} builds the same venue.
 *
 * <p><b>{@code mode}</b>, what each call asks for and the answer it must get (any other answer
 * fails the run):
 * <ul>
 *   <li>{@code any1}: ANY 1 seat, RESERVED with 1 seat;</li>
 *   <li>{@code adjacent4}: ADJACENT 4 in one row, RESERVED with 4 seats;</li>
 *   <li>{@code best2}: BEST 2 (adjacent, lowest rank sum), RESERVED with 2 seats;</li>
 *   <li>{@code soldout}: ANY 1 of an event whose 100,000 seats are all held (filled in the trial's
 *       setup by 25,000 holds of ANY 4, so the lane carries 25,000 live holds): SOLD_OUT, decided
 *       in memory by the event's lane;</li>
 *   <li>{@code soldout-counted}: the counted item's sold-out path for comparison: a one-unit Reserve
 *       of a COUNTED item of 1 unit, reserved once in setup: SOLD_OUT from the lane's cached
 *       bucket.</li>
 * </ul>
 *
 * <p><b>The supply.</b> Holds are never released (the TTL is the default 10 minutes), so a
 * measurement sells events out: at 20,000 seats a second an event lasts five seconds. The
 * benchmark sells one hot event at a time and moves on to the next when the current one answers
 * SOLD_OUT (for {@code adjacent4}: when no row has 4 free seats together any more, i.e. after
 * 24,000 holds = 96,000 seats; {@code best2}: 50,000 holds; {@code any1}: 100,000). The caller that
 * got the SOLD_OUT switches every caller to the next event ({@link Supply}) and asks again with a
 * new key; that answer must then be RESERVED. The events are created ahead, never during a measured
 * call: in the trial's setup, enough for {@code rateGuess} seats/s (default: the mode's, a little
 * above what it reached here) over every warm-up and measurement iteration × 1.5, plus one; each
 * through the engine (CreateItem, 100,000 seat rows), then the tables analyzed, then each event
 * loaded into its lane's memory (a Release of an unknown hold of the item: the lane loads the item
 * to answer HOLD_NOT_FOUND), so the first Reserve of an event finds it decided in memory as every
 * later one does. Before each iteration the supply is topped up if the fastest rate seen says it
 * could run short (slow: see {@link Supply} on why not every iteration). Should it still run out,
 * the caller that finds no event left creates one itself while the others wait, and the
 * iteration's {@code [seats]} line counts a stall ({@code supply_stalls}); bench/run fails a
 * measurement with a stall. Consumed events stay in the lanes' memory (some 50 MB each) and their
 * rows in the database until the trial ends.
 *
 * <p><b>What a Reserve writes</b> (the engine's own seat batch, one transaction per lane batch):
 * the hold row (with its seat numbers) and its HELD outbox row, each claimed seat's row
 * ({@code hold_id}), and bucket 0's counters once per batch. The answer comes after the commit.
 *
 * <p>After each iteration it prints a {@code [seats]} line: the calls and seats of the iteration,
 * the lane batches and the calls per batch, the JVM's CPU per call, the busiest lane thread's CPU
 * share ({@code hot_lane_cpu}: low means the hot lane waits for PostgreSQL, high that its decisions
 * bound the rate), the events sold out and waiting, supply stalls. At the end of a trial the ledger
 * ({@link PlainJdbc#ledger}; {@code bucketsHeld} counts seats, {@code holds} holds) and the seats
 * naming a hold against the seats the live holds list, which must be equal.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'SeatBench' -p mode=any1 -wi 1 -w 3s -i 1 -r 5s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SeatBench {
    /** Rows of the hot event. */
    static final int ROWS = 2_000;
    /** Seats per row. */
    static final int ROW_SEATS = 50;
    /** Seats of the hot event: the most one item may have. */
    static final int SEATS = ROWS * ROW_SEATS;
    /** Rows that share a rank (a price zone). */
    static final int ROWS_PER_RANK = 10;
    /** Times one call may find its event sold out and move on before it fails the run. */
    static final int HOPS_MAX = 3;
    /** How long a call, an event's creation or the setup's fill may take before it fails the run. */
    static final long WAIT_SECONDS = 120;

    static {
        if (SEATS != SeatRules.ITEM_SEATS_MAX) {
            throw new AssertionError("the hot event must have max_item_seats seats");
        }
    }

    /** What each call asks for: any1, adjacent4, best2, soldout (seated), soldout-counted. */
    @Param({"any1", "adjacent4", "best2", "soldout", "soldout-counted"})
    public String mode;

    /**
     * Seats per second the trial's supply is sized for (0: the mode's default, a little above what
     * this benchmark reached on a 2-core host). More only costs setup time and memory (an event
     * loaded in its lane is some 50 MB of heap); fewer makes the iterations top up (slowly).
     */
    @Param({"0"})
    public int rateGuess;

    /** The calls of one mode: what they ask for and how many seats one event sells to them. */
    enum Ask {
        ANY1(SeatMode.ANY, 1, SEATS, 25_000, 6_000),
        ADJACENT4(SeatMode.ADJACENT, 4, ROWS * (ROW_SEATS / 4) * 4, 45_000, 3_000),
        BEST2(SeatMode.BEST, 2, SEATS, 30_000, 3_000),
        SOLDOUT(SeatMode.ANY, 1, 0, 0, 0),
        SOLDOUT_COUNTED(SeatMode.SEAT_MODE_UNSPECIFIED, 1, 0, 0, 0);

        final SeatMode seatMode;
        final int seats;
        /** Seats one event sells to these calls before it answers SOLD_OUT. */
        final int perEvent;
        /** Seats per second the supply is sized for by default: lastunit's, the baseline's. */
        final int lastunitGuess;
        final int baselineGuess;

        Ask(SeatMode seatMode, int seats, int perEvent, int lastunitGuess, int baselineGuess) {
            this.seatMode = seatMode;
            this.seats = seats;
            this.perEvent = perEvent;
            this.lastunitGuess = lastunitGuess;
            this.baselineGuess = baselineGuess;
        }

        boolean soldOut() {
            return this == SOLDOUT || this == SOLDOUT_COUNTED;
        }

        static Ask of(String mode) {
            return switch (mode) {
                case "any1" -> ANY1;
                case "adjacent4" -> ADJACENT4;
                case "best2" -> BEST2;
                case "soldout" -> SOLDOUT;
                case "soldout-counted" -> SOLDOUT_COUNTED;
                default -> throw new IllegalArgumentException("mode=" + mode
                        + " must be any1, adjacent4, best2, soldout or soldout-counted");
            };
        }
    }

    /** The hot event's seat map: {@link #ROWS} rows "R<r>" of seats "R<r>-1" … "R<r>-50", rank r / 10. */
    static SeatMap venue() {
        SeatSection.Builder section = SeatSection.newBuilder().setSectionId("S");
        for (int r = 0; r < ROWS; r++) {
            section.addRows(SeatRow.newBuilder().setRowId("R" + r).setCount(ROW_SEATS).setFirstNumber(1)
                    .setSeatPrefix("R" + r + "-").setRank(r / ROWS_PER_RANK));
        }
        return SeatMap.newBuilder().addSections(section).build();
    }

    static String eventId(int event) {
        return "event-" + event;
    }

    private static final String COUNTED_ITEM = "counted-soldout";
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private Ask ask;
    private BenchServer server;
    private BenchDatabase db;
    private ShardNode node;
    private LaneEngine engine;
    private Supply supply;
    private SeatMap venue;
    /** The event or item every soldout call asks (the supply is not used then). */
    private String soldOutItem;
    private final LongAdder calls = new LongAdder();
    private final LaneCpu laneCpu = new LaneCpu();
    private long iterationBatches;
    private long iterationCpuNanos;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams trial) throws Exception {
        ask = Ask.of(mode);
        try {
            server = BenchServer.start(BenchServer.SERVER);
            db = server.create("seats_" + mode);
            ShardProperties p = new ShardProperties();
            p.setId("bench-shard");
            p.setPort(0);
            p.setRegions(List.of(BenchItems.REGION));
            p.setJdbcUrl(db.url());
            p.setJdbcUser(db.user());
            p.setJdbcPassword(db.password());
            p.setInvariantCheckIntervalMs(0);
            node = new ShardNode(p.toConfig(), InstantSource.system(), null).start();
            engine = node.engine();
            venue = venue();
            switch (ask) {
                case SOLDOUT -> soldOutItem = fillSoldOutEvent();
                case SOLDOUT_COUNTED -> soldOutItem = soldOutCountedItem();
                default -> {
                    supply = new Supply("SeatBench " + mode, ask.perEvent, this::createEvents);
                    supply.prepareTrial(trial, rateGuess > 0 ? rateGuess : ask.lastunitGuess);
                }
            }
        } catch (Exception | Error e) {
            tearDown();
            throw e;
        }
    }

    /** Creates several events at once (they land on several lanes); answers when all are ready. */
    private void createEvents(int[] numbers) throws Exception {
        List<CompletableFuture<?>> created = new ArrayList<>();
        for (int n : numbers) {
            created.add(engine.createItem(CreateItemRequest.newBuilder().setTenantId(BenchItems.TENANT)
                    .setItemId(eventId(n)).setHomeRegion(BenchItems.REGION).setKind(ItemKind.SEATED).setSeatMap(venue)
                    .build(), BenchItems.REGION));
        }
        await(CompletableFuture.allOf(created.toArray(CompletableFuture[]::new)));
        analyze();
        for (int n : numbers) {
            preload(eventId(n));
        }
    }

    /**
     * ANALYZE of the seat and hold tables after events were created, as {@link SkipLockedBaseline}
     * analyzes its own: the measurement is of the steady state, with statistics. (Without them —
     * the first minute of a new event, until autovacuum's analyze — the engine's seat claim
     * {@code UPDATE seats … FROM unnest(…)} is planned as a hash join over all 100,000 seats of the
     * item, or generically as a nested loop over them, 30 ms to 2 s a batch instead of 2 ms.)
     */
    private void analyze() throws SQLException {
        try (Connection c = java.sql.DriverManager.getConnection(db.url(), db.user(), db.password());
             java.sql.Statement st = c.createStatement()) {
            st.execute("ANALYZE seats, holds, buckets, items");
        }
    }

    /**
     * The lane loads a seated item on its first operation: a Release of a hold the item does not
     * have (HOLD_NOT_FOUND) makes it do so now, outside any measured call, and takes no seat.
     */
    private void preload(String item) throws Exception {
        try {
            engine.release(HoldId.create(BenchItems.TENANT, item, BenchItems.REGION, 0, System.currentTimeMillis()))
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            throw new IllegalStateException("a Release of an unknown hold of " + item + " succeeded");
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof Failure f && f.reason() == Reason.HOLD_NOT_FOUND)) {
                throw new IllegalStateException("could not load " + item + " into its lane: " + e.getCause(), e.getCause());
            }
        }
    }

    /** The soldout event: created, then every seat held by ANY 4 Reserves (256 in flight). */
    private String fillSoldOutEvent() throws Exception {
        createEvents(new int[] {0});
        String item = eventId(0);
        int holds = SEATS / 4;
        List<CompletableFuture<ReserveResponse>> window = new ArrayList<>();
        for (int i = 0; i < holds; i++) {
            window.add(engine.reserve(request(item, SeatMode.ANY, 4, "fill-" + i, "fill-buyer-" + i)));
            if (window.size() == 256 || i == holds - 1) {
                for (CompletableFuture<ReserveResponse> f : window) {
                    ReserveResponse r = await(f);
                    if (r.getOutcome() != ReserveOutcome.RESERVED || r.getHold().getSeatIdsCount() != 4) {
                        throw new IllegalStateException("filling the soldout event: " + r);
                    }
                }
                window.clear();
            }
        }
        ReserveResponse last = await(engine.reserve(request(item, SeatMode.ANY, 1, "fill-check", "fill-check")));
        if (last.getOutcome() != ReserveOutcome.SOLD_OUT) {
            throw new IllegalStateException("the soldout event is not sold out after " + holds + " holds: " + last);
        }
        return item;
    }

    /** A COUNTED item of one unit, reserved once, so that every later Reserve is SOLD_OUT. */
    private String soldOutCountedItem() throws Exception {
        await(engine.createItem(CreateItemRequest.newBuilder().setTenantId(BenchItems.TENANT).setItemId(COUNTED_ITEM)
                .setTotal(1).setHomeRegion(BenchItems.REGION).build(), BenchItems.REGION));
        ReserveResponse first = await(engine.reserve(counted("counted-setup-1", "counted-setup-1")));
        ReserveResponse second = await(engine.reserve(counted("counted-setup-2", "counted-setup-2")));
        if (first.getOutcome() != ReserveOutcome.RESERVED || second.getOutcome() != ReserveOutcome.SOLD_OUT) {
            throw new IllegalStateException("could not sell the counted item out: " + first.getOutcome() + ", then "
                    + second.getOutcome());
        }
        return COUNTED_ITEM;
    }

    private static ReserveRequest counted(String key, String buyer) {
        return ReserveRequest.newBuilder().setTenantId(BenchItems.TENANT).setItemId(COUNTED_ITEM).setQuantity(1)
                .setIdempotencyKey(key).setBuyerId(buyer).setRegion(BenchItems.REGION).build();
    }

    static ReserveRequest request(String item, SeatMode seatMode, int seats, String key, String buyer) {
        return ReserveRequest.newBuilder()
                .setTenantId(BenchItems.TENANT)
                .setItemId(item)
                .setQuantity(seats)
                .setIdempotencyKey(key)
                .setBuyerId(buyer)
                .setRegion(BenchItems.REGION)
                .setSeats(SeatSelection.newBuilder().setMode(seatMode))
                .build();
    }

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("not answered in " + WAIT_SECONDS + " s", e);
        }
    }

    @Setup(Level.Iteration)
    public void beginIteration(IterationParams iteration) throws Exception {
        if (supply != null) {
            supply.prepare(iteration);
        }
        calls.reset();
        iterationBatches = engine.stats().batches();
        laneCpu.begin();
        iterationCpuNanos = OS.getProcessCpuTime();
    }

    @Benchmark
    public ReserveResponse reserve(Caller caller) throws Exception {
        if (ask == Ask.SOLDOUT || ask == Ask.SOLDOUT_COUNTED) {
            caller.next();
            ReserveRequest q = ask == Ask.SOLDOUT
                    ? request(soldOutItem, SeatMode.ANY, 1, caller.key(), caller.buyer())
                    : counted(caller.key(), caller.buyer());
            ReserveResponse r = engine.reserve(q).get(WAIT_SECONDS, TimeUnit.SECONDS);
            if (r.getOutcome() != ReserveOutcome.SOLD_OUT) {
                throw new IllegalStateException("expected SOLD_OUT, got " + r.getOutcome());
            }
            calls.increment();
            return r;
        }
        int event = supply.current();
        for (int hop = 0; ; hop++) {
            caller.next();
            ReserveResponse r = engine.reserve(request(eventId(event), ask.seatMode, ask.seats, caller.key(),
                    caller.buyer())).get(WAIT_SECONDS, TimeUnit.SECONDS);
            if (r.getOutcome() == ReserveOutcome.RESERVED) {
                if (r.getHold().getSeatIdsCount() != ask.seats) {
                    throw new IllegalStateException("expected " + ask.seats + " seats, got " + r.getHold());
                }
                supply.taken(ask.seats);
                calls.increment();
                return r;
            }
            if (r.getOutcome() != ReserveOutcome.SOLD_OUT || hop >= HOPS_MAX) {
                throw new IllegalStateException("expected RESERVED, got " + r.getOutcome() + " from " + eventId(event)
                        + " (hop " + hop + ")");
            }
            event = supply.soldOut(event);
        }
    }

    /**
     * The same calls as {@link #reserve}, from a caller that keeps {@link SeatPipeline#pipeline}
     * of them in flight ({@code -t 4 -p pipeline=64}: 256 in flight from 4 threads, as an
     * asynchronous service sends them; see {@link Pipeline} on why that is measured apart from 256
     * blocked threads on 2 cores). Each invocation waits for its oldest call and sends a new one in
     * its place; a call answered SOLD_OUT by a sold-out event is asked again of the next one, there
     * and then (blocked, as {@link #reserve} does). Seat modes only, never the soldout ones.
     */
    @Benchmark
    public ReserveResponse reservePipelined(Caller caller, SeatPipeline pipeline) throws Exception {
        if (ask.soldOut()) {
            throw new IllegalStateException("reservePipelined measures the seat modes, not " + mode);
        }
        SeatPipeline.Slot oldest = pipeline.oldest();
        ReserveResponse r = oldest == null ? null : settle(caller, oldest);
        int event = supply.current();
        caller.next();
        pipeline.replace(new SeatPipeline.Slot(event, engine.reserve(request(eventId(event), ask.seatMode, ask.seats,
                caller.key(), caller.buyer()))));
        return r;
    }

    /** Waits for one pipelined call; a SOLD_OUT from its sold-out event is asked again of the next. */
    private ReserveResponse settle(Caller caller, SeatPipeline.Slot slot) throws Exception {
        int event = slot.event();
        ReserveResponse r = slot.answer().get(WAIT_SECONDS, TimeUnit.SECONDS);
        for (int hop = 0; r.getOutcome() == ReserveOutcome.SOLD_OUT && hop < HOPS_MAX; hop++) {
            event = supply.soldOut(event);
            caller.next();
            r = engine.reserve(request(eventId(event), ask.seatMode, ask.seats, caller.key(), caller.buyer()))
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        if (r.getOutcome() != ReserveOutcome.RESERVED || r.getHold().getSeatIdsCount() != ask.seats) {
            throw new IllegalStateException("expected RESERVED with " + ask.seats + " seats, got " + r.getOutcome()
                    + " from " + eventId(event));
        }
        supply.taken(ask.seats);
        calls.increment();
        return r;
    }

    /**
     * A benchmark thread's calls in flight for {@link #reservePipelined}: {@code pipeline} slots,
     * the oldest answered first. Drained after each iteration (the answers are checked, not counted
     * in the next one). One per JMH thread; not thread-safe.
     */
    @State(Scope.Thread)
    public static class SeatPipeline {
        record Slot(int event, CompletableFuture<ReserveResponse> answer) {
        }

        /** Calls each benchmark thread keeps in flight. */
        @Param({"64"})
        public int pipeline;

        private Slot[] slots;
        private int next;

        @Setup(Level.Trial)
        public void setUp() {
            if (pipeline < 1 || pipeline > 4096) {
                throw new IllegalArgumentException("pipeline must be 1..4096, got " + pipeline);
            }
            slots = new Slot[pipeline];
        }

        Slot oldest() {
            return slots[next];
        }

        void replace(Slot slot) {
            slots[next] = slot;
            next = next + 1 == slots.length ? 0 : next + 1;
        }

        @TearDown(Level.Iteration)
        public void drain() throws Exception {
            for (int i = 0; i < slots.length; i++) {
                if (slots[i] != null) {
                    ReserveResponse r = slots[i].answer().get(WAIT_SECONDS, TimeUnit.SECONDS);
                    if (r.getOutcome() != ReserveOutcome.RESERVED && r.getOutcome() != ReserveOutcome.SOLD_OUT) {
                        throw new IllegalStateException("a pipelined seat call drained after the iteration: "
                                + r.getOutcome());
                    }
                    slots[i] = null;
                }
            }
            next = 0;
        }
    }

    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        long n = calls.sum();
        long batches = engine.stats().batches() - iterationBatches;
        long cpu = OS.getProcessCpuTime() - iterationCpuNanos;
        String lanes = laneCpu.end();
        String supplyLine = supply == null ? "" : " " + supply.finish();
        System.out.printf(Locale.ROOT, "%n[seats] phase=%s mode=%s calls=%d lane_batches=%d calls_per_batch=%.1f"
                        + " jvm_cpu_us_per_call=%.1f %s%s%n",
                iteration.getType() == IterationType.WARMUP ? "warmup" : "measurement", mode, n, batches,
                batches == 0 ? 0.0 : (double) n / batches, n == 0 ? 0.0 : cpu / 1e3 / n, lanes, supplyLine);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        try {
            if (engine != null) {
                LaneEngine.Stats s = engine.stats();
                System.out.printf("%n[SeatBench mode=%s] batches=%d redos=%d%n", mode, s.batches(), s.redos());
                System.out.println("[SeatBench mode=" + mode + "] " + PlainJdbc.ledger(node.dataSource()) + " "
                        + seatsInHolds(node.dataSource()));
                Runtime rt = Runtime.getRuntime();
                System.out.printf("[SeatBench mode=%s] heap used %d MB after the trial%n", mode,
                        (rt.totalMemory() - rt.freeMemory()) >> 20);
            }
        } finally {
            try {
                if (node != null) {
                    node.close();
                }
            } finally {
                node = null;
                engine = null;
                dropTables(db);
                BenchDatabase d = db;
                BenchServer s = server;
                db = null;
                server = null;
                BenchServer.close(d, s);
            }
        }
    }

    /**
     * Drops the trial's tables before its database is dropped: DROP DATABASE … WITH (FORCE) cannot
     * end an autovacuum worker for a role without pg_signal_backend, and on tables of several
     * hundred thousand updated rows a worker outlasts {@link BenchDatabase}'s retries; a DROP of
     * the tables makes the worker give way (autovacuum yields to a conflicting lock). Best effort.
     */
    static void dropTables(BenchDatabase db) {
        if (db == null) {
            return;
        }
        try (Connection c = java.sql.DriverManager.getConnection(db.url(), db.user(), db.password());
             java.sql.Statement st = c.createStatement()) {
            st.execute("SET lock_timeout = '120s'");
            st.execute("DROP SCHEMA public CASCADE");
        } catch (SQLException e) {
            System.err.println("[bench] could not drop the tables of " + db + " before the database: " + e.getMessage());
        }
    }

    /** Seats whose row names a hold against the seats the HELD seated holds list: equal, or a bug. */
    static String seatsInHolds(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     SELECT (SELECT count(*) FROM seats WHERE hold_id IS NOT NULL),
                            (SELECT coalesce(sum(qty), 0) FROM holds WHERE state IN ('HELD', 'SOLD') AND seat_nos IS NOT NULL),
                            (SELECT count(DISTINCT item_id) FROM seats)""");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            String line = "seats in holds=" + rs.getLong(1) + " seats the live seated holds list=" + rs.getLong(2)
                    + " events=" + rs.getLong(3) + (rs.getLong(1) == rs.getLong(2) ? "" : " MISMATCH");
            c.rollback();
            return line;
        }
    }

    /**
     * The CPU time of the lane threads ("lane-<n>") over an iteration: the busiest one's share of
     * the wall time ({@code hot_lane_cpu}, the hot event's lane: near 100 % means its decisions, not
     * the database, bound the rate). Not thread-safe: the iteration fixtures call it.
     */
    static final class LaneCpu {
        private static final java.lang.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private final java.util.Map<Long, Long> start = new java.util.HashMap<>();
        private long startNanos;

        void begin() {
            start.clear();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().matches("lane-\\d+")) {
                    start.put(t.getId(), THREADS.getThreadCpuTime(t.getId()));
                }
            }
            startNanos = System.nanoTime();
        }

        String end() {
            double wall = System.nanoTime() - startNanos;
            double hottest = 0;
            for (java.util.Map.Entry<Long, Long> e : start.entrySet()) {
                long now = THREADS.getThreadCpuTime(e.getKey());
                if (now >= 0 && e.getValue() >= 0) {
                    hottest = Math.max(hottest, (now - e.getValue()) / wall);
                }
            }
            return String.format(Locale.ROOT, "hot_lane_cpu=%.0f%%", 100 * hottest);
        }
    }

    /**
     * One hot event at a time, and the events created ahead of it (see the class comment): shared by
     * {@link SeatBench} and {@link SkipLockedBaseline}. The benchmark threads read the current event
     * (a volatile read) and call {@link #soldOut} when it answered SOLD_OUT; the first such caller
     * moves everyone to the next event created ahead, or creates one itself when none is left (a
     * stall: the others wait on the lock meanwhile).
     *
     * <p>Why the events are created in the trial's setup and not in each iteration's: while one
     * thread runs a {@code Level.Iteration} fixture of a {@code Scope.Benchmark} state, JMH's other
     * threads busy-wait for it (its generated code spins on the fixture's mutex), so with 256
     * threads on 2 cores a 100,000-seat event took 20 to 60 s to create there instead of 1.5 s; during
     * the trial's setup they block on a monitor instead. {@link #prepareTrial} therefore creates
     * every event the trial should need up front; {@link #prepare} only tops up, should the supply
     * run low. {@link #prepareTrial}, {@link #prepare} and {@link #finish} run in fixtures, while no
     * call runs. Thread-safe.
     */
    static final class Supply {
        /** Creates events {@code ns} (possibly at once), ready to sell. */
        interface Maker {
            void make(int[] ns) throws Exception;
        }

        /** Margin over the expected consumption. */
        static final double MARGIN = 1.5;

        private final String name;
        private final int perEvent;
        private final Maker maker;
        private final LongAdder taken = new LongAdder();
        private final List<Integer> ready = new ArrayList<>(); // guarded by this
        private int position = -1; // index in ready of the current event; guarded by this
        private int nextNumber = 1; // guarded by this
        private volatile int current = -1;
        private double fastest; // seats per second, of the iterations so far; guarded by this
        private long startNanos;
        private int positionAtStart;
        private long stalls;
        private boolean measuring;

        /** {@code perEvent}: the seats one event sells to this benchmark's calls. */
        Supply(String name, int perEvent, Maker maker) {
            this.name = name;
            this.perEvent = perEvent;
            this.maker = maker;
        }

        /** The event to ask now. */
        int current() {
            return current;
        }

        /** Seats reserved (for the rate that sizes the next iteration's supply). */
        void taken(int seats) {
            taken.add(seats);
        }

        /**
         * Event {@code soldOut} answered SOLD_OUT: the event to ask now (the next one, or already
         * another if some other caller moved on first).
         */
        synchronized int soldOut(int soldOut) throws Exception {
            if (soldOut != current) {
                return current;
            }
            if (position + 1 >= ready.size()) {
                stalls++;
                int n = nextNumber++;
                System.out.printf("%n[supply] %s: no event left ahead, creating event %d during the %s%n", name, n,
                        measuring ? "MEASUREMENT" : "warm-up");
                maker.make(new int[] {n});
                ready.add(n);
            }
            position++;
            current = ready.get(position);
            return current;
        }

        /**
         * In the trial's setup: the first hot event and enough behind it for {@code rate} seats/s
         * over every warm-up and measurement iteration of the trial, × {@link #MARGIN}, plus one.
         */
        synchronized void prepareTrial(BenchmarkParams trial, double rate) throws Exception {
            double seconds = seconds(trial.getWarmup()) + seconds(trial.getMeasurement());
            create(1 + events(MARGIN * rate * seconds) + 1, String.format(Locale.ROOT, "%.0f seats/s x %.0f s", rate,
                    seconds));
            position = 0;
            current = ready.get(0);
        }

        private static double seconds(org.openjdk.jmh.runner.options.TimeValue t, int count) {
            return count * t.convertTo(TimeUnit.MILLISECONDS) / 1e3;
        }

        private static double seconds(IterationParams p) {
            return seconds(p.getTime(), p.getCount());
        }

        private int events(double seats) {
            return (int) Math.ceil(seats / perEvent);
        }

        private void create(int n, String why) throws Exception {
            if (n <= 0) {
                return;
            }
            int[] ns = new int[n];
            for (int i = 0; i < n; i++) {
                ns[i] = nextNumber++;
            }
            long t0 = System.nanoTime();
            maker.make(ns);
            for (int e : ns) {
                ready.add(e);
            }
            System.out.printf(Locale.ROOT, "%n[supply] %s: created %d event(s) in %.1f s for %s%n", name, n,
                    (System.nanoTime() - t0) / 1e9, why);
        }

        /**
         * Before an iteration: tops up (rarely; slow, see the class comment) so that the events
         * waiting behind the current one hold {@link #MARGIN} × the fastest rate seen × the
         * iteration's time.
         */
        synchronized void prepare(IterationParams iteration) throws Exception {
            double seconds = iteration.getTime().convertTo(TimeUnit.MILLISECONDS) / 1e3;
            int ahead = ready.size() - position - 1;
            int more = events(MARGIN * fastest * seconds) - ahead;
            if (more > 0) {
                create(more, String.format(Locale.ROOT, "a top-up, %.0f seats/s x %.0f s", fastest, seconds));
            }
            measuring = iteration.getType() == IterationType.MEASUREMENT;
            taken.reset();
            stalls = 0;
            positionAtStart = position;
            startNanos = System.nanoTime();
        }

        /** After an iteration: its rate is remembered; answers the iteration's part of a [seats] line. */
        synchronized String finish() {
            double seconds = (System.nanoTime() - startNanos) / 1e9;
            long seats = taken.sum();
            double rate = seconds > 0 ? seats / seconds : 0;
            fastest = Math.max(fastest, rate);
            return String.format(Locale.ROOT, "seats=%d seats_per_wall_s=%.0f events_sold_out=%d events_waiting=%d"
                    + " supply_stalls=%d", seats, rate, position - positionAtStart, ready.size() - position - 1, stalls);
        }

    }
}
