package io.lastunit.shard;

import static io.lastunit.shard.MoveCalls.refused;
import static io.lastunit.shard.MoveCalls.reserve;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.shard.v1.ClaimKeyRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * After RetireTenant, a shard whose own topology still gives it the tenant's items (a stale view,
 * or the moment before it learns of the flip) answers every call on them ABORTED / MOVED with the
 * tenant's epoch as this node sees it, so the router re-routes; the epoch follows the node's view.
 * A real ZooKeeper ({@code TestingServer} on 127.0.0.1) holds the topology.
 */
class RetiredTenantIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "acme";

    @Test
    void retiredItems_answerMoved_withTheTenantsEpochInTheNodesView() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        try (TestingServer zk = new TestingServer(spec, true);
             CuratorFramework client = Curators.newClient(zk.getConnectString(), Duration.ofSeconds(10))) {
            client.start();
            assertThat(client.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(),
                    TimeUnit.MILLISECONDS)).isTrue();
            TopologyStore store = new TopologyStore(client, TopologyStore.ROOT_DEFAULT, InstantSource.system());
            store.createCell("shared", List.of("local"), List.of(ShardInfo.newBuilder().setShardId("src")
                    .setCell("shared").setRegion("local").setAddress("127.0.0.1:1").build()));
            int epoch = store.setTenantState(TENANT, TenantState.MOVING, "move-1",
                    store.assignTenant(TENANT, "shared", -1));
            try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.id", "src",
                    "lastunit.shard.zookeeper", zk.getConnectString(),
                    "lastunit.shard.sweep-interval-ms", 3_600_000)).start()) {
                MoveCalls calls = new MoveCalls(shard);
                shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId("sku")
                        .setTotal(10).setHomeRegion("local").build());
                Hold held = shard.blocking().reserve(reserve(TENANT, "sku", "k0", 1)).getHold();
                calls.freeze(TENANT);
                assertThat(calls.retire(TENANT).getItems()).isEqualTo(1);
                assertThat(calls.retire(TENANT).getItems()).isZero();

                String told = String.valueOf(epoch);
                moved(() -> shard.blocking().reserve(reserve(TENANT, "sku", "k1", 1)), told);
                moved(() -> shard.blocking().reserve(reserve(TENANT, "sku", "k0", 1)), told);
                moved(() -> shard.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(held.getHoldId())
                        .setOrderRef("o").build()), told);
                moved(() -> shard.blocking().release(ReleaseRequest.newBuilder().setHoldId(held.getHoldId()).build()),
                        told);
                moved(() -> shard.blocking().extend(ExtendRequest.newBuilder().setHoldId(held.getHoldId()).build()),
                        told);
                moved(() -> calls.stub().claimKey(ClaimKeyRequest.newBuilder()
                        .setRequest(reserve(TENANT, "sku", "k2", 1)).setHomeRegion("local").build()), told);
                moved(() -> shard.blocking().restock(RestockRequest.newBuilder().setTenantId(TENANT).setItemId("sku")
                        .setQuantity(1).setRestockId("r").build()), told);
                moved(() -> shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(TENANT)
                        .setItemId("new").setTotal(1).setHomeRegion("local").build()), told);
                moved(() -> calls.stub().transferOut(TransferOutRequest.newBuilder().setTransferId("x")
                        .setTenantId(TENANT).setItemId("sku").setPeerShardId("p").setMaxQuantity(1).build()), told);

                int next = store.setTenantState(TENANT, TenantState.ACTIVE, "", epoch);
                await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).until(() -> epochTold(() -> shard.blocking()
                        .reserve(reserve(TENANT, "sku", "k1", 1))).equals(String.valueOf(next)));
            }
        }
    }

    private static void moved(ThrowingCallable call, String epoch) {
        StatusRuntimeException e = refused(call, Status.Code.ABORTED, Reason.MOVED);
        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsEntry("epoch", epoch);
    }

    private static String epochTold(ThrowingCallable call) {
        StatusRuntimeException e = refused(call, Status.Code.ABORTED, Reason.MOVED);
        return GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap().get("epoch");
    }
}
