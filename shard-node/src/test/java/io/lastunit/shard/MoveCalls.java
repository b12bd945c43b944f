package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.DropTenantRequest;
import io.lastunit.api.shard.v1.ExportTenantRequest;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.ImportTenantRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.SummarizeTenantRequest;
import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.api.shard.v1.TenantMoveRequest;
import io.lastunit.api.shard.v1.TenantMoveResponse;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * The mover's calls to one shard node, as tests make them (blocking, within the harness's
 * deadline), and the rows of a tenant as its database holds them. Thread-safe as its stubs are.
 */
final class MoveCalls {
    static final String MOVE = "move-1";
    /** The mover token of the writing calls made without one named: the first mover's. */
    static final long TOKEN = 1;
    /** The tables a move copies, each ordered by its primary key, for comparing two shards' rows. */
    static final Map<String, String> TABLES = new LinkedHashMap<>();

    static {
        TABLES.put("items", "item_id");
        TABLES.put("buckets", "item_id, bucket_no");
        TABLES.put("seats", "item_id, seat_no");
        TABLES.put("holds", "hold_id");
        TABLES.put("buyer_usage", "item_id, buyer_id");
        TABLES.put("transfers", "transfer_id, direction");
        TABLES.put("restocks", "item_id, restock_id");
        TABLES.put("retired_hold_totals", "item_id, bucket_no");
        TABLES.put("retired_usage_totals", "item_id, buyer_id");
        TABLES.put("retired_transfer_totals", "item_id");
    }

    /** What one export sent: its chunks, and the last one's snapshot, cut and counts. */
    record Export(List<TenantChunk> chunks, String snapshot, long cutMicros, MoveCounts counts) {
        /** The exported rows of {@code table}, in the order sent. */
        List<TenantRow> rows(String table) {
            List<TenantRow> out = new ArrayList<>();
            for (TenantChunk c : chunks) {
                for (TenantRows t : c.getTablesList()) {
                    if (t.getTable().equals(table)) {
                        out.addAll(t.getRowsList());
                    }
                }
            }
            return out;
        }

        long rowCount() {
            return counts.getItems() + counts.getBuckets() + counts.getHolds() + counts.getUsage()
                    + counts.getTransfers() + counts.getRestocks() + counts.getRetired() + counts.getSeats();
        }
    }

    private final ShardNodeHarness shard;

    MoveCalls(ShardNodeHarness shard) {
        this.shard = shard;
    }

    ShardServiceGrpc.ShardServiceBlockingStub stub() {
        return ShardServiceGrpc.newBlockingStub(shard.channel())
                .withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS);
    }

    Export exportAll(String tenant) {
        return export(tenant, "", 0);
    }

    /** Reads the whole stream; asserts only the last chunk says last, and that it has the snapshot. */
    Export export(String tenant, String since, int chunkRows) {
        return export(tenant, since, 0, chunkRows);
    }

    /** The delta since {@code earlier}, found by index (with its cut). */
    Export exportSince(String tenant, Export earlier) {
        return export(tenant, earlier.snapshot(), earlier.cutMicros(), 0);
    }

    Export export(String tenant, String since, long sinceCutMicros, int chunkRows) {
        Iterator<TenantChunk> it = stub().exportTenant(ExportTenantRequest.newBuilder().setTenantId(tenant)
                .setMoveId(MOVE).setSinceSnapshot(since).setSinceCutMicros(sinceCutMicros).setChunkRows(chunkRows)
                .build());
        List<TenantChunk> chunks = new ArrayList<>();
        while (it.hasNext()) {
            chunks.add(it.next());
        }
        assertThat(chunks).isNotEmpty();
        TenantChunk last = chunks.get(chunks.size() - 1);
        assertThat(last.getLast()).isTrue();
        assertThat(last.getSnapshot()).isNotEmpty();
        assertThat(chunks.subList(0, chunks.size() - 1)).noneMatch(TenantChunk::getLast);
        assertThat(last.getCutMicros()).as("the export's cut").isPositive();
        return new Export(chunks, last.getSnapshot(), last.getCutMicros(), last.getCounts());
    }

    /** Imports every chunk of {@code export} as one ImportTenant each; returns the rows written, summed. */
    MoveCounts importAll(String tenant, Export export) {
        return importAll(tenant, export, TOKEN);
    }

    /** As {@link #importAll(String, Export)}, by the mover of {@code token}. */
    MoveCounts importAll(String tenant, Export export, long token) {
        MoveCounts.Builder sum = MoveCounts.newBuilder();
        for (TenantChunk c : export.chunks()) {
            if (c.getTablesCount() == 0) {
                continue;
            }
            MoveCounts n = stub().importTenant(ImportTenantRequest.newBuilder().setTenantId(tenant).setMoveId(MOVE)
                    .setMoverToken(token).addAllTables(c.getTablesList()).build()).getCounts();
            sum.setItems(sum.getItems() + n.getItems()).setBuckets(sum.getBuckets() + n.getBuckets())
                    .setHolds(sum.getHolds() + n.getHolds()).setUsage(sum.getUsage() + n.getUsage())
                    .setTransfers(sum.getTransfers() + n.getTransfers()).setRestocks(sum.getRestocks() + n.getRestocks())
                    .setRetired(sum.getRetired() + n.getRetired());
        }
        return sum.build();
    }

    TenantMoveResponse freeze(String tenant) {
        return freeze(tenant, TOKEN);
    }

    TenantMoveResponse freeze(String tenant, long token) {
        return stub().freezeTenant(request(tenant, token));
    }

    TenantMoveResponse unfreeze(String tenant) {
        return unfreeze(tenant, TOKEN);
    }

    TenantMoveResponse unfreeze(String tenant, long token) {
        return stub().unfreezeTenant(request(tenant, token));
    }

    TenantMoveResponse activate(String tenant) {
        return activate(tenant, TOKEN);
    }

    TenantMoveResponse activate(String tenant, long token) {
        return stub().activateTenant(request(tenant, token));
    }

    TenantMoveResponse retire(String tenant) {
        return retire(tenant, TOKEN);
    }

    TenantMoveResponse retire(String tenant, long token) {
        return stub().retireTenant(request(tenant, token));
    }

    TenantMoveResponse drop(String tenant, DropState state) {
        return drop(tenant, state, MOVE, TOKEN);
    }

    TenantMoveResponse drop(String tenant, DropState state, String move, long token) {
        return stub().dropTenant(DropTenantRequest.newBuilder().setTenantId(tenant).setMoveId(move).setState(state)
                .setMoverToken(token).build());
    }

    TenantSummary summarize(String tenant) {
        return stub().summarizeTenant(SummarizeTenantRequest.newBuilder().setTenantId(tenant).build());
    }

    /** One part of the tenant's rows, split at {@code cutMicros}. */
    TenantSummary summarize(String tenant, SummaryPart part, long cutMicros) {
        return stub().summarizeTenant(SummarizeTenantRequest.newBuilder().setTenantId(tenant).setPart(part)
                .setEndedBeforeMicros(cutMicros).build());
    }

    static TenantMoveRequest request(String tenant, long token) {
        return TenantMoveRequest.newBuilder().setTenantId(tenant).setMoveId(MOVE).setMoverToken(token).build();
    }

    // ---- the database's rows

    /**
     * The tenant's rows of every copied table as canonical JSON (jsonb's text), by primary key; an
     * item's state left out, since a copy is IMPORTING where its source is ACTIVE or FROZEN.
     */
    Map<String, List<String>> rows(String tenant) throws SQLException {
        Map<String, List<String>> all = new LinkedHashMap<>();
        for (Map.Entry<String, String> t : TABLES.entrySet()) {
            String row = t.getKey().equals("items") ? "to_jsonb(t) - 'state'" : "to_jsonb(t)";
            all.put(t.getKey(), query("SELECT (" + row + ")::text FROM " + t.getKey() + " t WHERE tenant_id = ? ORDER BY "
                    + t.getValue(), tenant));
        }
        return all;
    }

    /** One column (as text) of a query with one text parameter, in the query's order. */
    List<String> query(String sql, String param) throws SQLException {
        try (Connection c = shard.node().dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, param);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
            c.commit();
            return out;
        }
    }

    long count(String sql, String param) throws SQLException {
        return Long.parseLong(query(sql, param).get(0));
    }

    /** Runs a write with one text parameter, committed; returns the rows it changed. */
    int update(String sql, String param) throws SQLException {
        try (Connection c = shard.node().dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, param);
            int n = ps.executeUpdate();
            c.commit();
            return n;
        }
    }

    /** The hold ids among the tenant's exported rows of {@code export}. */
    static Set<String> holdIds(Export export) {
        Set<String> ids = new HashSet<>();
        for (TenantRow r : export.rows("holds")) {
            int at = r.getJson().indexOf("\"hold_id\":\"") + 11;
            ids.add(r.getJson().substring(at, r.getJson().indexOf('"', at)));
        }
        return ids;
    }

    // ---- requests and answers

    static ReserveRequest reserve(String tenant, String item, String key, int qty) {
        return ReserveRequest.newBuilder().setTenantId(tenant).setItemId(item).setQuantity(qty).setIdempotencyKey(key)
                .setBuyerId("buyer-" + key).setRegion("local").build();
    }

    /** The call's refusal: asserts it failed with {@code code} and {@code reason}; returns it. */
    static StatusRuntimeException refused(ThrowingCallable call, Status.Code code, Reason reason) {
        StatusRuntimeException e = catchThrowableOfType(call, StatusRuntimeException.class);
        assertThat(e).as("expected %s / %s", code, reason).isNotNull();
        assertThat(e.getStatus().getCode()).as(e.toString()).isEqualTo(code);
        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getReason()).as(e.toString()).isEqualTo(reason.name());
        return e;
    }

    /** UNAVAILABLE / TENANT_MOVING with a retry hint. */
    static void tenantMoving(ThrowingCallable call) {
        StatusRuntimeException e = refused(call, Status.Code.UNAVAILABLE, Reason.TENANT_MOVING);
        assertThat(GrpcErrors.retryAfterMs(e)).as("RetryInfo").isPositive();
    }
}
