package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.CompleteTransferRequest;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListTransfersRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.api.shard.v1.TransferState;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.shard.retention.Retention;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention on a real shard node (docs/operations.md, "Retention"): what it deletes and keeps, in
 * batches of at most {@code retention-batch-max}; the invariant check still exact afterwards (the
 * retired totals count what was deleted); a key whose hold was deleted naming a new Reserve; tenants
 * a move works on left alone; a move copying the retired totals; a sale going on untouched while
 * passes run. Nothing waits for real time: the rows are aged by hand, by SQL ({@code ended_at},
 * {@code done_at} eight days back against the default seven-day windows), and the passes are run
 * with {@link Retention#runOnce} (the node's own schedule is a day, so it never fires in a test).
 * Each test has a node on a database of its own.
 */
class RetentionIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String AGED = "interval '8 days'";
    private final List<ShardNodeHarness> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        nodes.forEach(ShardNodeHarness::close);
        nodes.clear();
    }

    private ShardNodeHarness node(String name, int batchMax, int batchesPerRunMax) throws Exception {
        Map<String, Object> settings = new HashMap<>();
        settings.put("lastunit.shard.id", name);
        settings.put("lastunit.shard.retention-interval-ms", Duration.ofDays(1).toMillis());
        settings.put("lastunit.shard.retention-batch-max", batchMax);
        settings.put("lastunit.shard.retention-batches-per-run-max", batchesPerRunMax);
        settings.put("lastunit.shard.retention-batch-pause-ms", 0);
        ShardNodeHarness h = new ShardNodeHarness(PG, PG.newDatabase(name), settings).start();
        nodes.add(h);
        return h;
    }

    private static void createItem(ShardNodeHarness s, String tenant, String item, long total, int perBuyerLimit) {
        s.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(tenant).setItemId(item).setTotal(total)
                .setPerBuyerLimit(perBuyerLimit).setHomeRegion("local").setBucketCount(2).build());
    }

    private static ReserveRequest reserve(String tenant, String item, String key, String buyer) {
        return ReserveRequest.newBuilder().setTenantId(tenant).setItemId(item).setQuantity(1).setIdempotencyKey(key)
                .setBuyerId(buyer).setRegion("local").build();
    }

    /** {@code n} one-unit holds of {@code item} (buyer i % 10), the first {@code sold} confirmed, the next {@code released} released. */
    private static List<Hold> sell(ShardNodeHarness s, String tenant, String item, String prefix, int n, int sold,
                                   int released) {
        List<Hold> holds = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ReserveResponse r = s.blocking().reserve(reserve(tenant, item, prefix + i, "buyer-" + (i % 10)));
            assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            Hold h = r.getHold();
            if (i < sold) {
                h = s.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(h.getHoldId()).setOrderRef("o-" + prefix + i)
                        .build()).getHold();
            } else if (i < sold + released) {
                h = s.blocking().release(ReleaseRequest.newBuilder().setHoldId(h.getHoldId()).build()).getHold();
            }
            holds.add(h);
        }
        return holds;
    }

    /** Ends of the item's ended holds moved eight days back: past the seven-day window, by the database's clock. */
    private static int age(ShardNodeHarness s, String tenant, String item) throws Exception {
        return update(s, "UPDATE holds SET created_at = created_at - " + AGED + ", expires_at = expires_at - " + AGED
                + ", ended_at = ended_at - " + AGED + " WHERE tenant_id = ? AND item_id = ? AND ended_at IS NOT NULL",
                tenant, item);
    }

    private static int update(ShardNodeHarness s, String sql, String... params) throws Exception {
        try (Connection c = s.node().dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setString(i + 1, params[i]);
            }
            int n = ps.executeUpdate();
            c.commit();
            return n;
        }
    }

    private static long count(ShardNodeHarness s, String sql, String... params) throws Exception {
        try (Connection c = s.node().dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setString(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long v = rs.getLong(1);
                c.commit();
                return v;
            }
        }
    }

    private static Stock stock(ShardNodeHarness s, String tenant, String item) {
        return s.blocking().getStock(GetStockRequest.newBuilder().setTenantId(tenant).setItemId(item).build()).getStock();
    }

    private static ShardServiceGrpc.ShardServiceBlockingStub api(ShardNodeHarness s) {
        return ShardServiceGrpc.newBlockingStub(s.channel()).withDeadlineAfter(ShardNodeHarness.deadlineMillis(),
                TimeUnit.MILLISECONDS);
    }

    private static void assertInvariants(ShardNodeHarness s) {
        assertThat(s.checkInvariants().getDriftsList()).as("drifts").isEmpty();
    }

    @Test
    void endedHoldsPastTheWindow_areDeletedInBatchesOfAtMostBatchMax_andLiveAndRecentOnesStay() throws Exception {
        ShardNodeHarness s = node("batches", 100, 2);
        createItem(s, "acme", "shoe", 1_000, 30); // limited: its buyers' usage counts the retired sold units
        createItem(s, "acme", "hat", 100, 0);
        sell(s, "acme", "shoe", "old-", 250, 200, 30); // 200 sold, 30 released, 20 still held
        sell(s, "acme", "hat", "new-", 10, 10, 0);     // sold just now: inside the window
        assertThat(age(s, "acme", "shoe")).isEqualTo(230);
        Stock before = stock(s, "acme", "shoe");

        Retention.Pass first = s.node().retention().runOnce();
        assertThat(first.holds()).as("two batches of at most 100").isEqualTo(200);
        assertThat(first.batches()).isEqualTo(2);
        assertThat(first.more()).as("the budget ran out with holds still due").isTrue();
        assertInvariants(s);
        Retention.Pass second = s.node().retention().runOnce();
        assertThat(second.holds()).isEqualTo(30);
        assertThat(second.batches()).isEqualTo(1);
        assertThat(second.more()).isFalse();
        assertThat(s.node().retention().runOnce().holds()).as("nothing left that is due").isZero();

        assertThat(count(s, "SELECT count(*) FROM holds WHERE item_id = 'shoe' AND state = 'HELD'")).isEqualTo(20);
        assertThat(count(s, "SELECT count(*) FROM holds WHERE item_id = 'shoe' AND state <> 'HELD'")).isZero();
        assertThat(count(s, "SELECT count(*) FROM holds WHERE item_id = 'hat'")).as("ended inside the window").isEqualTo(10);
        assertThat(count(s, "SELECT sum(sold_qty) FROM retired_hold_totals WHERE item_id = 'shoe'")).isEqualTo(200);
        assertThat(count(s, "SELECT sum(holds) FROM retired_hold_totals WHERE item_id = 'shoe'")).isEqualTo(230);
        assertThat(count(s, "SELECT sum(qty) FROM retired_usage_totals WHERE item_id = 'shoe'")).isEqualTo(200);
        assertThat(count(s, "SELECT count(*) FROM retired_usage_totals WHERE item_id = 'hat'")).as("not limited").isZero();
        assertThat(count(s, "SELECT count(*) FROM outbox WHERE item_id = 'shoe'")).as("the outbox stays")
                .isEqualTo(1 + 250 + 230);
        assertThat(stock(s, "acme", "shoe")).isEqualTo(before);
        assertInvariants(s);
        Retention.Stats stats = s.node().retention().stats();
        assertThat(stats.holdsDeleted()).isEqualTo(230);
        assertThat(stats.soldUnitsRetired()).isEqualTo(200);
        assertThat(stats.batches()).isEqualTo(3);
        assertThat(stats.runs()).isEqualTo(3);
        // The per-buyer limit still counts the sold units: buyer-0 bought 20 of its 30 and holds 2 more.
        for (int i = 0; i < 8; i++) {
            assertThat(s.blocking().reserve(reserve("acme", "shoe", "more-" + i, "buyer-0")).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
        }
        assertThat(s.blocking().reserve(reserve("acme", "shoe", "more-8", "buyer-0")).getOutcome())
                .isEqualTo(ReserveOutcome.LIMIT_EXCEEDED);
        assertInvariants(s);
    }

    @Test
    void aKeyWhoseHoldWasDeleted_namesANewReserve_evenInALaneThatKnowsTheKey() throws Exception {
        ShardNodeHarness s = node("keys", 1_000, 10);
        createItem(s, "acme", "lamp", 10, 0);
        Hold first = sell(s, "acme", "lamp", "k-", 1, 1, 0).get(0);
        ReserveRequest again = reserve("acme", "lamp", "k-0", "buyer-0");
        assertThat(s.blocking().reserve(again).getHold().getHoldId()).as("a retry inside the window: the same hold")
                .isEqualTo(first.getHoldId());
        age(s, "acme", "lamp");
        assertThat(s.node().retention().runOnce().holds()).isEqualTo(1);

        StatusRuntimeException gone = catchThrowableOfType(StatusRuntimeException.class, () -> s.blocking().getHold(
                GetHoldRequest.newBuilder().setHoldId(first.getHoldId()).build()));
        assertThat(gone.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
        assertThat(GrpcErrors.errorInfo(gone).orElseThrow().getReason()).isEqualTo("HOLD_NOT_FOUND");
        // The lane's cached bucket still lists the key (it was placed there): the row is gone, so it is new.
        ReserveResponse reused = s.blocking().reserve(again);
        assertThat(reused.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(reused.getHold().getHoldId()).isNotEqualTo(first.getHoldId());
        assertThat(reused.getHold().getState()).isEqualTo(HoldState.HELD);
        assertThat(s.blocking().reserve(again).getHold().getHoldId()).isEqualTo(reused.getHold().getHoldId());
        Stock stock = stock(s, "acme", "lamp");
        assertThat(stock.getSold()).isEqualTo(1);
        assertThat(stock.getHeld()).isEqualTo(1);
        assertThat(stock.getAvailable()).isEqualTo(8);
        assertInvariants(s);
    }

    @Test
    void doneOutRecordsPastTheWindow_areDeleted_pendingOnesAndInRecordsStay() throws Exception {
        ShardNodeHarness s = node("transfers", 1_000, 10);
        createItem(s, "acme", "desk", 100, 0);
        for (String id : List.of("out-done-1", "out-done-2", "out-pending")) {
            api(s).transferOut(TransferOutRequest.newBuilder().setTransferId(id).setTenantId("acme").setItemId("desk")
                    .setPeerShardId("elsewhere").setMaxQuantity(10).setMinQuantity(1).build());
        }
        for (String id : List.of("out-done-1", "out-done-2")) {
            api(s).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId(id).build());
        }
        api(s).transferIn(TransferInRequest.newBuilder().setTransferId("in-1").setTenantId("acme").setItemId("desk")
                .setPeerShardId("elsewhere").setQuantity(5).build());
        assertThat(update(s, "UPDATE transfers SET created_at = created_at - " + AGED + ", done_at = done_at - " + AGED
                + " WHERE tenant_id = ?", "acme")).isEqualTo(4);
        ItemLevel before = api(s).listLevels(ListLevelsRequest.newBuilder().setTenantId("acme").build()).getItems(0);

        Retention.Pass pass = s.node().retention().runOnce();
        assertThat(pass.transfers()).isEqualTo(2);
        assertThat(pass.units().get(io.lastunit.shard.retention.RetiredRows.Kind.TRANSFERS)).isEqualTo(20);
        List<Transfer> left = api(s).listTransfers(ListTransfersRequest.newBuilder().addTransferIds("out-done-1")
                .addTransferIds("out-done-2").addTransferIds("out-pending").addTransferIds("in-1").build())
                .getTransfersList();
        assertThat(left).extracting(Transfer::getTransferId).containsExactlyInAnyOrder("out-pending", "in-1");
        assertThat(left).filteredOn(t -> t.getTransferId().equals("out-pending")).extracting(Transfer::getState)
                .containsExactly(TransferState.PENDING);
        assertThat(count(s, "SELECT out_qty FROM retired_transfer_totals WHERE item_id = 'desk'")).isEqualTo(20);
        ItemLevel after = api(s).listLevels(ListLevelsRequest.newBuilder().setTenantId("acme").build()).getItems(0);
        assertThat(after).as("the level reports the retired units as transferred out").isEqualTo(before);
        assertThat(after.getTransferredOut()).isEqualTo(30);
        assertInvariants(s);
        assertThat(s.node().retention().runOnce().transfers()).isZero();
    }

    @Test
    void aTenantWithAFencedItem_orOneThisNodeServedAMoveCallFor_isLeftAlone() throws Exception {
        ShardNodeHarness s = node("fenced", 1_000, 10);
        MoveCalls moves = new MoveCalls(s);
        for (String tenant : List.of("frozen-co", "exported-co", "plain-co")) {
            createItem(s, tenant, "cup", 10, 0);
            sell(s, tenant, "cup", "k-", 3, 3, 0);
            age(s, tenant, "cup");
        }
        // A fenced item, as the states the move's calls set look here (set by hand: no move call is made).
        update(s, "UPDATE items SET state = 'FROZEN' WHERE tenant_id = ?", "frozen-co");
        // A move's export of an active tenant (its first pass): the node notes the tenant.
        assertThat(moves.exportAll("exported-co").counts().getHolds()).isEqualTo(3);

        Retention.Pass pass = s.node().retention().runOnce();
        assertThat(pass.holds()).as("plain-co's").isEqualTo(3);
        assertThat(pass.skipped()).isEqualTo(2);
        assertThat(count(s, "SELECT count(*) FROM holds WHERE tenant_id = 'frozen-co'")).isEqualTo(3);
        assertThat(count(s, "SELECT count(*) FROM holds WHERE tenant_id = 'exported-co'")).isEqualTo(3);
        assertThat(count(s, "SELECT count(*) FROM holds WHERE tenant_id = 'plain-co'")).isZero();

        update(s, "UPDATE items SET state = 'ACTIVE' WHERE tenant_id = ?", "frozen-co");
        assertThat(s.node().retention().runOnce().holds()).as("served again, no move call: retired").isEqualTo(3);
        assertThat(count(s, "SELECT count(*) FROM holds WHERE tenant_id = 'exported-co'")).as("an hour after the call")
                .isEqualTo(3);
        assertInvariants(s);
    }

    @Test
    void aMove_copiesTheRetiredTotals_andTheTargetsInvariantsAndSummariesAgree() throws Exception {
        ShardNodeHarness from = node("move-from", 1_000, 10);
        ShardNodeHarness to = node("move-to", 1_000, 10);
        createItem(from, "acme", "bag", 100, 20);
        sell(from, "acme", "bag", "old-", 40, 30, 5);
        age(from, "acme", "bag");
        sell(from, "acme", "bag", "new-", 10, 4, 1);
        api(from).transferOut(TransferOutRequest.newBuilder().setTransferId("t-1").setTenantId("acme").setItemId("bag")
                .setPeerShardId("elsewhere").setMaxQuantity(7).setMinQuantity(1).build());
        api(from).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId("t-1").build());
        update(from, "UPDATE transfers SET created_at = created_at - " + AGED + ", done_at = done_at - " + AGED
                + " WHERE tenant_id = ?", "acme");
        Retention.Pass pass = from.node().retention().runOnce();
        assertThat(pass.holds()).isEqualTo(35);
        assertThat(pass.transfers()).isEqualTo(1);
        assertInvariants(from);

        MoveCalls source = new MoveCalls(from);
        MoveCalls target = new MoveCalls(to);
        source.freeze("acme");
        MoveCalls.Export all = source.exportAll("acme");
        long retiredRows = count(from, "SELECT (SELECT count(*) FROM retired_hold_totals) + (SELECT count(*) FROM"
                + " retired_usage_totals) + (SELECT count(*) FROM retired_transfer_totals)");
        assertThat(retiredRows).as("per bucket, per buyer (10), per item").isGreaterThanOrEqualTo(1 + 10 + 1);
        assertThat(all.counts().getRetired()).isEqualTo(retiredRows);
        target.importAll("acme", all);
        assertThat(target.rows("acme")).isEqualTo(source.rows("acme"));
        TenantSummary a = source.summarize("acme");
        TenantSummary b = target.summarize("acme");
        assertThat(b.getItems(0).toBuilder().clearState().build()).isEqualTo(a.getItems(0).toBuilder().clearState().build());
        assertThat(a.getItems(0).getSold()).isEqualTo(34);
        assertThat(a.getItems(0).getBucketsList().stream().mapToLong(f -> f.getSoldUnits()).sum())
                .as("the SOLD units of the stored and the retired holds").isEqualTo(34);
        assertThat(a.getItems(0).getTransferredOut()).isEqualTo(7);
        // The settled and recent parts of a cut still add up to the whole: the totals are settled.
        long cut = all.cutMicros();
        TenantSummary settled = source.summarize("acme", SummaryPart.SUMMARY_PART_SETTLED, cut);
        TenantSummary recent = source.summarize("acme", SummaryPart.SUMMARY_PART_RECENT, cut);
        assertThat(settled.getItems(0).getTransferredOut() + recent.getItems(0).getTransferredOut()).isEqualTo(7);
        assertThat(settled.getItems(0).getBucketsList().stream().mapToLong(f -> f.getSoldUnits()).sum()
                + recent.getItems(0).getBucketsList().stream().mapToLong(f -> f.getSoldUnits()).sum()).isEqualTo(34);
        target.activate("acme");
        assertInvariants(to);
        assertThat(stock(to, "acme", "bag").getSold()).isEqualTo(34);
        // A delta by index after the copy exports no retired totals: they cannot change while a move runs.
        assertThat(source.exportSince("acme", all).counts().getRetired()).isZero();
    }

    @Test
    void passesWhileASaleRuns_deleteTheBacklog_andEveryCountOfTheSaleIsExact() throws Exception {
        ShardNodeHarness s = node("sale", 100, 5);
        int backlog = 3_000;
        int buyers = 3_000;
        long total = 2_000;
        s.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("old").setTotal(backlog)
                .setHomeRegion("local").setBucketCount(4).build());
        s.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("hot").setTotal(total)
                .setHomeRegion("local").setBucketCount(4).build());
        confirmAll(s, "old", "old-", backlog);
        age(s, "acme", "old");

        AtomicBoolean saleDone = new AtomicBoolean();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        long[] deleted = {0};
        Thread passes = new Thread(() -> {
            long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(120)).toNanos();
            try {
                for (int i = 0; i < 10_000 && System.nanoTime() < deadline; i++) {
                    Retention.Pass p = s.node().retention().runOnce();
                    deleted[0] += p.holds();
                    if (saleDone.get() && !p.more() && deleted[0] >= backlog) {
                        return;
                    }
                    if (p.holds() == 0) {
                        Thread.sleep(10); // nothing due now: no need to ask again at once
                    }
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "test-retention-passes");
        passes.start();
        long sold;
        try {
            sold = confirmAll(s, "hot", "buyer-", buyers);
        } finally {
            saleDone.set(true);
            passes.join(TestTimeouts.scaled(Duration.ofSeconds(150)).toMillis());
        }
        assertThat(failed.get()).isNull();
        assertThat(passes.isAlive()).isFalse();
        assertThat(deleted[0]).isEqualTo(backlog);

        Stock hot = stock(s, "acme", "hot");
        assertThat(sold).isPositive().isLessThanOrEqualTo(total);
        assertThat(hot.getSold()).isEqualTo(sold);
        assertThat(hot.getHeld()).isZero();
        assertThat(hot.getSold() + hot.getAvailable()).isEqualTo(total);
        assertThat(count(s, "SELECT count(*) FROM holds WHERE item_id = 'hot' AND state = 'SOLD'")).isEqualTo(sold);
        Stock old = stock(s, "acme", "old");
        assertThat(old.getSold()).isEqualTo(backlog);
        assertThat(count(s, "SELECT count(*) FROM holds WHERE item_id = 'old'")).isZero();
        assertThat(count(s, "SELECT sum(sold_qty) FROM retired_hold_totals WHERE item_id = 'old'")).isEqualTo(backlog);
        assertInvariants(s);
    }

    /**
     * {@code n} buyers each Reserve one unit of {@code item} through the lanes, up to 256 in flight,
     * and confirm what they got; answers the units sold (the rest were SOLD_OUT).
     */
    private static long confirmAll(ShardNodeHarness s, String item, String prefix, int n) throws Exception {
        long sold = 0;
        long waitMs = TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis();
        for (int from = 0; from < n; from += 256) {
            List<CompletableFuture<ReserveResponse>> reserves = new ArrayList<>();
            for (int i = from; i < Math.min(n, from + 256); i++) {
                reserves.add(s.node().engine().reserve(reserve("acme", item, prefix + i, prefix + i)));
            }
            List<CompletableFuture<Hold>> confirms = new ArrayList<>();
            for (CompletableFuture<ReserveResponse> f : reserves) {
                ReserveResponse r = f.get(waitMs, TimeUnit.MILLISECONDS);
                if (r.getOutcome() == ReserveOutcome.RESERVED) {
                    confirms.add(s.node().engine().confirm(HoldId.decode(r.getHold().getHoldId(), "hold_id"),
                            "order-" + r.getHold().getHoldId()));
                } else {
                    assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
                }
            }
            for (CompletableFuture<Hold> f : confirms) {
                assertThat(f.get(waitMs, TimeUnit.MILLISECONDS).getState()).isEqualTo(HoldState.SOLD);
                sold++;
            }
        }
        return sold;
    }
}
