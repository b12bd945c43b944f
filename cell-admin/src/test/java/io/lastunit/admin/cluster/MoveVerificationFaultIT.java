package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.Mover;
import io.lastunit.admin.move.Moves;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Both halves of a move's verification on real shard nodes. A tenant's holds that ended long ago
 * (settled: they never change again) are compared before the fence; the rest (live holds, holds
 * ended since the cut, every item and bucket row) inside it. A copy spoiled on the target in each
 * half is found by that half: a settled row changed after the copy pass makes the move abort
 * before it ever fences (the tenant never pauses); a live hold changed after the fenced copy makes
 * it abort at verification, before the flip. Both times the tenant goes on selling on the source,
 * with nothing lost.
 */
class MoveVerificationFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int ITEMS = 4;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static MovePlatform fixture;
    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;

    @BeforeAll
    static void start() throws Exception {
        fixture = MovePlatform.start(PG, 1);
        clients = fixture.clients;
        platform = fixture.platform;
        router = fixture.router;
    }

    @AfterAll
    static void stop() throws Exception {
        if (fixture != null) {
            fixture.close();
        }
    }

    private static InventoryServiceGrpc.InventoryServiceBlockingStub api() {
        return fixture.api();
    }

    private static Moves moves(CuratorFramework client, MoveFaults faults, String owner) {
        return fixture.moves(client, faults, owner);
    }

    private static String shardOf(String cell) {
        return platform.shards().values().stream().filter(s -> s.getCell().equals(cell)).map(ShardInfo::getShardId)
                .findFirst().orElseThrow();
    }

    /** Items with live holds and with holds sold an hour ago (their end time set back on the source). */
    private static List<Hold> seed(String tenant) throws Exception {
        var creator = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        List<Hold> live = new ArrayList<>();
        for (int i = 0; i < ITEMS; i++) {
            ClusterClients.createItem(creator, CreateItemRequest.newBuilder().setTenantId(tenant).setItemId("item-" + i)
                    .setTotal(20).setHomeRegion("local").setHoldTtlMs(600_000).build());
            for (int k = 0; k < 4; k++) {
                Hold h = api().reserve(ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-" + i)
                        .setQuantity(1).setIdempotencyKey("k-" + i + "-" + k).setBuyerId("b-" + k).setRegion("local")
                        .build()).getHold();
                if (k < 2) {
                    api().confirm(ConfirmRequest.newBuilder().setHoldId(h.getHoldId()).setOrderRef("o-" + i + "-" + k)
                            .build());
                } else {
                    live.add(h);
                }
            }
        }
        try (Connection c = clients.connect(shardOf("shared")); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            assertThat(s.executeUpdate("UPDATE holds SET ended_at = now() - interval '1 hour' WHERE tenant_id = '"
                    + tenant + "' AND state = 'SOLD'")).isEqualTo(2 * ITEMS);
        }
        return live;
    }

    /** Changes one hold of the tenant on the target's copy (a bug in the copy, as the move's checks must see it). */
    private static void spoilTheCopy(String tenant, String state) {
        try (Connection c = clients.connect(shardOf("big")); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            assertThat(s.executeUpdate("UPDATE holds SET qty = qty + 1 WHERE hold_id = (SELECT hold_id FROM holds"
                    + " WHERE tenant_id = '" + tenant + "' AND state = '" + state + "' ORDER BY hold_id LIMIT 1)"))
                    .isEqualTo(1);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Mover.Outcome move(String tenant, MoveFaults faults) throws Exception {
        try (CuratorFramework client = fixture.session(); Moves moves = moves(client, faults, "verifier")) {
            Move planned = moves.plan(tenant, "big", 30_000, "");
            return moves.run(planned.getMoveId(), m -> { });
        }
    }

    private static void assertStillSellingOnTheSource(String tenant, List<Hold> live) throws Exception {
        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(tenant).equals("shared")
                && platform.router().topology().current().moveOf(tenant).isEmpty(), "the router sees " + tenant
                + " back in shared");
        MoveChecks.assertHoldsAsTheyWere(api(), live);
        assertThat(api().reserve(ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-0").setQuantity(1)
                .setIdempotencyKey("after").setBuyerId("b-after").setRegion("local").build()).getOutcome())
                .isEqualTo(ReserveOutcome.RESERVED);
        MoveChecks.assertItemsOnlyIn(clients, platform, tenant, "shared", ITEMS);
        MoveChecks.assertInvariants(clients, platform);
    }

    @Test
    void aSettledRowSpoiledOnTheTarget_isFoundBeforeTheFence_andTheTenantNeverPauses() throws Exception {
        String tenant = "spoiled-settled";
        List<Hold> live = seed(tenant);
        // After the first copy, before the catch-up pass: the pass copies only what changed on the
        // source, so the spoiled sold hold stays spoiled.
        MoveFaults spoil = recorded -> {
            if (recorded.getStep() == MoveStep.CATCHING_UP && recorded.getCatchUpRounds() == 1) {
                spoilTheCopy(tenant, "SOLD");
            }
        };

        Mover.Outcome o = move(tenant, spoil);

        assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.ABORTED);
        assertThat(o.move().getReason()).contains("before the fence, the rows that no longer change differ")
                .contains("SOLD");
        assertThat(o.move().getFencedAtMs()).as("never fenced").isZero();
        assertStillSellingOnTheSource(tenant, live);
    }

    @Test
    void aLiveHoldSpoiledOnTheTargetInTheFence_isFoundByVerification_andTheMoveRollsBack() throws Exception {
        String tenant = "spoiled-live";
        List<Hold> live = seed(tenant);
        MoveFaults spoil = recorded -> {
            if (recorded.getStep() == MoveStep.FENCED) {
                spoilTheCopy(tenant, "HELD");
            }
        };

        Mover.Outcome o = move(tenant, spoil);

        assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.ABORTED);
        assertThat(o.move().getReason()).contains("verification found").contains("HELD");
        assertThat(o.move().getFencedAtMs()).as("it was fenced").isPositive();
        assertStillSellingOnTheSource(tenant, live);
    }
}
