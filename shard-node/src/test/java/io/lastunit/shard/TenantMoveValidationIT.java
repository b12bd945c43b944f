package io.lastunit.shard;

import static io.lastunit.shard.MoveCalls.refused;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.DropTenantRequest;
import io.lastunit.api.shard.v1.ExportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantRequest;
import io.lastunit.api.shard.v1.SummarizeTenantRequest;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.TenantMoveRequest;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.shard.grpc.ShardGrpcService;
import io.lastunit.testkit.PostgresFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every field of the mover's calls checked at the edge: a bad one is INVALID_ARGUMENT naming the
 * field, and nothing runs; so is a call that writes without a mover token above 0. Rows that pass
 * the edge but not the table (another tenant's, bad JSON, missing columns, a key twice) are refused
 * the same way by the import, with nothing written.
 */
class TenantMoveValidationIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String T = "dst";
    /** A tenant with no rows here, for exports. */
    private static final String NOBODY = "nobody";
    private static ShardNodeHarness shard;
    private static MoveCalls calls;

    @BeforeAll
    static void start() throws Exception {
        shard = new ShardNodeHarness(PG, Map.of()).start();
        calls = new MoveCalls(shard);
    }

    @AfterAll
    static void stop() {
        if (shard != null) {
            shard.close();
        }
    }

    /**
     * Each call of a move, with a tenant and a move id (SummarizeTenant takes no move id) and, for
     * the calls that write, a mover token (the reads take none).
     */
    enum Call {
        EXPORT, IMPORT, FREEZE, UNFREEZE, ACTIVATE, RETIRE, DROP, SUMMARIZE;

        boolean writes() {
            return this != EXPORT && this != SUMMARIZE;
        }

        void run(String tenant, String move) {
            run(tenant, move, MoveCalls.TOKEN);
        }

        void run(String tenant, String move, long token) {
            TenantMoveRequest r = TenantMoveRequest.newBuilder().setTenantId(tenant).setMoveId(move)
                    .setMoverToken(token).build();
            switch (this) {
                case EXPORT -> calls.stub().exportTenant(ExportTenantRequest.newBuilder().setTenantId(tenant)
                        .setMoveId(move).build()).hasNext();
                case IMPORT -> calls.stub().importTenant(ImportTenantRequest.newBuilder().setTenantId(tenant)
                        .setMoveId(move).setMoverToken(token).addTables(rows("items", row("i", "{}"))).build());
                case FREEZE -> calls.stub().freezeTenant(r);
                case UNFREEZE -> calls.stub().unfreezeTenant(r);
                case ACTIVATE -> calls.stub().activateTenant(r);
                case RETIRE -> calls.stub().retireTenant(r);
                case DROP -> calls.stub().dropTenant(DropTenantRequest.newBuilder().setTenantId(tenant).setMoveId(move)
                        .setMoverToken(token).setState(DropState.IMPORTING).build());
                case SUMMARIZE -> calls.stub().summarizeTenant(SummarizeTenantRequest.newBuilder().setTenantId(tenant)
                        .build());
            }
        }
    }

    private static TenantRow row(String item, String json) {
        return TenantRow.newBuilder().setItemId(item).setJson(json).build();
    }

    private static TenantRows rows(String table, TenantRow... rows) {
        return TenantRows.newBuilder().setTable(table).addAllRows(List.of(rows)).build();
    }

    private static void invalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String field) {
        StatusRuntimeException e = refused(call, Status.Code.INVALID_ARGUMENT, Reason.INVALID_FIELD);
        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).as(e.getStatus().getDescription())
                .containsEntry("field", field);
    }

    static Stream<Arguments> badTenants() {
        List<Arguments> out = new ArrayList<>();
        for (Call c : Call.values()) {
            for (String bad : List.of("", "x".repeat(65), "has space", "caf\u00e9")) {
                out.add(Arguments.of(c, bad));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} tenant_id ''{1}''")
    @MethodSource("badTenants")
    void badTenantId_isRefused(Call call, String tenant) {
        invalid(() -> call.run(tenant, MoveCalls.MOVE), "tenant_id");
    }

    static Stream<Arguments> badMoveIds() {
        List<Arguments> out = new ArrayList<>();
        for (Call c : Call.values()) {
            if (c == Call.SUMMARIZE) {
                continue;
            }
            for (String bad : List.of("", "m".repeat(65), "a/b", "has space", "tab\tthere")) {
                out.add(Arguments.of(c, bad));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} move_id ''{1}''")
    @MethodSource("badMoveIds")
    void badMoveId_isRefused(Call call, String move) {
        invalid(() -> call.run(T, move), "move_id");
    }

    static Stream<Arguments> badTokens() {
        List<Arguments> out = new ArrayList<>();
        for (Call c : Call.values()) {
            if (c.writes()) {
                for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
                    out.add(Arguments.of(c, bad));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} mover_token {1}")
    @MethodSource("badTokens")
    void aWritingCall_withoutAMoverTokenAboveZero_isRefused_andWritesNothing(Call call, long token) throws Exception {
        invalid(() -> call.run(NOBODY, MoveCalls.MOVE, token), "mover_token");
        assertThat(calls.count("SELECT count(*) FROM move_tokens WHERE tenant_id = ?", NOBODY)).isZero();
        assertThat(calls.count("SELECT count(*) FROM items WHERE tenant_id = ?", NOBODY)).isZero();
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 10_001, Integer.MAX_VALUE})
    void export_chunkRowsOutOfBounds_isRefused(int chunkRows) {
        invalid(() -> calls.export(T, "", chunkRows), "chunk_rows");
    }

    @Test
    void export_chunkRowsAtTheBounds_andZeroForTheDefault_areTaken() {
        for (int n : new int[] {0, 1, 10_000}) {
            assertThat(calls.export(NOBODY, "", n).rowCount()).isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"x", "1:2", "1:2:3:4", "0:5:", "5:3:", "3:10:2", "3:10:10", "3:10:5,4", "3:10:5,", "a:b:",
            "+3:10:", "3:10: 5", "99999999999999999999:99999999999999999999:"})
    void export_sinceSnapshotThatIsNotOne_isRefused(String since) {
        invalid(() -> calls.export(T, since, 0), "since_snapshot");
    }

    @Test
    void export_sinceSnapshotTooLong_isRefused() {
        StringBuilder s = new StringBuilder("1:100000000:");
        while (s.length() <= ShardGrpcService.SNAPSHOT_LENGTH_MAX) {
            s.append("5,");
        }
        invalid(() -> calls.export(T, s.toString(), 0), "since_snapshot");
    }

    @Test
    void export_sinceAWellFormedSnapshot_isTaken() {
        assertThat(calls.export(NOBODY, "3:10:4,5,9", 0).rowCount()).isZero();
    }

    @Test
    void export_aCutWithoutASnapshot_orBelowZero_isRefused() {
        invalid(() -> calls.export(T, "", 1_000, 0), "since_cut_micros");
        invalid(() -> calls.export(T, "3:10:4,5,9", -1, 0), "since_cut_micros");
    }

    @Test
    void export_sinceASnapshotAndItsCut_isTaken() {
        assertThat(calls.export(NOBODY, "3:10:4,5,9", 1_000, 0).rowCount()).isZero();
    }

    @Test
    void summarize_aPartWithoutItsCut_orACutForAll_orAnUnknownPart_isRefused() {
        invalid(() -> calls.summarize(T, SummaryPart.SUMMARY_PART_SETTLED, 0), "ended_before_micros");
        invalid(() -> calls.summarize(T, SummaryPart.SUMMARY_PART_RECENT, -5), "ended_before_micros");
        invalid(() -> calls.summarize(T, SummaryPart.SUMMARY_PART_ALL, 1_000), "ended_before_micros");
        invalid(() -> calls.stub().summarizeTenant(SummarizeTenantRequest.newBuilder().setTenantId(T).setPartValue(7)
                .setEndedBeforeMicros(1_000).build()), "part");
    }

    @Test
    void summarize_eachPartWithItsCut_isTaken() {
        for (SummaryPart part : new SummaryPart[] {SummaryPart.SUMMARY_PART_SETTLED, SummaryPart.SUMMARY_PART_RECENT}) {
            assertThat(calls.summarize(NOBODY, part, 1_000).getItemsList()).isEmpty();
        }
    }

    private static ImportTenantRequest importing(TenantRows... tables) {
        return ImportTenantRequest.newBuilder().setTenantId(T).setMoveId(MoveCalls.MOVE).setMoverToken(MoveCalls.TOKEN)
                .addAllTables(List.of(tables)).build();
    }

    @Test
    void import_badTablesAndRows_areRefusedAtTheEdge() {
        TenantRow ok = row("i", "{}");
        invalid(() -> calls.stub().importTenant(importing()), "tables.rows");
        invalid(() -> calls.stub().importTenant(importing(rows("items"))), "tables.rows");
        TenantRows.Builder many = TenantRows.newBuilder().setTable("holds");
        for (int i = 0; i <= ShardGrpcService.IMPORT_ROWS_MAX; i++) {
            many.addRows(ok);
        }
        invalid(() -> calls.stub().importTenant(importing(many.build())), "tables.rows");
        invalid(() -> calls.stub().importTenant(importing(rows("outbox", ok))), "tables.table");
        invalid(() -> calls.stub().importTenant(importing(rows("", ok))), "tables.table");
        invalid(() -> calls.stub().importTenant(importing(rows("items", ok), rows("items", ok))), "tables.table");
        invalid(() -> calls.stub().importTenant(importing(rows("items", row("", "{}")))), "tables.rows.item_id");
        invalid(() -> calls.stub().importTenant(importing(rows("items", row("has space", "{}")))),
                "tables.rows.item_id");
        invalid(() -> calls.stub().importTenant(importing(rows("items", row("i", "")))), "tables.rows.json");
        invalid(() -> calls.stub().importTenant(importing(rows("items",
                row("i", "x".repeat(ShardGrpcService.ROW_JSON_LENGTH_MAX + 1))))), "tables.rows.json");
    }

    @Test
    void import_rowsThatDoNotFitTheirTable_areRefused_andNothingIsWritten() throws Exception {
        String item = "{\"tenant_id\":\"" + T + "\",\"item_id\":\"i\",\"kind\":\"COUNTED\",\"home_region\":\"local\","
                + "\"total\":5,\"initial_total\":5,\"per_buyer_limit\":0,\"hold_ttl_ms\":60000,\"extend_by_ms\":60000,"
                + "\"bucket_count\":1,\"state\":\"ACTIVE\",\"collapsed\":false,"
                + "\"created_at\":\"2026-01-01T00:00:00+00:00\",\"regions\":[\"local\"],\"created_total\":5}";
        TenantRow good = row("i", item);
        TenantRow otherTenant = row("i", item.replace("\"tenant_id\":\"" + T + "\"", "\"tenant_id\":\"src\""));
        TenantRow otherItem = row("j", item);
        invalid(() -> calls.stub().importTenant(importing(rows("items", good, otherTenant))), "tables.rows.json");
        invalid(() -> calls.stub().importTenant(importing(rows("items", otherItem))), "tables.rows.json");
        invalid(() -> calls.stub().importTenant(importing(rows("items", good, row("i", "not json")))),
                "tables.rows.json");
        invalid(() -> calls.stub().importTenant(importing(rows("items", row("i", "[" + item + "]")))),
                "tables.rows.json");
        invalid(() -> calls.stub().importTenant(importing(rows("items",
                row("i", "{\"tenant_id\":\"" + T + "\",\"item_id\":\"i\"}")))), "tables.rows.json");
        invalid(() -> calls.stub().importTenant(importing(rows("items", good, good))), "tables.rows.json");
        invalid(() -> calls.stub().importTenant(importing(rows("items", row("i", item.replace("\"total\":5",
                "\"total\":-5"))))), "tables.rows.json");
        assertThat(calls.rows(T).values()).allSatisfy(r -> assertThat(r).isEmpty());

        // The same row alone fits, and is written IMPORTING.
        assertThat(calls.stub().importTenant(importing(rows("items", good))).getCounts().getItems()).isEqualTo(1);
        assertThat(calls.query("SELECT state FROM items WHERE tenant_id = ?", T)).containsExactly("IMPORTING");
    }

    @Test
    void drop_withoutAStateToDrop_isRefused() {
        invalid(() -> calls.stub().dropTenant(DropTenantRequest.newBuilder().setTenantId(T).setMoveId(MoveCalls.MOVE)
                .setMoverToken(MoveCalls.TOKEN).build()), "state");
        invalid(() -> calls.stub().dropTenant(DropTenantRequest.newBuilder().setTenantId(T).setMoveId(MoveCalls.MOVE)
                .setMoverToken(MoveCalls.TOKEN).setStateValue(7).build()), "state");
    }

}
