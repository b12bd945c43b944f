package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.Mover;
import io.lastunit.admin.move.Moves;
import io.lastunit.admin.move.plan.MovePlanner;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.common.topology.Curators;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The mover killed at every step on real shard nodes, as the transfer protocol's crash test does
 * it: a mover in this process dies right after it recorded a step (a crash injected through
 * {@link MoveFaults}), and a new mover, on a ZooKeeper session of its own, resumes the move from
 * what was recorded. Each run ends rolled forward or rolled back, never in between: every
 * acknowledged hold is there with its expiry, stock and each shard's invariants are exact, the
 * tenant's items are in one cell only, and it sells afterwards.
 */
class MoverCrashFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int ITEMS = 8;
    private static final int TOTAL = 20;

    private static MovePlatform fixture;
    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;
    private static CuratorFramework zk;

    @BeforeAll
    static void start() throws Exception {
        fixture = MovePlatform.start(PG, 2);
        clients = fixture.clients;
        platform = fixture.platform;
        router = fixture.router;
        zk = fixture.session();
    }

    @AfterAll
    static void stop() throws Exception {
        if (zk != null) {
            zk.close();
        }
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

    /** The injected death of a mover right after it recorded a step. */
    static final class Crash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Crash(String m) {
            super(m);
        }
    }

    /** Where the mover dies: right after recording the first {@code step} (for CLEANED_FINISHED: the end). */
    enum CrashPoint {
        COPYING, CATCHING_UP, FENCED, VERIFIED, FLIPPED, CLEANED, CLEANED_FINISHED, ABORTING, ABORTED
    }

    @ParameterizedTest
    @EnumSource(CrashPoint.class)
    void aMoverKilledAfterAStep_isResumedByAnother_andTheMoveEndsWhole(CrashPoint point) throws Exception {
        String tenant = "crash-" + point.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        List<Hold> holds = new ArrayList<>();
        var creator = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        for (int i = 0; i < ITEMS; i++) {
            ClusterClients.createItem(creator, CreateItemRequest.newBuilder().setTenantId(tenant).setItemId("item-" + i)
                    .setTotal(TOTAL).setHomeRegion("local").build());
            for (int k = 0; k < 3; k++) {
                ReserveResponse r = api().reserve(ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-" + i)
                        .setQuantity(1).setIdempotencyKey("k-" + i + "-" + k).setBuyerId("b-" + k).setRegion("local")
                        .build());
                holds.add(r.getHold());
            }
        }
        boolean abortPath = point == CrashPoint.ABORTING || point == CrashPoint.ABORTED;
        AtomicBoolean crashed = new AtomicBoolean();
        Moves[] first = new Moves[1];
        MoveFaults crashAt = recorded -> {
            if (abortPath && recorded.getStep() == MoveStep.CATCHING_UP && !recorded.getAbortRequested()) {
                first[0].requestAbort(recorded.getMoveId(), "test");
            }
            boolean hit = point == CrashPoint.CLEANED_FINISHED
                    ? recorded.getStep() == MoveStep.CLEANED && recorded.getFinishedAtMs() != 0
                    : recorded.getStep().name().equals(point.name());
            if (hit && crashed.compareAndSet(false, true)) {
                throw new Crash("mover dies after recording " + point);
            }
        };
        Move atCrash;
        Mover.Outcome o;
        try (Moves dying = moves(zk, crashAt, "dying")) {
            first[0] = dying;
            Move planned = dying.plan(tenant, "big", 10_000, "");
            assertThat(catchThrowable(() -> dying.run(planned.getMoveId(), m -> { }))).isInstanceOf(Crash.class);
            atCrash = dying.get(planned.getMoveId());
        }
        try (CuratorFramework own = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15))) {
            own.start();
            own.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            try (Moves resumer = moves(own, MoveFaults.NONE, "resumer")) {
                o = resumer.run(atCrash.getMoveId(), m -> { });
            }
        }

        boolean fenced = atCrash.getStep() == MoveStep.FENCED || atCrash.getStep() == MoveStep.VERIFIED;
        if (abortPath) {
            assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.ABORTED);
        } else if (!fenced) {
            assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.CLEANED);
        } else {
            assertThat(o.result()).as(o.detail()).isIn(Mover.Result.CLEANED, Mover.Result.ABORTED);
        }
        if (!MovePlanner.finished(atCrash)) {
            assertThat(o.move().getOwner()).isEqualTo("resumer");
        }
        String cell = o.result() == Mover.Result.CLEANED ? "big" : "shared";
        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(tenant).equals(cell)
                && platform.router().topology().current().moveOf(tenant).isEmpty(), "the router sees " + tenant
                + " in " + cell);
        MoveChecks.assertItemsOnlyIn(clients, platform, tenant, cell, ITEMS);
        MoveChecks.assertHoldsAsTheyWere(api(), holds);
        for (int i = 0; i < ITEMS; i++) {
            Stock s = api().getStock(GetStockRequest.newBuilder().setTenantId(tenant).setItemId("item-" + i).build())
                    .getStock();
            assertThat(s.getTotal()).isEqualTo(TOTAL);
            assertThat(s.getHeld()).isEqualTo(3);
            assertThat(s.getAvailable()).isEqualTo(TOTAL - 3);
        }
        MoveChecks.assertInvariants(clients, platform);
        assertThat(api().confirm(ConfirmRequest.newBuilder().setHoldId(holds.get(0).getHoldId()).setOrderRef("o-1")
                .build()).getHold().getState()).isEqualTo(HoldState.SOLD);
        assertThat(api().reserve(ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-1").setQuantity(1)
                .setIdempotencyKey("after").setBuyerId("late").setRegion("local").build()).getOutcome())
                .isEqualTo(ReserveOutcome.RESERVED);
    }
}
