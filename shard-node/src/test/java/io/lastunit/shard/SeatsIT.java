package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetSeatMapRequest;
import io.lastunit.api.inventory.v1.GetSeatMapResponse;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.SeatMap;
import io.lastunit.api.inventory.v1.SeatMode;
import io.lastunit.api.inventory.v1.SeatRow;
import io.lastunit.api.inventory.v1.SeatSection;
import io.lastunit.api.inventory.v1.SeatSelection;
import io.lastunit.api.inventory.v1.SeatState;
import io.lastunit.api.inventory.v1.SeatView;
import io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.GrpcErrors;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Seated items against a real shard node over real gRPC on real PostgreSQL (docs/seats.md): the
 * mixed race over 10,000 seats, the race for four specific seats, expiry without the sweeper,
 * the hold calls, seats off sale and back, restock, and bad input.
 */
class SeatsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static ShardNodeHarness shard;
    private static final ExecutorService POOL = Executors.newFixedThreadPool(64);

    @BeforeAll
    static void start() throws Exception {
        // The sweeper never runs in these tests: expired seats must come back through the lane alone.
        shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.sweep-interval-ms", 3_600_000)).start();
    }

    @AfterAll
    static void stop() throws Exception {
        POOL.shutdownNow();
        shard.close();
    }

    /** Sections of rows of numbered seats "<row>-<n>", n = 1..seats, an aisle after seat {@code aisle} (0 = none). */
    static SeatMap venue(int sections, int rows, int seats, int aisle) {
        SeatMap.Builder m = SeatMap.newBuilder();
        for (int s = 0; s < sections; s++) {
            SeatSection.Builder sec = SeatSection.newBuilder().setSectionId("S" + s);
            for (int r = 0; r < rows; r++) {
                SeatRow.Builder row = SeatRow.newBuilder().setRowId("R" + r).setCount(seats).setFirstNumber(1)
                        .setSeatPrefix("S" + s + "R" + r + "-").setRank(r).setCategory(r < rows / 2 ? "front" : "back");
                if (aisle > 0) {
                    row.addAislesAfter(aisle);
                }
                sec.addRows(row);
            }
            m.addSections(sec);
        }
        return m.build();
    }

    static void createSeated(String item, SeatMap map) {
        shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId(item)
                .setHomeRegion("local").setKind(ItemKind.SEATED).setSeatMap(map).build());
    }

    static ReserveRequest seats(String item, String key, SeatMode mode, int n, String... ids) {
        SeatSelection.Builder s = SeatSelection.newBuilder().setMode(mode);
        for (String id : ids) {
            s.addSeatIds(id);
        }
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId(item).setQuantity(n)
                .setIdempotencyKey(key).setBuyerId("b-" + key).setRegion("local").setSeats(s).build();
    }

    static Stock stock(String item) {
        return shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId(item).build())
                .getStock();
    }

    static GetSeatMapResponse map(String item) {
        return shard.blocking().getSeatMap(GetSeatMapRequest.newBuilder().setTenantId("acme").setItemId(item).build());
    }

    /** Reserve, retrying RESOURCE_EXHAUSTED / UNAVAILABLE with the same key (bounded), as a client would. */
    static ReserveResponse reserveRetrying(ReserveRequest r, AtomicInteger retries) {
        for (int attempt = 0; ; attempt++) {
            try {
                return shard.blocking().reserve(r);
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if ((code != Status.Code.RESOURCE_EXHAUSTED && code != Status.Code.UNAVAILABLE) || attempt >= 50) {
                    throw e;
                }
                retries.incrementAndGet();
                try {
                    Thread.sleep(10);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    @Test
    void hundredThousandBuyers_overTenThousandSeats_noSeatTwice_adjacentReallyAdjacent() throws Exception {
        // 4 sections x 50 rows x 50 seats, an aisle after seat 25 of every row.
        createSeated("arena", venue(4, 50, 50, 25));
        int buyers = 100_000;
        Random rnd = new Random(26);
        List<ReserveRequest> asks = new ArrayList<>(buyers);
        for (int i = 0; i < buyers; i++) {
            int kind = rnd.nextInt(10);
            if (kind < 4) {
                asks.add(seats("arena", "m" + i, SeatMode.ANY, 1 + rnd.nextInt(3)));
            } else if (kind < 8) {
                asks.add(seats("arena", "m" + i, SeatMode.ADJACENT, 2 + rnd.nextInt(5)));
            } else {
                int s = rnd.nextInt(4);
                int r = rnd.nextInt(50);
                int n = 1 + rnd.nextInt(4);
                int from = 1 + rnd.nextInt(50 - n + 1);
                String[] ids = new String[n];
                for (int k = 0; k < n; k++) {
                    ids[k] = "S" + s + "R" + r + "-" + (from + k);
                }
                asks.add(seats("arena", "m" + i, SeatMode.SPECIFIC, 0, ids));
            }
        }
        Semaphore inFlight = new Semaphore(1_024);
        AtomicInteger retries = new AtomicInteger();
        Map<Integer, ReserveResponse> answers = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> calls = new ArrayList<>(buyers);
        long start = System.nanoTime();
        for (int i = 0; i < buyers; i++) {
            int slot = i;
            inFlight.acquire();
            calls.add(CompletableFuture.runAsync(() -> {
                try {
                    answers.put(slot, reserveRetrying(asks.get(slot), retries));
                } finally {
                    inFlight.release();
                }
            }, POOL));
        }
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
                .get(TestTimeouts.scaled(Duration.ofMinutes(5)).toMillis(), TimeUnit.MILLISECONDS);
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("SeatsIT: %d seat Reserves in %.1f s = %.0f/s (%d client retries)%n", buyers, seconds,
                buyers / seconds, retries.get());

        Map<String, String> seatToHold = new HashMap<>();
        int reserved = 0;
        int held = 0;
        for (int i = 0; i < buyers; i++) {
            ReserveResponse a = answers.get(i);
            ReserveRequest q = asks.get(i);
            assertThat(a).as("answer %d", i).isNotNull();
            switch (a.getOutcome()) {
                case RESERVED -> {
                    reserved++;
                    Hold h = a.getHold();
                    int want = q.getSeats().getMode() == SeatMode.SPECIFIC ? q.getSeats().getSeatIdsCount()
                            : q.getQuantity();
                    assertThat(h.getSeatIdsCount()).isEqualTo(want).isEqualTo(h.getQuantity());
                    for (String seat : h.getSeatIdsList()) {
                        String before = seatToHold.put(seat, h.getHoldId());
                        assertThat(before).as("seat %s in two holds", seat).isNull();
                    }
                    if (q.getSeats().getMode() == SeatMode.SPECIFIC) {
                        assertThat(h.getSeatIdsList()).containsExactlyInAnyOrderElementsOf(q.getSeats().getSeatIdsList());
                    }
                    if (q.getSeats().getMode() == SeatMode.ADJACENT) {
                        assertAdjacent(h.getSeatIdsList());
                    }
                    held += h.getQuantity();
                }
                case SEATS_TAKEN -> {
                    assertThat(q.getSeats().getMode()).isEqualTo(SeatMode.SPECIFIC);
                    assertThat(a.getTakenSeatIdsList()).isNotEmpty();
                    assertThat(q.getSeats().getSeatIdsList()).containsAll(a.getTakenSeatIdsList());
                }
                case SOLD_OUT -> assertThat(q.getSeats().getMode()).isNotEqualTo(SeatMode.SPECIFIC);
                default -> throw new AssertionError("answer " + i + ": " + a);
            }
        }
        // Every seat taken is in exactly one hold, and the map says so.
        for (int i = 0; i < buyers; i++) {
            ReserveResponse a = answers.get(i);
            if (a.getOutcome() == ReserveOutcome.SEATS_TAKEN) {
                for (String seat : a.getTakenSeatIdsList()) {
                    assertThat(seatToHold).as("seat %s answered taken", seat).containsKey(seat);
                }
            }
        }
        Stock s = stock("arena");
        assertThat(s.getTotal()).isEqualTo(10_000);
        assertThat(s.getHeld()).isEqualTo(held);
        assertThat(s.getAvailable() + s.getHeld() + s.getSold()).isEqualTo(10_000);
        GetSeatMapResponse m = map("arena");
        assertThat(m.getSeatsCount()).isEqualTo(10_000);
        Set<String> heldOnMap = new HashSet<>();
        for (SeatView v : m.getSeatsList()) {
            if (v.getState() == SeatState.SEAT_HELD) {
                heldOnMap.add(v.getSeatId());
            } else {
                assertThat(v.getState()).isEqualTo(SeatState.FREE);
            }
        }
        assertThat(heldOnMap).isEqualTo(seatToHold.keySet());
        assertThat(m.getFree()).isEqualTo(s.getAvailable());
        System.out.printf("SeatsIT: %d holds, %d seats held, %d free%n", reserved, held, s.getAvailable());
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    /** Seat ids "S<s>R<r>-<n>" of one row, consecutive numbers, not across the aisle after 25. */
    private static void assertAdjacent(List<String> ids) {
        String row = ids.get(0).substring(0, ids.get(0).indexOf('-'));
        List<Integer> numbers = new ArrayList<>();
        for (String id : ids) {
            assertThat(id.substring(0, id.indexOf('-'))).as("one row: %s", ids).isEqualTo(row);
            numbers.add(Integer.parseInt(id.substring(id.indexOf('-') + 1)));
        }
        numbers.sort(null);
        for (int k = 1; k < numbers.size(); k++) {
            assertThat(numbers.get(k)).as("adjacent: %s", ids).isEqualTo(numbers.get(k - 1) + 1);
        }
        boolean left = numbers.get(0) <= 25;
        boolean right = numbers.get(numbers.size() - 1) > 25;
        assertThat(left && right).as("across the aisle: %s", ids).isFalse();
    }

    @Test
    void thousandBuyers_forTheSameFourSeats_exactlyOneWins_theRestToldWhichAreTaken() throws Exception {
        createSeated("gala", venue(1, 2, 10, 0));
        String[] four = {"S0R0-4", "S0R0-5", "S0R0-6", "S0R0-7"};
        int buyers = 1_000;
        AtomicInteger retries = new AtomicInteger();
        List<CompletableFuture<ReserveResponse>> calls = new ArrayList<>();
        for (int i = 0; i < buyers; i++) {
            ReserveRequest r = seats("gala", "g" + i, SeatMode.SPECIFIC, 4, four);
            calls.add(CompletableFuture.supplyAsync(() -> reserveRetrying(r, retries), POOL));
        }
        int won = 0;
        int taken = 0;
        for (CompletableFuture<ReserveResponse> c : calls) {
            ReserveResponse a = c.get(TestTimeouts.scaled(Duration.ofSeconds(120)).toMillis(), TimeUnit.MILLISECONDS);
            if (a.getOutcome() == ReserveOutcome.RESERVED) {
                won++;
                assertThat(a.getHold().getSeatIdsList()).containsExactly(four);
            } else {
                assertThat(a.getOutcome()).isEqualTo(ReserveOutcome.SEATS_TAKEN);
                assertThat(a.getTakenSeatIdsList()).containsExactly(four);
                taken++;
            }
        }
        assertThat(won).isEqualTo(1);
        assertThat(taken).isEqualTo(buyers - 1);
        assertThat(stock("gala").getHeld()).isEqualTo(4);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void expiredSeats_areFreeAgainWithoutTheSweeper_lateConfirmRefused_eventRecorded() throws Exception {
        createSeated("matinee", venue(1, 1, 6, 0));
        ReserveRequest first = seats("matinee", "e1", SeatMode.SPECIFIC, 0, "S0R0-1", "S0R0-2").toBuilder()
                .setHoldTtlMs(1_000).build();
        Hold h = shard.blocking().reserve(first).getHold();
        // Taken while held: asked of a hold with the item's TTL (10 minutes), so no host is too slow for it.
        assertThat(shard.blocking().reserve(seats("matinee", "e0", SeatMode.SPECIFIC, 0, "S0R0-5")).getOutcome())
                .isEqualTo(ReserveOutcome.RESERVED);
        assertThat(shard.blocking().reserve(seats("matinee", "e2", SeatMode.SPECIFIC, 0, "S0R0-5")).getOutcome())
                .isEqualTo(ReserveOutcome.SEATS_TAKEN);
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
        while (shard.blocking().getHold(GetHoldRequest.newBuilder().setHoldId(h.getHoldId()).build()).getHold()
                .getState() != HoldState.EXPIRED) {
            assertThat(System.nanoTime()).as("the hold expires").isLessThan(deadline);
            Thread.sleep(50);
        }
        assertThatThrownBy(() -> shard.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(h.getHoldId())
                .setOrderRef("late").build()))
                .satisfies(e -> assertThat(reason(e)).isEqualTo("HOLD_NOT_HELD"));
        // The seat is free to the next buyer at once, with no sweeper: the lane expires the hold itself.
        ReserveResponse again = shard.blocking().reserve(seats("matinee", "e3", SeatMode.SPECIFIC, 0, "S0R0-2"));
        assertThat(again.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(shard.blocking().getHold(GetHoldRequest.newBuilder().setHoldId(h.getHoldId()).build()).getHold()
                .getState()).isEqualTo(HoldState.EXPIRED);
        assertThat(outboxKinds(h)).contains("HELD", "EXPIRED");
        Stock s = stock("matinee");
        assertThat(s.getHeld()).isEqualTo(2);
        assertThat(s.getAvailable()).isEqualTo(4);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    private static List<String> outboxKinds(Hold h) throws Exception {
        List<String> kinds = new ArrayList<>();
        try (Connection c = shard.node().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT kind FROM outbox WHERE hold_id = ? ORDER BY id")) {
            ps.setObject(1, io.lastunit.common.HoldId.decode(h.getHoldId(), "hold_id").uuid());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    kinds.add(rs.getString(1));
                }
            }
            c.rollback();
        }
        return kinds;
    }

    @Test
    void holdCalls_confirmReleaseExtend_andRetriesByKey() {
        createSeated("opera", venue(1, 2, 8, 4));
        ReserveResponse a = shard.blocking().reserve(seats("opera", "o1", SeatMode.ADJACENT, 3));
        assertThat(a.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        // The same key again: the same hold; the same key for other seats: refused.
        assertThat(shard.blocking().reserve(seats("opera", "o1", SeatMode.ADJACENT, 3)).getHold())
                .isEqualTo(a.getHold());
        assertThatThrownBy(() -> shard.blocking().reserve(seats("opera", "o1", SeatMode.ANY, 2)))
                .satisfies(e -> assertThat(reason(e))
                        .isEqualTo("IDEMPOTENCY_KEY_REUSED"));
        Hold extended = shard.blocking().extend(ExtendRequest.newBuilder().setHoldId(a.getHold().getHoldId()).build())
                .getHold();
        assertThat(extended.getExtended()).isTrue();
        assertThat(com.google.protobuf.util.Timestamps.toMicros(extended.getExpiresAt()))
                .isGreaterThan(com.google.protobuf.util.Timestamps.toMicros(a.getHold().getExpiresAt()));
        Hold sold = shard.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(a.getHold().getHoldId())
                .setOrderRef("order-1").build()).getHold();
        assertThat(sold.getState()).isEqualTo(HoldState.SOLD);
        assertThat(sold.getSeatIdsList()).isEqualTo(a.getHold().getSeatIdsList());
        assertThatThrownBy(() -> shard.blocking().release(ReleaseRequest.newBuilder()
                .setHoldId(a.getHold().getHoldId()).build()))
                .satisfies(e -> assertThat(reason(e)).isEqualTo("HOLD_NOT_HELD"));

        ReserveResponse b = shard.blocking().reserve(seats("opera", "o2", SeatMode.BEST, 2));
        Hold released = shard.blocking().release(ReleaseRequest.newBuilder().setHoldId(b.getHold().getHoldId())
                .build()).getHold();
        assertThat(released.getState()).isEqualTo(HoldState.RELEASED);
        // Its seats are for sale again.
        ReserveResponse c = shard.blocking().reserve(seats("opera", "o3", SeatMode.SPECIFIC, 0,
                b.getHold().getSeatIdsList().toArray(String[]::new)));
        assertThat(c.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        Stock s = stock("opera");
        assertThat(s.getSold()).isEqualTo(3);
        assertThat(s.getHeld()).isEqualTo(2);
        assertThat(s.getAvailable()).isEqualTo(11);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void seatsOffSaleAndBack_andRestock() {
        createSeated("club", venue(1, 1, 10, 0));
        ReserveResponse held = shard.blocking().reserve(seats("club", "c1", SeatMode.SPECIFIC, 0, "S0R0-1"));
        assertThat(held.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        // A held seat cannot be killed; nothing changes.
        assertThatThrownBy(() -> shard.blocking().setSeatsOnSale(SetSeatsOnSaleRequest.newBuilder()
                .setTenantId("acme").setItemId("club").addSeatIds("S0R0-1").addSeatIds("S0R0-2").build()))
                .satisfies(e -> assertThat(reason(e)).isEqualTo("SEATS_TAKEN"));
        assertThat(stock("club").getTotal()).isEqualTo(10);
        var off = shard.blocking().setSeatsOnSale(SetSeatsOnSaleRequest.newBuilder().setTenantId("acme")
                .setItemId("club").addSeatIds("S0R0-2").addSeatIds("S0R0-3").build());
        assertThat(off.getChanged()).isEqualTo(2);
        assertThat(off.getStock().getTotal()).isEqualTo(8);
        assertThat(off.getStock().getKilled()).isEqualTo(2);
        assertThat(shard.blocking().reserve(seats("club", "c2", SeatMode.SPECIFIC, 0, "S0R0-3")).getTakenSeatIdsList())
                .containsExactly("S0R0-3");
        // Adjacent runs do not include seats off sale: 4..10 is the longest free run now.
        ReserveResponse run = shard.blocking().reserve(seats("club", "c3", SeatMode.ADJACENT, 7));
        assertThat(run.getHold().getSeatIdsList()).containsExactly("S0R0-4", "S0R0-5", "S0R0-6", "S0R0-7",
                "S0R0-8", "S0R0-9", "S0R0-10");
        var on = shard.blocking().setSeatsOnSale(SetSeatsOnSaleRequest.newBuilder().setTenantId("acme")
                .setItemId("club").addSeatIds("S0R0-2").addSeatIds("S0R0-3").setOnSale(true).build());
        assertThat(on.getChanged()).isEqualTo(2);
        assertThat(shard.blocking().reserve(seats("club", "c4", SeatMode.ADJACENT, 2)).getHold().getSeatIdsList())
                .containsExactly("S0R0-2", "S0R0-3");
        // Restock: a new row.
        var restocked = shard.blocking().restock(RestockRequest.newBuilder().setTenantId("acme").setItemId("club")
                .setRestockId("r1").setSeatMap(SeatMap.newBuilder().addSections(SeatSection.newBuilder()
                        .setSectionId("S0").addRows(SeatRow.newBuilder().setRowId("R9").setCount(5).setFirstNumber(1)
                                .setSeatPrefix("new-")))).build());
        assertThat(restocked.getApplied()).isTrue();
        assertThat(restocked.getStock().getTotal()).isEqualTo(15);
        assertThat(shard.blocking().reserve(seats("club", "c5", SeatMode.ADJACENT, 5)).getHold().getSeatIdsList())
                .containsExactly("new-1", "new-2", "new-3", "new-4", "new-5");
        // The same restock again adds nothing.
        assertThat(shard.blocking().restock(RestockRequest.newBuilder().setTenantId("acme").setItemId("club")
                .setRestockId("r1").setSeatMap(SeatMap.newBuilder().addSections(SeatSection.newBuilder()
                        .setSectionId("S0").addRows(SeatRow.newBuilder().setRowId("R9").setCount(5).setFirstNumber(1)
                                .setSeatPrefix("new-")))).build()).getApplied()).isFalse();
        var compact = shard.blocking().getSeatMap(GetSeatMapRequest.newBuilder().setTenantId("acme").setItemId("club")
                .setCompact(true).build());
        assertThat(compact.getRowsList()).extracting(r -> r.getStates()).containsExactly("hhhhhhhhhh", "hhhhh");
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void perBuyerCap_countsSeats_andReleasedSeatsCountNoMore() {
        shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("derby")
                .setHomeRegion("local").setKind(ItemKind.SEATED).setSeatMap(venue(1, 2, 10, 0)).setPerBuyerLimit(4)
                .build());
        ReserveRequest three = seats("derby", "d1", SeatMode.ADJACENT, 3).toBuilder().setBuyerId("fan").build();
        ReserveResponse a = shard.blocking().reserve(three);
        assertThat(a.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        ReserveRequest two = seats("derby", "d2", SeatMode.ANY, 2).toBuilder().setBuyerId("fan").build();
        assertThat(shard.blocking().reserve(two).getOutcome()).isEqualTo(ReserveOutcome.LIMIT_EXCEEDED);
        assertThat(shard.blocking().reserve(seats("derby", "d3", SeatMode.ANY, 2)).getOutcome())
                .as("another buyer").isEqualTo(ReserveOutcome.RESERVED);
        shard.blocking().release(ReleaseRequest.newBuilder().setHoldId(a.getHold().getHoldId()).build());
        assertThat(shard.blocking().reserve(two).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void aSeatChangedBehindTheLanesBack_isNotSold_theDatabaseIsTheArbiter() throws Exception {
        createSeated("recital", venue(1, 1, 6, 0));
        // The lane loads the event into memory.
        assertThat(shard.blocking().reserve(seats("recital", "r1", SeatMode.SPECIFIC, 0, "S0R0-1")).getOutcome())
                .isEqualTo(ReserveOutcome.RESERVED);
        // Another writer (a bug, a split brain) takes S0R0-3 off sale in the database only.
        try (Connection c = shard.node().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     WITH s AS (UPDATE seats SET on_sale = false WHERE tenant_id = 'acme' AND item_id = 'recital'
                                AND seat_id = 'S0R0-3' RETURNING 1),
                          b AS (UPDATE buckets SET allotment = allotment - 1, available = available - 1
                                 WHERE tenant_id = 'acme' AND item_id = 'recital' AND bucket_no = 0 RETURNING 1)
                     UPDATE items SET total = total - 1 WHERE tenant_id = 'acme' AND item_id = 'recital'""")) {
            assertThat(ps.executeUpdate()).isEqualTo(1);
            c.commit();
        }
        // The lane's cached view still has it for sale: its claim matches no row, it loads the event
        // again and decides again, and the answer is the truth.
        ReserveResponse r = shard.blocking().reserve(seats("recital", "r2", SeatMode.SPECIFIC, 0, "S0R0-3"));
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.SEATS_TAKEN);
        assertThat(r.getTakenSeatIdsList()).containsExactly("S0R0-3");
        ReserveResponse run = shard.blocking().reserve(seats("recital", "r3", SeatMode.ADJACENT, 3));
        assertThat(run.getHold().getSeatIdsList()).containsExactly("S0R0-4", "S0R0-5", "S0R0-6");
        assertThat(stock("recital").getTotal()).isEqualTo(5);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void badInput_isRefusedNamingTheField_andChangesNothing() {
        createSeated("hall", venue(1, 2, 6, 3));
        Stock before = stock("hall");
        assertField(() -> shard.blocking().reserve(seats("hall", "x1", SeatMode.SPECIFIC, 0, "nope")), "seats.seat_ids");
        assertField(() -> shard.blocking().reserve(seats("hall", "x2", SeatMode.SPECIFIC, 0, "S0R0-1", "S0R0-1")),
                "seats.seat_ids");
        assertField(() -> shard.blocking().reserve(seats("hall", "x3", SeatMode.ADJACENT, 4)), "quantity");
        assertField(() -> shard.blocking().reserve(seats("hall", "x4", SeatMode.ANY, 2).toBuilder()
                .setSeats(SeatSelection.newBuilder().setMode(SeatMode.ANY).setSectionId("nowhere")).build()),
                "seats.section_id");
        assertField(() -> shard.blocking().reserve(seats("hall", "x5", SeatMode.ANY, 1).toBuilder().clearSeats()
                .build()), "seats");
        assertField(() -> shard.blocking().reserve(seats("hall", "x6", SeatMode.SEAT_MODE_UNSPECIFIED, 1)),
                "seats.mode");
        shard.createItem("acme", "counted", 10);
        assertField(() -> shard.blocking().reserve(seats("counted", "x7", SeatMode.ANY, 1)), "seats");
        assertField(() -> createSeated("huge", venue(1, 101, 1_000, 0)), "seat_map");
        assertField(() -> shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme")
                .setItemId("dup").setHomeRegion("local").setKind(ItemKind.SEATED).setSeatMap(SeatMap.newBuilder()
                        .addSections(SeatSection.newBuilder().setSectionId("A").addRows(SeatRow.newBuilder()
                                .setRowId("1").setCount(2).setSeatPrefix("x")).addRows(SeatRow.newBuilder()
                                .setRowId("2").setCount(2).setSeatPrefix("x")))).build()),
                "seat_map.sections.rows.seat_prefix");
        assertField(() -> shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme")
                .setItemId("c2").setHomeRegion("local").setTotal(5).setSeatMap(venue(1, 1, 5, 0)).build()), "seat_map");
        assertThat(stock("hall")).isEqualTo(before);
        assertThat(map("hall").getFree()).isEqualTo(12);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    private static String reason(Throwable e) {
        return GrpcErrors.errorInfo(e).map(i -> i.getReason()).orElse("none: " + e);
    }

    private static void assertField(Runnable call, String field) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap().get("field")).isEqualTo(field);
        });
    }
}
