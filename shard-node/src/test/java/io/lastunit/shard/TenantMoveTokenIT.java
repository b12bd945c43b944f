package io.lastunit.shard;

import static io.lastunit.shard.MoveCalls.refused;
import static io.lastunit.shard.MoveCalls.reserve;
import static io.lastunit.shard.MoveCalls.tenantMoving;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.TenantMoveResponse;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fence of a move's writers on two real shard nodes: a call that writes carries its mover's
 * token, and once a call of a newer mover (a higher token) has committed on a shard, a late call of
 * an older one is refused there with {@code FAILED_PRECONDITION} / {@code MOVE_SUPERSEDED} and
 * writes nothing: an import of rows exported at an older snapshot does not overwrite the newer
 * copy, a state change does not undo the newer mover's. A call that waits for a newer call's
 * transaction is judged on what that one committed. Each test works on a tenant of its own; the
 * sweepers are slowed to an hour.
 */
class TenantMoveTokenIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

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
        Map<String, Object> m = new HashMap<>();
        m.put("lastunit.shard.id", id);
        m.put("lastunit.shard.sweep-interval-ms", 3_600_000);
        m.put("lastunit.shard.lanes", 2);
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

    private static void createItem(ShardNodeHarness shard, String tenant, String item) {
        shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(tenant).setItemId(item).setTotal(10)
                .setBucketCount(1).setHomeRegion("local").setHoldTtlMs(600_000).build());
    }

    private static Hold hold(ShardNodeHarness shard, String tenant, String item, String key) {
        var r = shard.blocking().reserve(reserve(tenant, item, key, 1));
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        return r.getHold();
    }

    private static String holdRow(MoveCalls shard, Hold h) throws Exception {
        return shard.query("SELECT concat_ws('|', expires_at, extended, state) FROM holds WHERE hold_id = ?::uuid",
                HoldId.decode(h.getHoldId(), "hold_id").uuid().toString()).get(0);
    }

    private static long token(MoveCalls shard, String tenant, String move) throws Exception {
        List<String> t = shard.query("SELECT token FROM move_tokens WHERE tenant_id = ? AND move_id = '" + move + "'",
                tenant);
        return t.isEmpty() ? 0 : Long.parseLong(t.get(0));
    }

    private static void superseded(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        refused(call, Status.Code.FAILED_PRECONDITION, Reason.MOVE_SUPERSEDED);
    }

    @Test
    void aLateImportOfOlderRows_byAnOlderMover_isRefused_andTheCopyKeepsTheNewerMoversRows() throws Exception {
        String tenant = "t-late-import";
        createItem(source, tenant, "i");
        Hold h = hold(source, tenant, "i", "k1");
        // The stale mover exported before the Extend; the mover that took over copies everything again, after it.
        MoveCalls.Export older = from.exportAll(tenant);
        source.blocking().extend(ExtendRequest.newBuilder().setHoldId(h.getHoldId()).build());
        MoveCalls.Export newer = from.exportAll(tenant);
        assertThat(older.rows("holds").get(0).getJson()).contains("\"extended\":false");
        assertThat(newer.rows("holds").get(0).getJson()).contains("\"extended\":true");

        to.importAll(tenant, newer, 2);
        Map<String, List<String>> copy = to.rows(tenant);
        assertThat(copy).isEqualTo(from.rows(tenant));

        StatusRuntimeException e = refused(() -> to.importAll(tenant, older, 1), Status.Code.FAILED_PRECONDITION,
                Reason.MOVE_SUPERSEDED);
        assertThat(e.getStatus().getDescription()).contains("mover_token=1").contains("token 2")
                .contains("nothing was written");
        assertThat(to.rows(tenant)).isEqualTo(copy);
        assertThat(holdRow(to, h)).isEqualTo(holdRow(from, h)).contains("|t|");
        assertThat(token(to, tenant, MoveCalls.MOVE)).isEqualTo(2);

        // The newer mover's own repeat is taken, and so is a mover newer still; then 2 is stale too.
        assertThat(to.importAll(tenant, newer, 2).getHolds()).isEqualTo(1);
        assertThat(to.importAll(tenant, newer, 3).getHolds()).isEqualTo(1);
        superseded(() -> to.importAll(tenant, newer, 2));
        assertThat(token(to, tenant, MoveCalls.MOVE)).isEqualTo(3);
        assertThat(to.rows(tenant)).isEqualTo(copy);
    }

    @Test
    void aLateUnfreezeByAnOlderMover_afterANewerMoversFreeze_isRefused_andTheTenantStaysFenced() throws Exception {
        String tenant = "t-late-unfreeze";
        createItem(source, tenant, "i");
        hold(source, tenant, "i", "k1");

        assertThat(from.freeze(tenant, 2).getItems()).isEqualTo(1);
        superseded(() -> from.unfreeze(tenant, 1));
        assertThat(from.query("SELECT state FROM items WHERE tenant_id = ?", tenant)).containsExactly("FROZEN");
        tenantMoving(() -> source.blocking().reserve(reserve(tenant, "i", "k2", 1)));

        // And the other way round: the newer mover rolled back; the older one's late freeze does not fence it again.
        assertThat(from.unfreeze(tenant, 3).getItems()).isEqualTo(1);
        superseded(() -> from.freeze(tenant, 2));
        assertThat(from.query("SELECT state FROM items WHERE tenant_id = ?", tenant)).containsExactly("ACTIVE");
        assertThat(source.blocking().reserve(reserve(tenant, "i", "k3", 1)).getOutcome())
                .isEqualTo(ReserveOutcome.RESERVED);
    }

    @Test
    void everyWritingCall_ofAnOlderMover_isRefused_andChangesNothing() throws Exception {
        String tenant = "t-every-call";
        createItem(source, tenant, "i");
        hold(source, tenant, "i", "k1");
        MoveCalls.Export export = from.exportAll(tenant);
        to.importAll(tenant, export, 5);
        Map<String, List<String>> copy = to.rows(tenant);

        superseded(() -> to.activate(tenant, 4));
        superseded(() -> to.retire(tenant, 4));
        superseded(() -> to.freeze(tenant, 4));
        superseded(() -> to.unfreeze(tenant, 4));
        superseded(() -> to.drop(tenant, DropState.IMPORTING, MoveCalls.MOVE, 4));
        superseded(() -> to.drop(tenant, DropState.MOVED, MoveCalls.MOVE, 4));
        assertThat(to.rows(tenant)).isEqualTo(copy);
        assertThat(to.query("SELECT state FROM items WHERE tenant_id = ?", tenant)).containsExactly("IMPORTING");
        assertThat(token(to, tenant, MoveCalls.MOVE)).isEqualTo(5);

        assertThat(to.activate(tenant, 5).getItems()).isEqualTo(1);
        assertThat(to.query("SELECT state FROM items WHERE tenant_id = ?", tenant)).containsExactly("ACTIVE");
    }

    @Test
    void aCallWaitingForANewerMoversTransaction_isJudgedOnWhatThatCommitted() throws Exception {
        String tenant = "t-waiting";
        createItem(source, tenant, "i");
        from.freeze(tenant, 1);
        // A newer mover's call holds the token row: its transaction has stored 2 and not committed yet.
        try (Connection newer = source.node().dataSource().getConnection()) {
            try (PreparedStatement ps = newer.prepareStatement(
                    "UPDATE move_tokens SET token = 2 WHERE tenant_id = ? AND move_id = ?")) {
                ps.setString(1, tenant);
                ps.setString(2, MoveCalls.MOVE);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            CompletableFuture<TenantMoveResponse> late = CompletableFuture.supplyAsync(() -> from.unfreeze(tenant, 1));
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(20))).pollInterval(Duration.ofMillis(20))
                    .until(() -> waitingForTheTokenRow(source) == 1);
            assertThat(late).isNotDone();
            newer.commit();
            Throwable refusal = late.handle((ok, err) -> err).get(ShardNodeHarness.deadlineMillis(),
                    TimeUnit.MILLISECONDS);
            assertThat(refusal).as("the late unfreeze was refused").isNotNull();
            superseded(() -> {
                throw refusal.getCause();
            });
        }
        assertThat(from.query("SELECT state FROM items WHERE tenant_id = ?", tenant)).containsExactly("FROZEN");
        assertThat(from.unfreeze(tenant, 2).getItems()).isEqualTo(1);
    }

    /** Statements of the shard's database that wait for a lock in an upsert of a token. */
    private static long waitingForTheTokenRow(ShardNodeHarness shard) throws Exception {
        try (Connection c = shard.node().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                     + " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                     + " AND query LIKE 'INSERT INTO move_tokens%'");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            long n = rs.getLong(1);
            c.commit();
            return n;
        }
    }

    @Test
    void tokensOrderTheMoversOfOneMove_andADropOfMovedItemsForgetsTheTenantsOtherMoves() throws Exception {
        String tenant = "t-per-move";
        String other = "t-per-move-other";
        createItem(source, tenant, "i");
        createItem(source, other, "i");
        from.freeze(tenant, 7);
        from.unfreeze(tenant, 7);
        from.freeze(other, 7);
        from.unfreeze(other, 7);
        // A later move of the tenant has movers of its own, from any token.
        TenantMoveResponse r = from.stub().freezeTenant(MoveCalls.request(tenant, 1).toBuilder().setMoveId("move-2")
                .build());
        assertThat(r.getItems()).isEqualTo(1);
        assertThat(from.retire(tenant, 7).getItems()).as("move-1's token orders move-1's movers only").isEqualTo(1);

        from.drop(tenant, DropState.MOVED, "move-2", 1);
        assertThat(token(from, tenant, MoveCalls.MOVE)).as("move-1's token, forgotten").isZero();
        assertThat(token(from, tenant, "move-2")).isEqualTo(1);
        assertThat(token(from, other, MoveCalls.MOVE)).as("another tenant's").isEqualTo(7);
        assertThat(from.count("SELECT count(*) FROM items WHERE tenant_id = ?", tenant)).isZero();
    }
}
