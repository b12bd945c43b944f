package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.GetMoveRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.SummarizeTenantRequest;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.invariant.CrossShardChecker;
import io.lastunit.common.invariant.CrossShardReport;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What the tests of tenant moves on a local platform check after a move: where the tenant's items
 * are (SummarizeTenant and CountItems on every shard), that every acknowledged hold is still there as it was (same
 * state, same expiry by the database clock), the invariants of each shard and across shards, and
 * the move itself as the admin service reports it. Stateless.
 */
final class MoveChecks {
    private MoveChecks() {
    }

    /** Polls GetMove until the move has finished (CLEANED with its finish time, or ABORTED), bounded. */
    static Move awaitFinished(AdminServiceGrpc.AdminServiceBlockingStub admin, String moveId, Duration max)
            throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(max).toNanos();
        Move m;
        while (true) {
            m = admin.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .getMove(GetMoveRequest.newBuilder().setMoveId(moveId).build());
            if (io.lastunit.admin.move.plan.MovePlanner.finished(m)) {
                return m;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("move " + moveId + " did not finish within " + max + ": " + m);
            }
            Thread.sleep(20);
        }
    }

    /**
     * The tenant has {@code items} items on the shards of {@code cell}, all ACTIVE, and none in any
     * state (an IMPORTING copy, MOVED leftovers) on any other shard: SummarizeTenant lists every item
     * of the tenant on a shard, and CountItems must count exactly the ACTIVE ones.
     */
    static void assertItemsOnlyIn(ClusterClients clients, LocalPlatform platform, String tenant, String cell,
            long items) {
        long inCell = 0;
        for (ShardInfo s : platform.shards().values()) {
            var stub = clients.shardService(s).withDeadlineAfter(ClusterClients.callDeadlineMillis(),
                    TimeUnit.MILLISECONDS);
            List<ItemSummary> here = stub.summarizeTenant(SummarizeTenantRequest.newBuilder().setTenantId(tenant)
                    .build()).getItemsList();
            long counted = stub.countItems(CountItemsRequest.newBuilder().setTenantId(tenant).build()).getItems();
            if (s.getCell().equals(cell)) {
                assertThat(here).as("items of %s on %s (cell %s)", tenant, s.getShardId(), s.getCell())
                        .allSatisfy(i -> assertThat(i.getState()).isEqualTo("ACTIVE"));
                assertThat(counted).as("CountItems of %s on %s", tenant, s.getShardId()).isEqualTo(here.size());
                inCell += here.size();
            } else {
                assertThat(here).as("items of %s on %s (cell %s), in any state", tenant, s.getShardId(), s.getCell())
                        .isEmpty();
                assertThat(counted).as("CountItems of %s on %s", tenant, s.getShardId()).isZero();
            }
        }
        assertThat(inCell).as("items of %s in cell %s", tenant, cell).isEqualTo(items);
    }

    /** Every hold is there, through the router, as it was: its state and its expiry by the database clock. */
    static void assertHoldsAsTheyWere(InventoryServiceGrpc.InventoryServiceBlockingStub api, Collection<Hold> holds) {
        for (Hold before : holds) {
            Hold now = api.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .getHold(GetHoldRequest.newBuilder().setHoldId(before.getHoldId()).build()).getHold();
            assertThat(now.getState()).as("hold %s", before.getHoldId()).isEqualTo(HoldState.HELD);
            assertThat(now.getExpiresAt()).as("expiry of hold %s", before.getHoldId()).isEqualTo(before.getExpiresAt());
            assertThat(now.getIdempotencyKey()).isEqualTo(before.getIdempotencyKey());
            assertThat(now.getQuantity()).isEqualTo(before.getQuantity());
        }
    }

    /** Each shard's own invariants, and the cross-shard one over the router's topology, hold exactly. */
    static void assertInvariants(ClusterClients clients, LocalPlatform platform) throws Exception {
        SaleChecker.assertInvariantsHold(platform);
        Map<String, ManagedChannel> byAddress = new ConcurrentHashMap<>();
        CrossShardChecker cross = new CrossShardChecker(address -> byAddress.computeIfAbsent(address, a ->
                clients.channel(a.substring(0, a.lastIndexOf(':')), Integer.parseInt(a.substring(a.lastIndexOf(':')
                        + 1)))), TestTimeouts.scaled(Duration.ofSeconds(10)));
        CrossShardReport report = cross.check(platform.router().topology().current());
        assertThat(report.problems()).as("cross-shard check").isEmpty();
        assertThat(report.ok()).as("cross-shard invariant: %s", report.drifts()).isTrue();
    }
}
