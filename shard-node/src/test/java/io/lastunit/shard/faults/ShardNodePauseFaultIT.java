package io.lastunit.shard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.ShardRegistration;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.shard.ShardNodeProcess;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.testkit.faults.Nemesis;
import io.lastunit.testkit.faults.ProcessPause;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A shard node paused (SIGSTOP) in the middle of a sale for longer than its ZooKeeper session:
 * its live registration goes, a second start of the same shard takes the database over (it ends
 * the paused node's sessions: the take-over rule of docs/durability.md) and the sale goes on
 * there. When the first node resumes, it must not write: its connections are gone and every new
 * one fails the ownership fence. The sale ends with the usual checks; the resumed node's Reserves
 * are all refused and none of their keys is in the database.
 */
class ShardNodePauseFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int BUYERS = 2_000;
    private static final long TOTAL = 600;

    @Test
    void aPausedNode_loses_itsDatabaseToASecondStart_andWritesNothingWhenItResumes() throws Exception {
        String url = PG.newDatabase("paused");
        // tickTime 200 ms: sessions of 2 s are allowed (ZooKeeper takes 2..20 ticks).
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        try (TestingServer zk = new TestingServer(spec, true);
             CuratorFramework client = Curators.newClient(zk.getConnectString(), Duration.ofSeconds(10))) {
            client.start();
            assertThat(client.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(),
                    TimeUnit.MILLISECONDS)).isTrue();
            TopologyStore store = new TopologyStore(client, TopologyStore.ROOT_DEFAULT, InstantSource.system());
            store.createCell("c1", List.of("local"), List.of(ShardInfo.newBuilder().setShardId("s1")
                    .setCell("c1").setRegion("local").setAddress("127.0.0.1:1").build()));
            store.assignTenant("acme", "c1", -1);
            Map<String, String> settings = Map.of(
                    "lastunit.shard.id", "s1",
                    "lastunit.shard.regions", "local",
                    "lastunit.shard.jdbc-url", url,
                    "lastunit.shard.jdbc-user", PG.user(),
                    "lastunit.shard.jdbc-password", PG.password(),
                    "lastunit.shard.zookeeper", zk.getConnectString(),
                    "lastunit.shard.zookeeper-session-timeout-ms", "2000",
                    // A fenced node's calls wait this long for a connection that never comes.
                    "lastunit.shard.jdbc-connect-timeout-ms", "1000");
            String live = ShardRegistration.pathOf(TopologyStore.ROOT_DEFAULT, "s1");
            try (ShardNodeProcess first = ShardNodeProcess.start("paused", settings)) {
                first.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("hot")
                        .setTotal(TOTAL).setHomeRegion("local").build());
                AtomicReference<InventoryServiceGrpc.InventoryServiceBlockingStub> current =
                        new AtomicReference<>(first.blocking());
                AtomicReference<ShardNodeHarness> second = new AtomicReference<>();
                AtomicReference<ProcessPause.Paused> paused = new AtomicReference<>();
                Nemesis pauseAndTakeOver = Nemesis.of("pause s1, start s1 again", () -> {
                    paused.set(ProcessPause.pause(first.pid()));
                    try {
                        awaitGone(client, live);
                        Map<String, Object> props = new java.util.HashMap<>(settings);
                        props.remove("lastunit.shard.jdbc-url");
                        second.set(new ShardNodeHarness(PG, url, props).start());
                        current.set(second.get().blocking());
                    } catch (Exception e) {
                        throw new IllegalStateException("the second start failed", e);
                    }
                }, () -> paused.get().close());
                SaleUnderFault sale = new SaleUnderFault(current::get, "acme", "hot");
                try {
                    SaleUnderFault.Result r = sale.run(BUYERS, 16, 100, 150, pauseAndTakeOver);
                    System.out.printf("ShardNodePauseFaultIT: %s; %d RESERVED told, %d resolved by key%n",
                            r.history(), r.acked().size(), r.resolved().size());
                    assertThat(second.get()).as("the second start took over").isNotNull();
                    sale.check(r, BUYERS, TOTAL, url, PG.user(), PG.password());
                    assertThat(second.get().checkInvariants().getDriftsList()).isEmpty();

                    // The first node runs again: whatever it is asked, it writes nothing.
                    assertThat(ProcessPause.isPaused(first.pid())).isFalse();
                    for (int i = 0; i < 5; i++) {
                        ReserveRequest late = ReserveRequest.newBuilder().setTenantId("acme").setItemId("hot")
                                .setQuantity(1).setIdempotencyKey("after-resume-" + i).setBuyerId("late-" + i)
                                .setRegion("local").build();
                        try {
                            var a = first.blocking().withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(20))
                                    .toMillis(), TimeUnit.MILLISECONDS).reserve(late);
                            assertThat(a.getOutcome()).as("the fenced node never reserves").isNotEqualTo(
                                    ReserveOutcome.RESERVED);
                        } catch (StatusRuntimeException refused) {
                            // UNAVAILABLE or DEADLINE_EXCEEDED: refused, as it must be
                        }
                    }
                    try (Connection c = DriverManager.getConnection(url, PG.user(), PG.password());
                         ResultSet rs = c.createStatement().executeQuery(
                                 "SELECT count(*) FROM holds WHERE idempotency_key LIKE 'after-resume-%'")) {
                        rs.next();
                        assertThat(rs.getInt(1)).as("holds written by the resumed node").isZero();
                    }
                    assertThat(second.get().checkInvariants().getDriftsList()).isEmpty();
                } finally {
                    if (paused.get() != null) {
                        paused.get().close();
                    }
                    if (second.get() != null) {
                        second.get().close();
                    }
                }
            }
        }
    }

    /** Waits (bounded) until the znode is gone: the paused node's session expired. */
    private static void awaitGone(CuratorFramework client, String path) throws Exception {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(60)).toNanos();
        while (client.checkExists().forPath(path) != null) {
            assertThat(System.nanoTime()).as("the paused node's session expired").isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
