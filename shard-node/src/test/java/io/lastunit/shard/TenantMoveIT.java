package io.lastunit.shard;

import static io.lastunit.shard.MoveCalls.refused;
import static io.lastunit.shard.MoveCalls.reserve;
import static io.lastunit.shard.MoveCalls.tenantMoving;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Context;
import io.grpc.Status;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.SeatMode;
import io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.ClaimKeyRequest;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.ExportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantRequest;
import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.shard.move.TenantTable;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shard's side of a tenant move on two real shard nodes, each on its own PostgreSQL database:
 * exports from the source imported into the target rebuild the tenant's rows exactly, a delta
 * export carries exactly what was written since, imports repeat harmlessly and never overwrite
 * what a shard serves, fenced items refuse every change, activation serves the copy (its holds
 * confirm, retry and expire as on the source), and a drop deletes only the state it names. Each
 * test works on a tenant of its own. The background sweepers are slowed to an hour: nothing
 * expires unless a test asks the sweeper to look.
 */
class TenantMoveIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final Map<String, Object> SETTINGS = Map.of("lastunit.shard.sweep-interval-ms", 3_600_000,
            "lastunit.shard.lanes", 2);

    private static ShardNodeHarness source;
    private static ShardNodeHarness target;
    private static MoveCalls from;
    private static MoveCalls to;

    @BeforeAll
    static void startShards() throws Exception {
        source = new ShardNodeHarness(PG, with("source")).start();
        target = new ShardNodeHarness(PG, PG.newDatabase("target"), with("target")).start();
        from = new MoveCalls(source);
        to = new MoveCalls(target);
    }

    private static Map<String, Object> with(String id) {
        Map<String, Object> m = new HashMap<>(SETTINGS);
        m.put("lastunit.shard.id", id);
        return m;
    }

    @AfterAll
    static void stopShards() {
        if (target != null) {
            target.close();
        }
        if (source != null) {
            source.close();
        }
    }

    // ------------------------------------------------------------------ helpers

    private static void createItem(ShardNodeHarness shard, String tenant, String item, long total, int buckets,
                                   int perBuyerLimit) {
        shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(tenant).setItemId(item)
                .setTotal(total).setBucketCount(buckets).setPerBuyerLimit(perBuyerLimit).setHomeRegion("local")
                .setHoldTtlMs(600_000).build());
    }

    private static Hold hold(ShardNodeHarness shard, String tenant, String item, String key, int qty) {
        ReserveResponse r = shard.blocking().reserve(reserve(tenant, item, key, qty));
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        return r.getHold();
    }

    private static Stock stock(ShardNodeHarness shard, String tenant, String item) {
        return shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId(tenant).setItemId(item).build())
                .getStock();
    }

    /** Items of several buckets, a capped item with buyer usage, every hold state, a restock, both transfer records. */
    private static List<Hold> seed(String tenant) {
        createItem(source, tenant, "multi", 400, 4, 0);
        createItem(source, tenant, "capped", 50, 1, 5);
        createItem(source, tenant, "plain", 20, 1, 0);
        List<Hold> holds = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            holds.add(hold(source, tenant, "multi", "m" + i, 1 + i % 3));
        }
        for (int i = 0; i < 10; i++) {
            holds.add(source.blocking().reserve(reserve(tenant, "capped", "c" + i, 1).toBuilder()
                    .setBuyerId("buyer-" + (i % 4)).build()).getHold());
        }
        for (int i = 0; i < 5; i++) {
            holds.add(hold(source, tenant, "plain", "p" + i, 1));
        }
        source.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(holds.get(0).getHoldId()).setOrderRef("o0").build());
        source.blocking().release(ReleaseRequest.newBuilder().setHoldId(holds.get(1).getHoldId()).build());
        source.blocking().extend(ExtendRequest.newBuilder().setHoldId(holds.get(2).getHoldId()).build());
        source.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(holds.get(30).getHoldId()).setOrderRef("o1").build());
        source.blocking().release(ReleaseRequest.newBuilder().setHoldId(holds.get(31).getHoldId()).build());
        source.blocking().restock(RestockRequest.newBuilder().setTenantId(tenant).setItemId("plain").setQuantity(5)
                .setRestockId("r1").build());
        from.stub().transferOut(TransferOutRequest.newBuilder().setTransferId(tenant + "-out").setTenantId(tenant)
                .setItemId("plain").setPeerShardId("elsewhere").setMaxQuantity(3).setMinQuantity(1).build());
        from.stub().transferIn(TransferInRequest.newBuilder().setTransferId(tenant + "-in").setTenantId(tenant)
                .setItemId("multi").setPeerShardId("elsewhere").setQuantity(7).build());
        return holds;
    }

    /** The summary's items without what differs by design between a source and its copy: the state. */
    private static List<ItemSummary> figures(TenantSummary s) {
        List<ItemSummary> items = new ArrayList<>();
        for (ItemSummary i : s.getItemsList()) {
            items.add(i.toBuilder().clearState().build());
        }
        return items;
    }

    private static long rows(Map<String, List<String>> rows) {
        return rows.values().stream().mapToLong(List::size).sum();
    }

    private static String holdRow(MoveCalls shard, String holdId, String columns) throws Exception {
        return shard.query("SELECT " + columns + " FROM holds WHERE hold_id = ?::uuid", holdId).get(0);
    }

    // ------------------------------------------------------------------ copies

    @Test
    void exportAll_importedIntoAnotherShard_rebuildsEveryRow_andTheSummariesAgree() throws Exception {
        String tenant = "t-copy";
        List<Hold> holds = seed(tenant);

        MoveCalls.Export export = from.export(tenant, "", 7); // small chunks: many of them, tables split across
        Map<String, List<String>> sourceRows = from.rows(tenant);
        assertThat(export.chunks()).hasSizeGreaterThan(5);
        assertThat(export.counts()).isEqualTo(MoveCounts.newBuilder().setItems(3).setBuckets(6).setHolds(45)
                .setUsage(4).setTransfers(2).setRestocks(1).build());
        assertThat(export.rowCount()).isEqualTo(rows(sourceRows));
        assertThat(export.chunks()).allSatisfy(c -> assertThat(c.getTablesList().stream()
                .mapToInt(t -> t.getRowsCount()).sum()).isLessThanOrEqualTo(7));

        MoveCounts imported = to.importAll(tenant, export);
        assertThat(imported).isEqualTo(export.counts());
        assertThat(to.rows(tenant)).isEqualTo(sourceRows);
        assertThat(to.query("SELECT DISTINCT state FROM items WHERE tenant_id = ?", tenant)).containsExactly("IMPORTING");
        TenantSummary there = to.summarize(tenant);
        assertThat(figures(there)).isEqualTo(figures(from.summarize(tenant)));
        assertThat(there.getItemsList()).extracting(ItemSummary::getState).containsOnly("IMPORTING");
        assertThat(there.getShardId()).isEqualTo("target");
        ItemSummary multi = there.getItems(1);
        assertThat(multi.getItemId()).isEqualTo("multi");
        assertThat(multi.getTransferredIn()).isEqualTo(7);
        assertThat(multi.getHoldsByStateMap()).containsEntry("SOLD", 1L).containsEntry("RELEASED", 1L)
                .containsEntry("HELD", 28L);
        // A hold's expiry, key and fingerprint are what the source stored, to the microsecond.
        for (Hold h : holds) {
            String id = HoldId.decode(h.getHoldId(), "hold_id").uuid().toString();
            String columns = "expires_at, idempotency_key, request_fingerprint, extended, state";
            assertThat(holdRow(to, id, "concat_ws('|', " + columns + ")"))
                    .isEqualTo(holdRow(from, id, "concat_ws('|', " + columns + ")"));
        }
        assertThat(target.checkInvariants().getDriftsList()).isEmpty();

        // Imported again: the same rows written, nothing changes.
        assertThat(to.importAll(tenant, export)).isEqualTo(export.counts());
        assertThat(to.rows(tenant)).isEqualTo(sourceRows);
        assertThat(figures(to.summarize(tenant))).isEqualTo(figures(from.summarize(tenant)));
    }

    @Test
    void deltaExport_carriesExactlyTheRowsWrittenSince_andNothingWhenNothingWas() throws Exception {
        String tenant = "t-delta";
        createItem(source, tenant, "d", 100, 1, 0);
        List<Hold> holds = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            holds.add(hold(source, tenant, "d", "h" + i, 1));
        }
        MoveCalls.Export first = from.exportAll(tenant);
        assertThat(first.counts()).isEqualTo(MoveCounts.newBuilder().setItems(1).setBuckets(1).setHolds(10).build());

        Set<String> changed = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            changed.add(uuid(hold(source, tenant, "d", "n" + i, 2)));
        }
        source.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(holds.get(0).getHoldId()).setOrderRef("o").build());
        source.blocking().release(ReleaseRequest.newBuilder().setHoldId(holds.get(1).getHoldId()).build());
        assertThat(from.update("UPDATE holds SET expires_at = now() - interval '1 second' WHERE hold_id = ?::uuid",
                uuid(holds.get(2)))).isEqualTo(1);
        assertThat(source.node().engine().sweep(tenant, "d", 0).get(ShardNodeHarness.deadlineMillis(),
                TimeUnit.MILLISECONDS)).isEqualTo(1);
        changed.add(uuid(holds.get(0)));
        changed.add(uuid(holds.get(1)));
        changed.add(uuid(holds.get(2)));

        MoveCalls.Export delta = from.export(tenant, first.snapshot(), 0);
        assertThat(delta.counts()).isEqualTo(MoveCounts.newBuilder().setBuckets(1).setHolds(6).build());
        assertThat(MoveCalls.holdIds(delta)).isEqualTo(changed);
        assertThat(delta.snapshot()).isNotEqualTo(first.snapshot());

        MoveCalls.Export none = from.export(tenant, delta.snapshot(), 0);
        assertThat(none.counts()).isEqualTo(MoveCounts.getDefaultInstance());
        assertThat(none.chunks()).hasSize(1);

        // The first export and the delta, applied in order, are the source's rows now.
        to.importAll(tenant, first);
        to.importAll(tenant, delta);
        assertThat(to.rows(tenant)).isEqualTo(from.rows(tenant));
        assertThat(figures(to.summarize(tenant))).isEqualTo(figures(from.summarize(tenant)));
    }

    @Test
    void deltaExport_carriesARowWrittenByATransactionStillRunningAtTheEarlierSnapshot() throws Exception {
        String tenant = "t-running";
        createItem(source, tenant, "r", 100, 1, 0);
        Hold h = hold(source, tenant, "r", "k0", 1);
        // A writer that has its transaction id, and keeps it open, while the first export takes its
        // snapshot: that snapshot lists it as running, and its row must come with the next delta.
        try (java.sql.Connection writer = source.node().dataSource().getConnection()) {
            writer.setAutoCommit(false);
            try (var ps = writer.prepareStatement("UPDATE holds SET expires_at = expires_at + interval '1 minute'"
                    + " WHERE hold_id = ?::uuid")) {
                ps.setString(1, uuid(h));
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            // A later transaction commits, so the snapshot's xmax passes the writer's id and lists it
            // as running (ids at or past xmax are running without being listed).
            hold(source, tenant, "r", "k1", 1);
            MoveCalls.Export first = from.exportAll(tenant);
            assertThat(first.snapshot()).as("the writer runs at the first snapshot")
                    .matches("\\d+:\\d+:\\d+(,\\d+)*");
            MoveCalls.Export before = from.export(tenant, first.snapshot(), 0);
            assertThat(MoveCalls.holdIds(before)).as("not committed yet, and k1 was in the first").isEmpty();
            writer.commit();
            MoveCalls.Export delta = from.export(tenant, first.snapshot(), 0);
            assertThat(MoveCalls.holdIds(delta)).containsExactly(uuid(h));
        }
    }

    /** Rows of one table of an export as a sorted list of their canonical JSON (jsonb's text). */
    private static List<String> canonical(MoveCalls shard, MoveCalls.Export export, String table) throws Exception {
        List<String> out = new ArrayList<>();
        for (var r : export.rows(table)) {
            out.add(shard.query("SELECT ?::jsonb::text", r.getJson()).get(0));
        }
        out.sort(null);
        return out;
    }

    /**
     * A tenant with a long history (ended holds an hour old) and every kind of change since a first
     * export: new holds, a confirm, releases (usage given back), an expiry, an extension, a transfer
     * completed and one received, a restock, and a writer whose transaction began before the export's
     * snapshot and ends a hold after it. Returns the first export.
     */
    private static MoveCalls.Export historyAndChanges(String tenant) throws Exception {
        List<Hold> holds = seed(tenant);
        assertThat(from.update("""
                INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                   request_fingerprint, state, created_at, expires_at, ended_at)
                SELECT gen_random_uuid(), ?, 'plain', 0, 'local', 1, 'old-' || n, 'old-' || n, 'f-' || n,
                       'RELEASED', now() - interval '2 hours', now() - interval '1 hour', now() - interval '1 hour'
                  FROM generate_series(1, 3000) AS n""", tenant)).isEqualTo(3_000);
        try (java.sql.Connection writer = source.node().dataSource().getConnection()) {
            writer.setAutoCommit(false);
            long writerStart;
            try (var ps = writer.prepareStatement("SELECT (extract(epoch FROM now()) * 1000000)::bigint");
                 var rs = ps.executeQuery()) {
                rs.next();
                writerStart = rs.getLong(1);
            }
            MoveCalls.Export first = from.exportAll(tenant);
            // The cut is before the writer's start, margin and all: it saw the writer running.
            assertThat(first.cutMicros() + io.lastunit.shard.move.ChangedRows.CUT_MARGIN_MICROS)
                    .isLessThanOrEqualTo(writerStart);
            // The writer ends a hold with its own now(), from before the snapshot, and commits after it
            // (with its bucket's counters, as a lane would; no lane touches "plain" again here).
            try (var ps = writer.prepareStatement("""
                    WITH h AS (UPDATE holds SET state = 'RELEASED', ended_at = now()
                                WHERE hold_id = ?::uuid AND state = 'HELD' RETURNING tenant_id, item_id, bucket_no, qty)
                    UPDATE buckets b SET held = b.held - h.qty, available = b.available + h.qty FROM h
                     WHERE b.tenant_id = h.tenant_id AND b.item_id = h.item_id AND b.bucket_no = h.bucket_no""")) {
                ps.setString(1, uuid(holds.get(40)));
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            writer.commit();

            hold(source, tenant, "multi", "later-0", 2);
            source.blocking().reserve(reserve(tenant, "capped", "later-c", 1).toBuilder().setBuyerId("buyer-9").build());
            source.blocking().reserve(reserve(tenant, "capped", "later-d", 1).toBuilder().setBuyerId("buyer-0").build());
            source.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(holds.get(3).getHoldId()).setOrderRef("o3")
                    .build());
            source.blocking().release(ReleaseRequest.newBuilder().setHoldId(holds.get(33).getHoldId()).build());
            source.blocking().extend(ExtendRequest.newBuilder().setHoldId(holds.get(4).getHoldId()).build());
            assertThat(from.update("UPDATE holds SET expires_at = now() - interval '1 second' WHERE hold_id = ?::uuid",
                    uuid(holds.get(5)))).isEqualTo(1);
            int bucket = Integer.parseInt(holdRow(from, uuid(holds.get(5)), "bucket_no"));
            assertThat(source.node().engine().sweep(tenant, "multi", bucket)
                    .get(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS)).isEqualTo(1);
            from.stub().completeTransfer(io.lastunit.api.shard.v1.CompleteTransferRequest.newBuilder()
                    .setTransferId(tenant + "-out").build());
            from.stub().transferIn(TransferInRequest.newBuilder().setTransferId(tenant + "-in2").setTenantId(tenant)
                    .setItemId("capped").setPeerShardId("elsewhere").setQuantity(2).build());
            source.blocking().restock(RestockRequest.newBuilder().setTenantId(tenant).setItemId("multi").setQuantity(3)
                    .setRestockId("r2").build());
            return first;
        }
    }

    @Test
    void deltaByIndex_carriesTheSameRowsAsReadingEveryRow_andNoneOfTheHistory() throws Exception {
        String tenant = "t-indexed";
        MoveCalls.Export first = historyAndChanges(tenant);

        MoveCalls.Export byIndex = from.exportSince(tenant, first);
        MoveCalls.Export byReadingAll = from.export(tenant, first.snapshot(), 0);
        for (String table : TenantTable.names()) {
            assertThat(canonical(from, byIndex, table)).as(table).isEqualTo(canonical(from, byReadingAll, table));
        }
        assertThat(byIndex.counts()).isEqualTo(byReadingAll.counts());
        // What changed: holds (5 new or ended by the lanes, the writer's, the expired one, the extended one and
        // 3 new), the usage of buyer-0, buyer-9 and the released capped hold's buyer, both transfer rows touched.
        assertThat(byIndex.counts().getHolds()).isEqualTo(8);
        assertThat(byIndex.counts().getUsage()).isEqualTo(3);
        assertThat(byIndex.counts().getTransfers()).isEqualTo(2);
        assertThat(byIndex.counts().getRestocks()).isEqualTo(1);
        assertThat(MoveCalls.holdIds(byIndex)).noneMatch(id -> {
            try {
                return holdRow(from, id, "buyer_id").startsWith("old-");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        // Applied in order, the first export and the indexed delta are the source's rows now.
        to.importAll(tenant, first);
        to.importAll(tenant, byIndex);
        assertThat(to.rows(tenant)).isEqualTo(from.rows(tenant));
        // And a delta by index since that one carries nothing.
        MoveCalls.Export none = from.exportSince(tenant, from.exportSince(tenant, byIndex));
        assertThat(none.counts()).isEqualTo(MoveCounts.getDefaultInstance());
    }

    @Test
    void summaryParts_settledAndRecentAddUpToAll_andRecentCarriesTheRowsThatCanChange() throws Exception {
        String tenant = "t-parts";
        MoveCalls.Export first = historyAndChanges(tenant);
        long cut = first.cutMicros();

        TenantSummary all = from.summarize(tenant);
        TenantSummary settled = from.summarize(tenant, SummaryPart.SUMMARY_PART_SETTLED, cut);
        TenantSummary recent = from.summarize(tenant, SummaryPart.SUMMARY_PART_RECENT, cut);
        assertThat(all.getItemsCount()).isEqualTo(3);
        for (int i = 0; i < all.getItemsCount(); i++) {
            ItemSummary a = all.getItems(i);
            ItemSummary s = settled.getItems(i);
            ItemSummary r = recent.getItems(i);
            assertThat(s.getItemId()).isEqualTo(a.getItemId());
            assertThat(r.getItemId()).isEqualTo(a.getItemId());
            Map<String, Long> holds = new java.util.TreeMap<>(s.getHoldsByStateMap());
            r.getHoldsByStateMap().forEach((k, v) -> holds.merge(k, v, Long::sum));
            assertThat(holds).as(a.getItemId()).isEqualTo(new java.util.TreeMap<>(a.getHoldsByStateMap()));
            Map<String, Long> units = new java.util.TreeMap<>(s.getUnitsByStateMap());
            r.getUnitsByStateMap().forEach((k, v) -> units.merge(k, v, Long::sum));
            assertThat(units).as(a.getItemId()).isEqualTo(new java.util.TreeMap<>(a.getUnitsByStateMap()));
            assertThat(s.getHoldsByStateMap()).doesNotContainKey("HELD");
            assertThat(s.getTransferredIn() + r.getTransferredIn()).isEqualTo(a.getTransferredIn());
            assertThat(s.getTransferredOut() + r.getTransferredOut()).isEqualTo(a.getTransferredOut());
            assertThat(r.getTransfersPending()).isEqualTo(a.getTransfersPending());
            // Item and bucket rows and restocks are all in the recent part, none in the settled one.
            assertThat(r.toBuilder().clearHoldsByState().clearUnitsByState().clearTransferredIn().clearTransferredOut()
                    .clearUsageUnits().clearUsageBuyers().clearBuckets().build())
                    .isEqualTo(a.toBuilder().clearHoldsByState().clearUnitsByState().clearTransferredIn()
                            .clearTransferredOut().clearUsageUnits().clearUsageBuyers().clearBuckets().build());
            assertThat(s.getAllotment() + s.getRestocks() + s.getUsageUnits()).isZero();
            assertThat(a.getBucketsCount()).isEqualTo(a.getBucketCount());
            for (var b : a.getBucketsList()) {
                var rb = r.getBucketsList().stream().filter(x -> x.getBucketNo() == b.getBucketNo()).findFirst()
                        .orElseThrow();
                long settledSold = s.getBucketsList().stream().filter(x -> x.getBucketNo() == b.getBucketNo())
                        .mapToLong(x -> x.getSoldUnits()).sum();
                assertThat(rb.getRow()).isTrue();
                assertThat(rb.getHeldUnits()).isEqualTo(b.getHeldUnits()).isEqualTo(b.getHeld());
                assertThat(rb.getSoldUnits() + settledSold).isEqualTo(b.getSoldUnits()).isEqualTo(b.getSold());
            }
        }
        // The history is settled: the 3,000 old releases of "plain" are in the settled part only.
        assertThat(settled.getItems(2).getHoldsByStateMap()).containsEntry("RELEASED", 3_000L);
        assertThat(recent.getItems(2).getHoldsByStateOrDefault("RELEASED", 0)).isLessThan(3_000L);
        // The recent usage is that of the buyers of recent holds: of "capped", every buyer has one here.
        ItemSummary capped = recent.getItems(0);
        assertThat(capped.getItemId()).isEqualTo("capped");
        assertThat(capped.getUsageBuyers()).isEqualTo(from.count("""
                SELECT count(*) FROM buyer_usage u WHERE u.tenant_id = ? AND u.item_id = 'capped' AND EXISTS (
                    SELECT 1 FROM holds h WHERE h.tenant_id = u.tenant_id AND h.item_id = u.item_id
                       AND h.buyer_id = u.buyer_id AND (h.state = 'HELD' OR h.ended_at >= now() - interval '10 minutes'))""",
                tenant));
        assertThat(capped.getUsageUnits()).isEqualTo(all.getItems(0).getUsageUnits());
    }

    private static String uuid(Hold h) {
        return HoldId.decode(h.getHoldId(), "hold_id").uuid().toString();
    }

    @Test
    void importOverAnItemThisShardServes_isRefused_andWritesNothing() throws Exception {
        String tenant = "t-clash";
        createItem(source, tenant, "x", 10, 1, 0);
        createItem(source, tenant, "y", 10, 1, 0);
        hold(source, tenant, "x", "k", 1);
        hold(source, tenant, "y", "k", 1);
        createItem(target, tenant, "x", 3, 1, 0);
        MoveCalls.Export export = from.exportAll(tenant);
        Map<String, List<String>> before = to.rows(tenant);

        refused(() -> to.importAll(tenant, export), Status.Code.FAILED_PRECONDITION, Reason.TENANT_NOT_IMPORTABLE);
        assertThat(to.rows(tenant)).isEqualTo(before);

        to.freeze(tenant);
        refused(() -> to.importAll(tenant, export), Status.Code.FAILED_PRECONDITION, Reason.TENANT_NOT_IMPORTABLE);
        assertThat(to.rows(tenant)).isEqualTo(before);
        assertThat(to.query("SELECT state FROM items WHERE tenant_id = ?", tenant)).containsExactly("FROZEN");
    }

    @Test
    void rowsOfAnItemNotImportedFirst_areRefused() throws Exception {
        String tenant = "t-orphan";
        createItem(source, tenant, "o", 10, 1, 0);
        hold(source, tenant, "o", "k", 1);
        MoveCalls.Export export = from.exportAll(tenant);
        var holdsOnly = ImportTenantRequest.newBuilder().setTenantId(tenant)
                .setMoveId(MoveCalls.MOVE).setMoverToken(MoveCalls.TOKEN).addTables(TenantRows.newBuilder().setTable("holds")
                        .addAllRows(export.rows("holds"))).build();
        refused(() -> to.stub().importTenant(holdsOnly), Status.Code.FAILED_PRECONDITION, Reason.TENANT_NOT_IMPORTABLE);
        assertThat(rows(to.rows(tenant))).isZero();
    }

    @Test
    void anExportWaitsForItsCaller_inTheOneExportSlot_andACancelledOneStopsAndFreesIt() throws Exception {
        String tenant = "t-big";
        createItem(source, tenant, "big", 10, 1, 0);
        // 20,000 ended holds written straight into the table: some 8 MB of rows, far past what gRPC's
        // flow control lets a server send ahead of a caller that reads nothing.
        assertThat(from.update("""
                INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                   request_fingerprint, state, created_at, expires_at, ended_at)
                SELECT gen_random_uuid(), ?, 'big', 0, 'local', 1, 'buyer-' || n, 'key-' || n, 'fingerprint-' || n,
                       'RELEASED', now(), now(), now()
                  FROM generate_series(1, 20000) AS n""", tenant)).isEqualTo(20_000);
        Context.CancellableContext call = Context.current().withCancellation();
        Iterator<TenantChunk> slow = call.call(() -> from.stub().exportTenant(ExportTenantRequest.newBuilder()
                .setTenantId(tenant).setMoveId(MoveCalls.MOVE).setChunkRows(100).build()));
        assertThat(slow.next().getLast()).isFalse();

        // Its caller reads nothing more: the export waits for it and holds the node's one export slot.
        refused(() -> from.exportAll("t-copy"), Status.Code.RESOURCE_EXHAUSTED, Reason.QUEUE_FULL);
        call.cancel(null);
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).ignoreExceptions()
                .until(() -> from.exportAll(tenant).counts().getHolds() == 20_000);
    }

    // ------------------------------------------------------------------ fenced items

    @Test
    void frozenItems_refuseEveryChange_whileOtherTenantsSell_andUnfreezeSellsAgain() throws Exception {
        String tenant = "t-frz";
        createItem(source, tenant, "f", 10, 1, 0);
        createItem(source, "t-frz-other", "f", 10, 1, 0);
        Hold held = hold(source, tenant, "f", "k0", 1);

        var frozen = from.freeze(tenant);
        assertThat(frozen.getItems()).isEqualTo(1);
        assertThat(frozen.getShardId()).isEqualTo("source");
        assertThat(frozen.getCommittedAtMicros()).isPositive();
        assertFenced(source, tenant, "f", held);

        assertThat(from.update("UPDATE holds SET expires_at = now() - interval '1 second' WHERE hold_id = ?::uuid",
                uuid(held))).isEqualTo(1);
        assertThat(source.node().engine().sweep(tenant, "f", 0).get(ShardNodeHarness.deadlineMillis(),
                TimeUnit.MILLISECONDS)).as("a frozen item's due hold is not swept").isZero();
        assertThat(holdRow(from, uuid(held), "state")).isEqualTo("HELD");
        hold(source, "t-frz-other", "f", "k0", 1); // another tenant's item sells meanwhile

        assertThat(from.freeze(tenant).getItems()).as("a repeat changes nothing").isZero();
        assertThat(from.unfreeze(tenant).getItems()).isEqualTo(1);
        assertThat(from.unfreeze(tenant).getItems()).isZero();
        assertThat(source.node().engine().sweep(tenant, "f", 0).get(ShardNodeHarness.deadlineMillis(),
                TimeUnit.MILLISECONDS)).as("active again: the due hold expires").isEqualTo(1);
        hold(source, tenant, "f", "k1", 1);
        assertThat(source.checkInvariants().getDriftsList()).isEmpty();
    }

    /** Every call that would change the item, or read it to answer a retry, is answered TENANT_MOVING. */
    private static void assertFenced(ShardNodeHarness shard, String tenant, String item, Hold held) {
        MoveCalls calls = new MoveCalls(shard);
        tenantMoving(() -> shard.blocking().reserve(reserve(tenant, item, "new-key", 1)));
        tenantMoving(() -> shard.blocking().reserve(reserve(tenant, item, held.getIdempotencyKey(), held.getQuantity())));
        tenantMoving(() -> shard.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(held.getHoldId())
                .setOrderRef("o").build()));
        tenantMoving(() -> shard.blocking().release(ReleaseRequest.newBuilder().setHoldId(held.getHoldId()).build()));
        tenantMoving(() -> shard.blocking().extend(ExtendRequest.newBuilder().setHoldId(held.getHoldId()).build()));
        tenantMoving(() -> calls.stub().claimKey(ClaimKeyRequest.newBuilder()
                .setRequest(reserve(tenant, item, "claimed", 1)).setHomeRegion("local").build()));
        tenantMoving(() -> shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(tenant)
                .setItemId(item).setTotal(10).setBucketCount(1).setHomeRegion("local").setHoldTtlMs(600_000).build()));
        tenantMoving(() -> shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(tenant)
                .setItemId("brand-new").setTotal(10).setHomeRegion("local").build()));
        tenantMoving(() -> shard.blocking().restock(RestockRequest.newBuilder().setTenantId(tenant).setItemId(item)
                .setQuantity(1).setRestockId("r-fenced").build()));
        tenantMoving(() -> calls.stub().transferOut(TransferOutRequest.newBuilder().setTransferId("x-out")
                .setTenantId(tenant).setItemId(item).setPeerShardId("p").setMaxQuantity(1).build()));
        tenantMoving(() -> calls.stub().transferIn(TransferInRequest.newBuilder().setTransferId("x-in")
                .setTenantId(tenant).setItemId(item).setPeerShardId("p").setQuantity(1).build()));
    }

    @Test
    void importingItems_answerTenantMoving_thenActivationSellsAndConfirmsACopiedHold() throws Exception {
        String tenant = "t-act";
        createItem(source, tenant, "a", 10, 1, 0);
        Hold copied = hold(source, tenant, "a", "k0", 2);
        hold(source, tenant, "a", "k1", 1);
        to.importAll(tenant, from.exportAll(tenant));

        // Refused before any lane: the calls a router sends on after the flip do not queue ahead of the
        // activation, each loading a bucket of an item it cannot use.
        long loads = target.node().engine().stats().bucketLoads();
        assertFenced(target, tenant, "a", copied);
        assertThat(target.node().engine().stats().bucketLoads()).isEqualTo(loads);
        assertThat(stock(target, tenant, "a").getHeld()).isEqualTo(3);

        var activated = to.activate(tenant);
        assertThat(activated.getItems()).isEqualTo(1);
        assertThat(to.activate(tenant).getItems()).isZero();
        ReserveResponse retried = target.blocking().reserve(reserve(tenant, "a", "k0", 2));
        assertThat(retried.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(retried.getHold().getHoldId()).isEqualTo(copied.getHoldId());
        hold(target, tenant, "a", "k2", 3);
        Hold sold = target.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(copied.getHoldId())
                .setOrderRef("order-1").build()).getHold();
        assertThat(sold.getState()).isEqualTo(HoldState.SOLD);
        Stock s = stock(target, tenant, "a");
        assertThat(s.getSold()).isEqualTo(2);
        assertThat(s.getHeld()).isEqualTo(4);
        assertThat(s.getAvailable()).isEqualTo(4);
        assertThat(target.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void copiedHeldHold_expiresOnTheTarget_onlyOnceActive_atItsExpiresAt() throws Exception {
        String tenant = "t-exp";
        createItem(source, tenant, "e", 5, 1, 0);
        Hold due = hold(source, tenant, "e", "k0", 2);
        hold(source, tenant, "e", "k1", 1);
        // The database is the judge of expiry: this hold's expiry is moved a second into the past on
        // the source (whose sweeper sleeps), before the copy, so no real time has to pass.
        from.update("UPDATE holds SET expires_at = now() - interval '1 second' WHERE hold_id = ?::uuid", uuid(due));
        to.importAll(tenant, from.exportAll(tenant));
        String expiresAt = holdRow(from, uuid(due), "expires_at::text");
        assertThat(holdRow(to, uuid(due), "expires_at::text")).isEqualTo(expiresAt);

        assertThat(target.node().sweeper().tick()).as("the only due hold on the target is IMPORTING").isZero();
        assertThat(target.node().engine().sweep(tenant, "e", 0).get(ShardNodeHarness.deadlineMillis(),
                TimeUnit.MILLISECONDS)).isZero();
        assertThat(holdRow(to, uuid(due), "state")).as("IMPORTING: not swept").isEqualTo("HELD");

        to.activate(tenant);
        assertThat(target.node().sweeper().tick()).isEqualTo(1);
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30)))
                .until(() -> holdRow(to, uuid(due), "state").equals("EXPIRED"));
        assertThat(holdRow(to, uuid(due), "(ended_at >= expires_at)::text")).isEqualTo("true");
        Stock s = stock(target, tenant, "e");
        assertThat(s.getHeld()).isEqualTo(1);
        assertThat(s.getAvailable()).isEqualTo(4);
        assertThat(holdRow(from, uuid(due), "state")).as("the source's copy is untouched").isEqualTo("HELD");
    }

    // ------------------------------------------------------------------ drops

    @Test
    void dropTenant_deletesTheRowsOfItemsInThatStateOnly() throws Exception {
        String tenant = "t-drop";
        createItem(target, tenant, "own", 10, 1, 0);
        hold(target, tenant, "own", "k", 1);
        createItem(target, "t-drop-other", "p", 10, 2, 0);
        hold(target, "t-drop-other", "p", "k", 1);
        createItem(source, tenant, "p", 10, 2, 3);
        createItem(source, tenant, "q", 10, 1, 0);
        hold(source, tenant, "p", "k", 1);
        hold(source, tenant, "q", "k", 1);
        to.importAll(tenant, from.exportAll(tenant)); // taken: "own", ACTIVE here, is not among the rows
        Map<String, List<String>> other = to.rows("t-drop-other");
        long outboxOther = to.count("SELECT count(*) FROM outbox WHERE tenant_id = ?", "t-drop-other");

        assertThat(to.drop(tenant, DropState.MOVED).getItems()).isZero();
        long copied = to.count("SELECT count(*) FROM holds WHERE tenant_id = ? AND item_id <> 'own'", tenant)
                + to.count("SELECT count(*) FROM buckets WHERE tenant_id = ? AND item_id <> 'own'", tenant)
                + to.count("SELECT count(*) FROM buyer_usage WHERE tenant_id = ? AND item_id <> 'own'", tenant) + 2;
        var dropped = to.drop(tenant, DropState.IMPORTING);
        assertThat(dropped.getItems()).isEqualTo(copied);
        assertThat(dropped.getCommittedAtMicros()).isPositive();
        assertThat(to.query("SELECT item_id FROM items WHERE tenant_id = ?", tenant)).containsExactly("own");
        assertThat(to.count("SELECT count(*) FROM holds WHERE tenant_id = ?", tenant)).isEqualTo(1);
        assertThat(to.rows("t-drop-other")).isEqualTo(other);
        assertThat(to.count("SELECT count(*) FROM outbox WHERE tenant_id = ?", "t-drop-other")).isEqualTo(outboxOther);
        assertThat(to.drop(tenant, DropState.IMPORTING).getItems()).isZero();
        hold(target, tenant, "own", "k2", 1);

        // On the source: frozen, then retired (MOVED), then dropped with its outbox rows.
        from.freeze(tenant);
        assertThat(from.drop(tenant, DropState.MOVED).getItems()).as("FROZEN is not MOVED").isZero();
        assertThat(from.retire(tenant).getItems()).isEqualTo(2);
        long outbox = from.count("SELECT count(*) FROM outbox WHERE tenant_id = ?", tenant);
        assertThat(outbox).isPositive();
        long all = rows(from.rows(tenant)) + outbox;
        assertThat(from.drop(tenant, DropState.IMPORTING).getItems()).isZero();
        assertThat(from.drop(tenant, DropState.MOVED).getItems()).isEqualTo(all);
        assertThat(rows(from.rows(tenant))).isZero();
        assertThat(from.count("SELECT count(*) FROM outbox WHERE tenant_id = ?", tenant)).isZero();
        refused(() -> source.blocking().reserve(reserve(tenant, "p", "k9", 1)), Status.Code.NOT_FOUND,
                Reason.ITEM_NOT_FOUND);
    }

    // ------------------------------------------------------------------ counts

    private static long countItems(MoveCalls shard, String tenant) {
        return shard.stub().countItems(CountItemsRequest.newBuilder().setTenantId(tenant).build()).getItems();
    }

    @Test
    void countItems_countsTheItemsAShardServesOrMovesAway_notAnImportingCopyNorMovedLeftovers() throws Exception {
        String tenant = "t-count";
        createItem(target, tenant, "a", 5, 1, 0);
        createItem(target, tenant, "b", 5, 1, 0);
        createItem(target, tenant, "p", 5, 1, 0);
        assertThat(to.update("UPDATE items SET state = 'PAUSED' WHERE tenant_id = ? AND item_id = 'p'", tenant))
                .isEqualTo(1);
        createItem(source, tenant, "c", 5, 1, 0);
        to.importAll(tenant, from.exportAll(tenant));
        assertThat(to.query("SELECT item_id || ':' || state FROM items WHERE tenant_id = ? ORDER BY item_id", tenant))
                .containsExactly("a:ACTIVE", "b:ACTIVE", "c:IMPORTING", "p:PAUSED");
        assertThat(countItems(to, tenant)).isEqualTo(3);

        to.freeze(tenant);
        assertThat(countItems(to, tenant)).as("FROZEN: being moved away, still here").isEqualTo(3);
        to.retire(tenant);
        assertThat(countItems(to, tenant)).as("MOVED and IMPORTING: not served here").isEqualTo(1);
        to.drop(tenant, DropState.MOVED);
        to.drop(tenant, DropState.IMPORTING);
        assertThat(countItems(to, tenant)).isEqualTo(1);
        assertThat(countItems(from, tenant)).isEqualTo(1);
        assertThat(countItems(from, "t-nobody")).isZero();
    }

    // ------------------------------------------------------------------ the schema

    @Test
    void tenantTables_nameEveryColumnAndKey_ofEveryTableWithATenant_butTheOutboxAndTheMoveTokens()
            throws Exception {
        List<String> tables = from.query("SELECT table_name FROM information_schema.columns WHERE column_name = ?"
                + " AND table_schema = 'public' AND table_name NOT IN ('outbox', 'move_tokens')"
                + " ORDER BY table_name", "tenant_id");
        assertThat(tables).containsExactlyInAnyOrderElementsOf(TenantTable.names());
        for (TenantTable t : TenantTable.values()) {
            assertThat(from.query("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public'"
                    + " AND table_name = ?", t.table)).as(t.table).containsExactlyInAnyOrderElementsOf(t.columns);
            assertThat(from.query("""
                    SELECT a.attname FROM pg_index i
                      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                     WHERE i.indrelid = ?::regclass AND i.indisprimary""", t.table))
                    .as(t.table).containsExactlyInAnyOrderElementsOf(t.primaryKey);
        }
    }

    @Test
    void aSeatedTenant_movesWithItsSeats_aDeltaCarriesTheSeatsThatChanged_andTheTargetSellsThem() throws Exception {
        String tenant = "theatre";
        source.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(tenant).setItemId("hamlet")
                .setHomeRegion("local").setKind(ItemKind.SEATED).setHoldTtlMs(600_000)
                .setSeatMap(SeatsIT.venue(1, 2, 5, 0)).build());
        Hold pair = seatHold(source, tenant, "k-pair", SeatMode.ADJACENT, 2);
        Hold one = seatHold(source, tenant, "k-one", SeatMode.SPECIFIC, 1, "S0R1-5");
        Hold sold = seatHold(source, tenant, "k-sold", SeatMode.SPECIFIC, 1, "S0R1-4");
        source.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(sold.getHoldId()).setOrderRef("o-1").build());
        source.blocking().setSeatsOnSale(SetSeatsOnSaleRequest.newBuilder().setTenantId(tenant).setItemId("hamlet")
                .addSeatIds("S0R1-1").setOnSale(false).build());

        MoveCalls.Export first = from.export(tenant, "", 4);
        assertThat(first.counts()).isEqualTo(MoveCounts.newBuilder().setItems(1).setBuckets(1).setSeats(10)
                .setHolds(3).build());
        to.importAll(tenant, first);
        assertThat(to.rows(tenant)).isEqualTo(from.rows(tenant));
        ItemSummary copied = to.summarize(tenant).getItems(0);
        assertThat(copied.getSeats()).isEqualTo(from.summarize(tenant).getItems(0).getSeats());
        assertThat(copied.getSeats().getSeats()).isEqualTo(10);
        assertThat(copied.getSeats().getOnSale()).isEqualTo(9);
        assertThat(copied.getSeats().getClaimed()).isEqualTo(4);
        assertThat(figures(to.summarize(tenant))).isEqualTo(figures(from.summarize(tenant)));

        // Changed since: the pair released (its seats free again), a new hold, a seat back on sale.
        source.blocking().release(ReleaseRequest.newBuilder().setHoldId(pair.getHoldId()).build());
        Hold later = seatHold(source, tenant, "k-later", SeatMode.SPECIFIC, 1, "S0R0-3");
        source.blocking().setSeatsOnSale(SetSeatsOnSaleRequest.newBuilder().setTenantId(tenant).setItemId("hamlet")
                .addSeatIds("S0R1-1").setOnSale(true).build());
        MoveCalls.Export delta = from.export(tenant, first.snapshot(), first.cutMicros(), 100);
        Set<String> changedSeats = new HashSet<>();
        for (TenantRow r : delta.rows("seats")) {
            changedSeats.add(r.getJson().replaceAll(".*\"seat_id\" ?: ?\"([^\"]+)\".*", "$1"));
        }
        Set<String> expected = new HashSet<>(pair.getSeatIdsList());
        expected.add("S0R0-3");
        expected.add("S0R1-1");
        assertThat(changedSeats).as("the seats a delta carries: those written since").isEqualTo(expected);
        assertThat(delta.counts().getHolds()).isEqualTo(2);
        to.importAll(tenant, delta);
        assertThat(to.rows(tenant)).isEqualTo(from.rows(tenant));
        assertThat(figures(to.summarize(tenant))).isEqualTo(figures(from.summarize(tenant)));
        assertThat(target.checkInvariants().getDriftsList()).isEmpty();

        // Active on the target: its lane loads the copied seats; held and sold seats stay taken there.
        to.activate(tenant);
        ReserveResponse taken = target.blocking().reserve(seatRequest(tenant, "k-new", SeatMode.SPECIFIC, 2,
                "S0R1-5", "S0R1-3"));
        assertThat(taken.getOutcome()).isEqualTo(ReserveOutcome.SEATS_TAKEN);
        assertThat(taken.getTakenSeatIdsList()).containsExactly("S0R1-5");
        ReserveResponse retried = target.blocking().reserve(seatRequest(tenant, "k-one", SeatMode.SPECIFIC, 1,
                "S0R1-5"));
        assertThat(retried.getHold().getHoldId()).isEqualTo(one.getHoldId());
        assertThat(target.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(later.getHoldId())
                .setOrderRef("o-2").build()).getHold().getSeatIdsList()).containsExactly("S0R0-3");
        Hold freed = seatHold(target, tenant, "k-freed", SeatMode.SPECIFIC, 2,
                pair.getSeatIdsList().toArray(String[]::new));
        assertThat(freed.getSeatIdsList()).containsExactlyInAnyOrderElementsOf(pair.getSeatIdsList());
        Stock s = stock(target, tenant, "hamlet");
        assertThat(s.getSold()).isEqualTo(2);
        assertThat(s.getHeld()).isEqualTo(3);
        assertThat(s.getAvailable()).isEqualTo(5);
        assertThat(target.checkInvariants().getDriftsList()).isEmpty();
    }

    private static ReserveRequest seatRequest(String tenant, String key, SeatMode mode, int n, String... ids) {
        return SeatsIT.seats("hamlet", key, mode, n, ids).toBuilder().setTenantId(tenant).build();
    }

    private static Hold seatHold(ShardNodeHarness shard, String tenant, String key, SeatMode mode, int n,
                                 String... ids) {
        ReserveResponse r = shard.blocking().reserve(seatRequest(tenant, key, mode, n, ids));
        assertThat(r.getOutcome()).as("%s", r).isEqualTo(ReserveOutcome.RESERVED);
        return r.getHold();
    }
}
