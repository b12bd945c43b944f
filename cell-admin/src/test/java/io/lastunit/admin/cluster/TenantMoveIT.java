package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.lastunit.admin.demo.SeatAudit;
import io.lastunit.admin.demo.SeatSale;
import io.lastunit.admin.demo.Venue;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.GetMoveRequest;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetSeatMapRequest;
import io.lastunit.api.inventory.v1.GetSeatMapResponse;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.io.PrintWriter;
import java.io.Writer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Tenant moves on a local platform, through the admin service, against real shard nodes:
 * cell shared (two shards) and cell big (two shards) in region local. A tenant of 200 items with
 * 5,000 live holds moves into big while 15,000 more buyers buy its items and another tenant's;
 * it moves back; a tenant with a SEATED item moves there and back while its seats sell; a move
 * whose pause would pass its budget rolls back and the tenant keeps selling.
 * The multi-region move is {@code MultiRegionMoveIT}; the mover killed at every step,
 * {@code MoverCrashFaultIT}.
 */
class TenantMoveIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String MOVER = "big-co";
    private static final String OTHER = "small-co";
    private static final int ITEMS = 200;
    private static final int TOTAL_PER_ITEM = 50;
    private static final int HOLDS_BEFORE = 5_000;
    private static final int OTHER_ITEMS = 20;
    private static final int OTHER_TOTAL = 100;
    /** The mover's clock: real time plus what a test adds (a verification that "takes" 10 s). */
    private static final JumpClock CLOCK = new JumpClock();

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;
    private static AdminServiceGrpc.AdminServiceBlockingStub admin;

    @BeforeAll
    static void start() throws Exception {
        clients = new ClusterClients(PG);
        MoveFaults faults = recorded -> {
            if (recorded.getStep() == MoveStep.VERIFIED && recorded.getTenantId().equals("slow-co")) {
                CLOCK.jump(Duration.ofSeconds(10));
            }
        };
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", List.of("local"), 2)
                .cell("big", List.of("local"), 2)
                .balancers(0)
                .adminResumeInterval(Duration.ZERO)
                .movers(MoverSettings.defaults().withRetireGrace(Duration.ofMillis(200)), MovePolicy.defaults(),
                        faults, CLOCK)
                .start();
        router = clients.routerChannel(platform);
        admin = ClusterClients.adminService(clients.adminChannel(platform), LocalPlatform.DEV_TOKEN);
    }

    @AfterAll
    static void stop() throws Exception {
        if (platform != null) {
            platform.close();
        }
        if (clients != null) {
            clients.close();
        }
    }

    private static InventoryServiceGrpc.InventoryServiceBlockingStub api() {
        return ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN).withDeadlineAfter(
                ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    private static List<Sale.Item> createItems(String tenant, int count, long total) throws InterruptedException {
        List<Sale.Item> items = new ArrayList<>();
        var api = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        for (int i = 0; i < count; i++) {
            Sale.Item it = new Sale.Item(tenant, "item-" + i, total);
            ClusterClients.createItem(api, CreateItemRequest.newBuilder().setTenantId(tenant).setItemId(it.id())
                    .setTotal(total).setHomeRegion("local").build());
            items.add(it);
        }
        return items;
    }

    private static Sale sale(List<ReserveRequest> buyers, double perSecond) {
        // Retries ride out the fence: UNAVAILABLE / TENANT_MOVING is retried with the same key.
        return new Sale(ClusterClients.async(router, LocalPlatform.DEV_TOKEN), buyers, 128, 200,
                Duration.ofMillis(100), TestTimeouts.scaled(Duration.ofSeconds(10)), perSecond);
    }

    private static Move startMove(String tenant, String cell, long maxPauseMs) {
        return admin.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS).startMove(
                StartMoveRequest.newBuilder().setTenantId(tenant).setToCell(cell).setMaxPauseMs(maxPauseMs).build());
    }

    @Test
    void aTenantWithItsLiveHolds_movesIntoADedicatedCell_whileBuyersBuy_andBack() throws Exception {
        List<Sale.Item> items = createItems(MOVER, ITEMS, TOTAL_PER_ITEM);
        List<Sale.Item> others = createItems(OTHER, OTHER_ITEMS, OTHER_TOTAL);
        Sale before = sale(Sale.buyers(items, HOLDS_BEFORE, "pre"), 0).start();
        assertThat(before.await(TestTimeouts.scaled(Duration.ofSeconds(120)))).as("%s", before).isTrue();
        assertThat(before.reserved()).isEqualTo(HOLDS_BEFORE);
        List<Hold> liveHolds = before.results().stream().map(Sale.Result::hold).toList();

        // 5,000 more buyers of the mover's items (its last 5,000 units), 10,000 of the other
        // tenant's 2,000 units, interleaved; a third before the move, a third while it runs, a third
        // after its flip.
        List<ReserveRequest> buyers = interleave(Sale.buyers(items, 5_000, "a"), Sale.buyers(others, 10_000, "b"));
        Sale sale = sale(buyers, 3_000).holdAt(buyers.size() / 3, 2 * buyers.size() / 3).start();
        try {
            ClusterClients.awaitUntil(() -> sale.ended() >= buyers.size() / 3, "the first third of the sale");
            Move started = startMove(MOVER, "big", 10_000);
            assertThat(started.getStep()).isEqualTo(MoveStep.PLANNED);
            sale.release();
            awaitStep(started.getMoveId(), MoveStep.FLIPPED);
            sale.release();
            Move done = MoveChecks.awaitFinished(admin, started.getMoveId(), Duration.ofSeconds(120));
            assertThat(done.getStep()).as(done.getReason()).isEqualTo(MoveStep.CLEANED);
            assertThat(done.getPauseMs()).isPositive();
            System.out.printf("TenantMoveIT: moved %d items, %d holds: pause %d ms (budget %d), %d catch-up passes,"
                    + " %s%n", ITEMS, HOLDS_BEFORE, done.getPauseMs(), done.getMaxPauseMs(), done.getCatchUpRounds(),
                    done.getCopied().toString().replace('\n', ' '));
            assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(120)))).as("%s", sale).isTrue();
        } finally {
            sale.stop();
        }

        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(MOVER).equals("big"),
                "the router sees the tenant in big");
        List<Sale.Item> all = new ArrayList<>(items);
        all.addAll(others);
        List<Sale.Result> results = new ArrayList<>(before.results());
        results.addAll(sale.results());
        List<Sale.Attempt> history = new ArrayList<>(before.history());
        history.addAll(sale.history());
        SaleChecker checker = SaleChecker.read(clients, platform.router().topology().current(), all);
        checker.assertEachItemHeldExactlyItsTotal();
        checker.assertRepliesMatchHolds(results);
        checker.assertNoSoldOutWhileStockRemained(history);
        assertThat(sale.history().stream().filter(a -> a.request().getTenantId().equals(OTHER)
                && a.code() != Status.Code.OK).map(a -> a.code() + "/" + a.reason()).toList())
                .as("the other tenant's Reserves were never refused: it never paused").isEmpty();
        assertThat(sale.history().stream().filter(a -> a.request().getTenantId().equals(MOVER)
                && a.code() != Status.Code.OK).map(Sale.Attempt::reason).distinct().toList())
                .as("the mover's refusals: only the fence's").isSubsetOf("TENANT_MOVING", "MOVED", "ITEM_NOT_ACTIVE");
        MoveChecks.assertItemsOnlyIn(clients, platform, MOVER, "big", ITEMS);
        MoveChecks.assertHoldsAsTheyWere(api(), liveHolds);
        MoveChecks.assertInvariants(clients, platform);
        // A hold taken on the source is confirmed on the target; a retried key finds its hold there.
        Hold first = liveHolds.get(0);
        assertThat(api().confirm(ConfirmRequest.newBuilder().setHoldId(first.getHoldId()).setOrderRef("order-1")
                .build()).getHold().getState()).isEqualTo(HoldState.SOLD);
        ReserveRequest retried = before.results().stream().filter(r -> r.hold().getHoldId()
                .equals(liveHolds.get(1).getHoldId())).findFirst().orElseThrow().request();
        ReserveResponse again = api().reserve(retried);
        assertThat(again.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(again.getHold().getHoldId()).isEqualTo(liveHolds.get(1).getHoldId());

        // And back: the same operation, from big to shared.
        Move back = startMove(MOVER, "shared", 10_000);
        assertThat(back.getFromCell()).isEqualTo("big");
        Move backDone = MoveChecks.awaitFinished(admin, back.getMoveId(), Duration.ofSeconds(120));
        assertThat(backDone.getStep()).as(backDone.getReason()).isEqualTo(MoveStep.CLEANED);
        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(MOVER).equals("shared"),
                "the router sees the tenant back in shared");
        MoveChecks.assertItemsOnlyIn(clients, platform, MOVER, "shared", ITEMS);
        MoveChecks.assertHoldsAsTheyWere(api(), liveHolds.subList(1, liveHolds.size()));
        MoveChecks.assertInvariants(clients, platform);
    }

    @Test
    void aSeatedTenant_movesWhileItsSeatsSell_everyHoldKeepsItsSeats_noSeatTwice_andBack() throws Exception {
        String tenant = "opera-co";
        Venue venue = Venue.of(2, 4, 25);
        ClusterClients.createItem(ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN), CreateItemRequest
                .newBuilder().setTenantId(tenant).setItemId("gala").setHomeRegion("local").setKind(ItemKind.SEATED)
                .setHoldTtlMs(600_000).setSeatMap(venue.seatMap()).build());
        Channel withToken = ClientInterceptors.intercept(router, ClusterClients.bearer(LocalPlatform.DEV_TOKEN));
        SeatSale seatSale = new SeatSale(withToken, tenant, "gala", 1_500, 4, 16, 23L, "local", "mv",
                new PrintWriter(Writer.nullWriter()), false);
        ExecutorService driver = Executors.newSingleThreadExecutor();
        try {
            Future<SeatSale.Result> running = driver.submit(seatSale::run);
            ClusterClients.awaitUntil(() -> stock(tenant, "gala").getHeld() + stock(tenant, "gala").getSold() > 0,
                    "the first seats held");
            Move started = startMove(tenant, "big", 10_000);
            boolean overlapped = !running.isDone();
            Move done = MoveChecks.awaitFinished(admin, started.getMoveId(), Duration.ofSeconds(120));
            assertThat(done.getStep()).as(done.getReason()).isEqualTo(MoveStep.CLEANED);
            assertThat(done.getCopied().getSeats()).as("every seat, then those changed since").isGreaterThanOrEqualTo(venue.total());
            SeatSale.Result sale = running.get(TestTimeouts.scaled(Duration.ofSeconds(120)).toMillis(),
                    TimeUnit.MILLISECONDS);
            System.out.printf("TenantMoveIT: seated tenant moved (sale running at the start: %s): pause %d ms, %s;"
                    + " sale %d holds, %d sold out, %d retries%n", overlapped, done.getPauseMs(),
                    done.getCopied().toString().replace('\n', ' '), sale.holds().size(), sale.soldOut(),
                    sale.retries());
            assertThat(sale.errors()).as(String.join("\n", sale.errorSamples())).isZero();
            assertThat(sale.holdsWith(SeatSale.Fate.UNKNOWN)).isZero();
            ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(tenant).equals("big"),
                    "the router sees the tenant in big");
            MoveChecks.assertItemsOnlyIn(clients, platform, tenant, "big", 1);
            // Every answer the buyers got, against the seat map the target serves: no seat in two
            // live holds, each hold adjacent in one row, the map exactly what the buyers did.
            GetSeatMapResponse there = seatMap(tenant);
            SeatAudit.Report audit = SeatAudit.check(venue, sale, there);
            assertThat(audit.problems()).isEmpty();
            assertThat(audit.sold()).isEqualTo(sale.seatsWith(SeatSale.Fate.SOLD));
            assertThat(audit.held()).isEqualTo(sale.seatsWith(SeatSale.Fate.HELD));
            assertThat(audit.sold() + audit.held() + audit.free()).isEqualTo(venue.total());
            MoveChecks.assertInvariants(clients, platform);

            // A hold placed on the source is confirmed on the target with its seats.
            SeatSale.Hold kept = sale.holds().stream().filter(h -> h.fate() == SeatSale.Fate.HELD).findFirst()
                    .orElseThrow();
            Hold confirmed = api().confirm(ConfirmRequest.newBuilder().setHoldId(kept.holdId()).setOrderRef("gala-1")
                    .build()).getHold();
            assertThat(confirmed.getState()).isEqualTo(HoldState.SOLD);
            assertThat(confirmed.getSeatIdsList()).containsExactlyElementsOf(kept.seats());

            // And back, seats and all.
            GetSeatMapResponse before = seatMap(tenant);
            Move back = startMove(tenant, "shared", 10_000);
            Move backDone = MoveChecks.awaitFinished(admin, back.getMoveId(), Duration.ofSeconds(120));
            assertThat(backDone.getStep()).as(backDone.getReason()).isEqualTo(MoveStep.CLEANED);
            ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(tenant).equals("shared"),
                    "the router sees the tenant back in shared");
            MoveChecks.assertItemsOnlyIn(clients, platform, tenant, "shared", 1);
            assertThat(seatMap(tenant).getRowsList()).isEqualTo(before.getRowsList());
            assertThat(seatMap(tenant).getStock()).isEqualTo(before.getStock());
            MoveChecks.assertInvariants(clients, platform);
        } finally {
            driver.shutdownNow();
        }
    }

    private static io.lastunit.api.inventory.v1.Stock stock(String tenant, String item) {
        return api().getStock(GetStockRequest.newBuilder().setTenantId(tenant).setItemId(item).build()).getStock();
    }

    private static GetSeatMapResponse seatMap(String tenant) {
        return api().getSeatMap(GetSeatMapRequest.newBuilder().setTenantId(tenant).setItemId("gala").setCompact(true)
                .build());
    }

    @Test
    void aMoveWhosePauseWouldPassItsBudget_rollsBack_andTheTenantKeepsSellingOnTheSource() throws Exception {
        String tenant = "slow-co";
        List<Sale.Item> items = createItems(tenant, 10, 20);
        Sale before = sale(Sale.buyers(items, 50, "slow"), 0).start();
        assertThat(before.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).isTrue();
        List<Hold> holds = before.results().stream().map(Sale.Result::hold).toList();

        Move started = startMove(tenant, "big", 500);
        Move done = MoveChecks.awaitFinished(admin, started.getMoveId(), Duration.ofSeconds(60));

        assertThat(done.getStep()).isEqualTo(MoveStep.ABORTED);
        assertThat(done.getReason()).contains("over the pause budget of 500 ms");
        ClusterClients.awaitUntil(() -> {
            try {
                return api().reserve(ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-0").setQuantity(1)
                        .setIdempotencyKey("after-abort").setBuyerId("late").setRegion("local").build())
                        .getOutcome() == ReserveOutcome.RESERVED;
            } catch (RuntimeException e) {
                return false; // the router's topology may lag the roll-back for a moment
            }
        }, "the tenant sells on the source again");
        MoveChecks.assertItemsOnlyIn(clients, platform, tenant, "shared", 10);
        MoveChecks.assertHoldsAsTheyWere(api(), holds);
        var s = api().getStock(GetStockRequest.newBuilder().setTenantId(tenant).setItemId("item-0").build()).getStock();
        assertThat(s.getHeld()).isEqualTo(6);
        MoveChecks.assertInvariants(clients, platform);
    }

    private static List<ReserveRequest> interleave(List<ReserveRequest> a, List<ReserveRequest> b) {
        List<ReserveRequest> out = new ArrayList<>(a.size() + b.size());
        int i = 0;
        int j = 0;
        while (i < a.size() || j < b.size()) {
            if (i < a.size()) {
                out.add(a.get(i++));
            }
            for (int k = 0; k < 2 && j < b.size(); k++) {
                out.add(b.get(j++));
            }
        }
        return out;
    }

    /** Waits (bounded) until the move has recorded {@code step} or a later one forward; fails on a roll-back. */
    private static void awaitStep(String moveId, MoveStep step) throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(120)).toNanos();
        while (true) {
            MoveStep now = admin.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .getMove(GetMoveRequest.newBuilder().setMoveId(moveId).build()).getStep();
            if (now == MoveStep.ABORTING || now == MoveStep.ABORTED) {
                throw new AssertionError("move " + moveId + " rolled back");
            }
            if (now.getNumber() >= step.getNumber()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("move " + moveId + " is still " + now + ", not " + step);
            }
            Thread.sleep(20);
        }
    }

    /** The real time plus whatever the test added: durations stay real, a jump is instant. */
    static final class JumpClock implements InstantSource {
        private final AtomicLong offsetMs = new AtomicLong();

        void jump(Duration d) {
            offsetMs.addAndGet(d.toMillis());
        }

        @Override
        public Instant instant() {
            return Instant.now().plusMillis(offsetMs.get());
        }
    }
}
