package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.shard.ShardNode;
import io.lastunit.shard.retention.MovingTenants;
import io.lastunit.shard.retention.Retention;
import io.lastunit.shard.retention.RetentionConfig;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention and tenant moves on a local platform (cells shared and big, one shard each, region
 * local): a tenant whose history retention has thinned moves with its retired totals, verifies (the
 * summaries count the retired units) and flips, and its target's invariants hold; while the move
 * names the tenant, the source's retention leaves its rows alone, though they are due. The mover is
 * held at its first step by a {@link MoveGate} while the test looks, whatever the host's speed.
 * Rows are aged by SQL (eight days back against the default seven-day window); the node's own
 * passes are run by hand (its schedule is a day), one row per pass.
 */
class RetentionMoveIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "old-co";
    private static final int ITEMS = 5;
    private static final MoveGate GATE = new MoveGate().hold(TENANT);

    private static ClusterClients clients;
    private static LocalPlatform platform;

    @BeforeAll
    static void start() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", List.of("local"), 1)
                .cell("big", List.of("local"), 1)
                .balancers(0)
                .adminResumeInterval(Duration.ZERO)
                .shardSetting("lastunit.shard.retention-interval-ms", Duration.ofDays(1).toMillis())
                .shardSetting("lastunit.shard.retention-batch-max", 1)
                .shardSetting("lastunit.shard.retention-batches-per-run-max", 1)
                .shardSetting("lastunit.shard.retention-batch-pause-ms", 0)
                .movers(MoverSettings.defaults().withRetireGrace(Duration.ofMillis(100)), MovePolicy.defaults(), GATE,
                        InstantSource.system())
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        GATE.open();
        if (platform != null) {
            platform.close();
        }
        if (clients != null) {
            clients.close();
        }
    }

    private static InventoryServiceGrpc.InventoryServiceBlockingStub api() {
        return ClusterClients.blocking(clients.routerChannel(platform), LocalPlatform.DEV_TOKEN)
                .withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    private static AdminServiceGrpc.AdminServiceBlockingStub admin() {
        return ClusterClients.adminService(clients.adminChannel(platform), LocalPlatform.DEV_TOKEN)
                .withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    private static ShardNode shardOf(String cell) {
        return platform.shards().values().stream().filter(s -> s.getCell().equals(cell))
                .map(s -> platform.shard(s.getShardId())).findFirst().orElseThrow();
    }

    /** Per item, {@code n} one-unit holds: the first {@code sold} confirmed, the next {@code released} released. */
    private static void sell(String prefix, int n, int sold, int released) {
        for (int item = 0; item < ITEMS; item++) {
            for (int i = 0; i < n; i++) {
                String key = prefix + item + "-" + i;
                ReserveResponse r = api().reserve(ReserveRequest.newBuilder().setTenantId(TENANT).setItemId("item-" + item)
                        .setQuantity(1).setIdempotencyKey(key).setBuyerId("b-" + key).setRegion("local").build());
                assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
                Hold h = r.getHold();
                if (i < sold) {
                    api().confirm(ConfirmRequest.newBuilder().setHoldId(h.getHoldId()).setOrderRef("o-" + key).build());
                } else if (i < sold + released) {
                    api().release(ReleaseRequest.newBuilder().setHoldId(h.getHoldId()).build());
                }
            }
        }
    }

    private static long sql(ShardNode node, String sql) throws Exception {
        try (Connection c = node.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, TENANT);
            long n;
            if (sql.startsWith("UPDATE")) {
                n = ps.executeUpdate();
            } else {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    n = rs.getLong(1);
                }
            }
            c.commit();
            return n;
        }
    }

    private static long age(ShardNode node) throws Exception {
        return sql(node, "UPDATE holds SET created_at = created_at - interval '8 days', expires_at = expires_at"
                + " - interval '8 days', ended_at = ended_at - interval '8 days' WHERE tenant_id = ? AND ended_at"
                + " IS NOT NULL AND ended_at > now() - interval '1 day'");
    }

    @Test
    void aThinnedTenant_movesWithItsRetiredTotals_andWhileTheMoveNamesIt_itsRowsAreLeftAlone() throws Exception {
        var inventory = ClusterClients.blocking(clients.routerChannel(platform), LocalPlatform.DEV_TOKEN);
        for (int item = 0; item < ITEMS; item++) {
            ClusterClients.createItem(inventory, CreateItemRequest.newBuilder().setTenantId(TENANT)
                    .setItemId("item-" + item).setTotal(100).setHomeRegion("local").setBucketCount(2).build());
        }
        ShardNode source = shardOf("shared");
        ShardNode target = shardOf("big");
        sell("a-", 30, 24, 3); // per item: 24 sold, 3 released, 3 held
        assertThat(age(source)).isEqualTo(ITEMS * 27);
        RetentionConfig wide = new RetentionConfig(true, Duration.ofDays(1), Duration.ofDays(7), Duration.ofDays(7),
                1_000, 100, Duration.ZERO);
        try (Retention thinning = new Retention(source.dataSource(), wide, MovingTenants.NONE)) {
            assertThat(thinning.runOnce().holds()).isEqualTo(ITEMS * 27);
        }
        MoveChecks.assertInvariants(clients, platform);
        sell("b-", 40, 40, 0);
        assertThat(age(source)).as("due, and no move yet").isEqualTo(ITEMS * 40);

        Move started = admin().startMove(StartMoveRequest.newBuilder().setTenantId(TENANT).setToCell("big")
                .setMaxPauseMs(10_000).build());
        assertThat(started.getStep()).isEqualTo(MoveStep.PLANNED);
        // The mover waits at the gate after recording PLANNED: the placement names the move, nothing is
        // copied yet. Until the source's topology shows it, a pass may retire a hold (one per pass).
        ClusterClients.awaitUntil(() -> {
            try {
                return source.retention().runOnce().skipped() > 0;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "the source's retention leaves the tenant a move names alone");
        long held = sql(source, "SELECT count(*) FROM holds WHERE tenant_id = ?");
        assertThat(held).as("some of the 200 due holds are left").isPositive();
        for (int i = 0; i < 3; i++) {
            Retention.Pass pass = source.retention().runOnce();
            assertThat(pass.holds()).isZero();
            assertThat(pass.skipped()).isEqualTo(1);
        }
        assertThat(sql(source, "SELECT count(*) FROM holds WHERE tenant_id = ?")).isEqualTo(held);
        long retiredSold = sql(source, "SELECT sum(sold_qty) FROM retired_hold_totals WHERE tenant_id = ?");

        GATE.open();
        Move done = MoveChecks.awaitFinished(admin(), started.getMoveId(), Duration.ofSeconds(120));
        assertThat(done.getStep()).as(done.getReason()).isEqualTo(MoveStep.CLEANED);
        assertThat(done.getCopied().getRetired()).as("retired totals copied").isPositive();
        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(TENANT).equals("big"),
                "the router sees the tenant in big");

        MoveChecks.assertItemsOnlyIn(clients, platform, TENANT, "big", ITEMS);
        MoveChecks.assertInvariants(clients, platform);
        assertThat(sql(target, "SELECT sum(sold_qty) FROM retired_hold_totals WHERE tenant_id = ?")).isEqualTo(retiredSold);
        assertThat(sql(target, "SELECT count(*) FROM holds WHERE tenant_id = ?")).isEqualTo(held);
        for (int item = 0; item < ITEMS; item++) {
            Stock s = api().getStock(GetStockRequest.newBuilder().setTenantId(TENANT).setItemId("item-" + item).build())
                    .getStock();
            assertThat(s.getSold()).isEqualTo(64);
            assertThat(s.getHeld()).isEqualTo(3);
            assertThat(s.getAvailable()).isEqualTo(33);
        }
    }
}
