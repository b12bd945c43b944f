package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.Mover;
import io.lastunit.admin.move.Moves;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A stale mover's late import on real shard nodes. A mover pauses (as a long GC pause would) with
 * the rows of its first copy pass exported and in hand; meanwhile its session expires, ZooKeeper
 * takes its lease away, a hold of the tenant is extended, and a second mover adopts the move and
 * copies every row, the extended hold with them. Then the first mover's import of its older rows
 * is sent. Without a fence it would land, putting the hold back as it was before the Extend; the
 * second mover's later passes send only what changed since its own snapshot, and the summaries
 * (counts and units) would not notice. With the fence the target refuses it (MOVE_SUPERSEDED),
 * the first mover stops without touching the move, and the second finishes it with the hold as
 * extended.
 */
class MoverSupersededFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int ITEMS = 6;
    private static final int TOTAL = 20;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static MovePlatform fixture;
    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel router;

    @BeforeAll
    static void start() throws Exception {
        fixture = MovePlatform.start(PG, 2);
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

    private static CuratorFramework session() throws InterruptedException {
        return fixture.session();
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("timed out waiting");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    @Test
    void aStaleMoversLateImportOfOlderRows_isRefused_itStops_andTheMoveEndsWithTheNewerRows() throws Exception {
        String tenant = "superseded";
        var creator = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        List<Hold> holds = new ArrayList<>();
        for (int i = 0; i < ITEMS; i++) {
            ClusterClients.createItem(creator, CreateItemRequest.newBuilder().setTenantId(tenant).setItemId("item-" + i)
                    .setTotal(TOTAL).setHomeRegion("local").setHoldTtlMs(600_000).build());
            for (int k = 0; k < 2; k++) {
                holds.add(api().reserve(ReserveRequest.newBuilder().setTenantId(tenant).setItemId("item-" + i)
                        .setQuantity(1).setIdempotencyKey("k-" + i + "-" + k).setBuyerId("b-" + k).setRegion("local")
                        .build()).getHold());
            }
        }

        CountDownLatch staleImporting = new CountDownLatch(1);
        CountDownLatch staleGoOn = new CountDownLatch(1);
        MoveFaults pauseAtImport = new MoveFaults() {
            @Override
            public void afterRecorded(Move recorded) {
            }

            @Override
            public void beforeImport(String moveId, ShardInfo target) {
                staleImporting.countDown();
                await(staleGoOn);
            }
        };
        CountDownLatch successorCopied = new CountDownLatch(1);
        CountDownLatch successorGoOn = new CountDownLatch(1);
        MoveFaults holdAfterCopying = recorded -> {
            if (recorded.getStep() == MoveStep.CATCHING_UP && successorCopied.getCount() > 0) {
                successorCopied.countDown();
                await(successorGoOn);
            }
        };

        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (CuratorFramework first = session(); CuratorFramework second = session();
             Moves stale = moves(first, pauseAtImport, "stale");
             Moves successor = moves(second, holdAfterCopying, "successor")) {
            Move planned = stale.plan(tenant, "big", 10_000, "");
            Future<Mover.Outcome> staleRun = pool.submit(() -> stale.run(planned.getMoveId(), m -> { }));
            await(staleImporting);

            // The stale mover holds rows exported before this Extend.
            Hold extended = api().extend(ExtendRequest.newBuilder().setHoldId(holds.get(0).getHoldId()).build())
                    .getHold();
            assertThat(extended.getExtended()).isTrue();
            assertThat(extended.getExpiresAt()).isNotEqualTo(holds.get(0).getExpiresAt());
            holds.set(0, extended);
            // Its session expired while it was paused: the lease is gone (see docs/topology.md), and it has not heard.
            second.delete().forPath(TopologyStore.ROOT_DEFAULT + "/moves/" + planned.getMoveId() + "/lease");
            Future<Mover.Outcome> successorRun = pool.submit(() -> successor.run(planned.getMoveId(), m -> { }));
            await(successorCopied);

            staleGoOn.countDown();
            Mover.Outcome o = staleRun.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.STOPPED);
            assertThat(o.detail()).contains("ImportTenant").contains("MOVE_SUPERSEDED");
            Move now = successor.get(planned.getMoveId());
            assertThat(now.getStep()).as("as the successor recorded it").isEqualTo(MoveStep.CATCHING_UP);
            assertThat(now.getOwner()).isEqualTo("successor");
            assertThat(now.getAbortRequested()).isFalse();
            assertThat(now.getReason()).isEmpty();

            successorGoOn.countDown();
            Mover.Outcome done = successorRun.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(done.result()).as(done.detail()).isEqualTo(Mover.Result.CLEANED);
        } finally {
            staleGoOn.countDown();
            successorGoOn.countDown();
            pool.shutdownNow();
        }

        ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf(tenant).equals("big")
                && platform.router().topology().current().moveOf(tenant).isEmpty(), "the router sees " + tenant
                + " in big");
        MoveChecks.assertItemsOnlyIn(clients, platform, tenant, "big", ITEMS);
        MoveChecks.assertHoldsAsTheyWere(api(), holds);
        Hold there = api().getHold(GetHoldRequest.newBuilder().setHoldId(holds.get(0).getHoldId()).build()).getHold();
        assertThat(there.getExtended()).as("the hold as extended, not as the stale mover exported it").isTrue();
        MoveChecks.assertInvariants(clients, platform);
    }
}
