package io.lastunit.common.topology;

import static io.lastunit.common.topology.TopologyTest.shard;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tenant moves in ZooKeeper: {@code moves/{id}} written only by compare-and-set, a move's start
 * atomic with the tenant's placement (two racing starts: exactly one recorded), and the lease that
 * lets one mover at a time act on a move and another take over when its session ends.
 */
class MoveStoreIT {
    private static TestingServer server;
    private static CuratorFramework client;
    private final FakeClock clock = new FakeClock();
    private String root;
    private TopologyStore store;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        server = ZooKeeperFixture.startServer();
        client = ZooKeeperFixture.client(server, Duration.ofSeconds(10));
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        client.close();
        server.close();
    }

    @BeforeEach
    void newRoot() {
        root = ZooKeeperFixture.newRoot();
        store = new TopologyStore(client, root, clock);
        store.createCell("shared", List.of("eu"), List.of(shard("shared-eu-1", "shared", "eu")));
        store.createCell("big", List.of("eu"), List.of(shard("big-eu-1", "big", "eu")));
    }

    private static Move planned(String id, String tenant, int plannedEpoch) {
        return Move.newBuilder().setMoveId(id).setTenantId(tenant).setFromCell("shared").setToCell("big")
                .setStep(MoveStep.PLANNED).setMaxPauseMs(2_000).setCreatedAtMs(1).setUpdatedAtMs(1)
                .setPlannedEpoch(plannedEpoch).setOwner("test").build();
    }

    @Test
    void startMove_recordsTheMove_andNamesItInThePlacement_inOneTransaction() throws Exception {
        Versioned<Move> m = store.startMove(planned("m1", "acme", 0), -1);

        assertThat(m.version()).isZero();
        assertThat(store.move("m1")).contains(m);
        Versioned<TenantPlacement> p = store.placement("acme").orElseThrow();
        assertThat(p.version()).isZero();
        assertThat(p.value()).isEqualTo(TenantPlacement.newBuilder().setTenantId("acme").setCell("shared")
                .setState(TenantState.ACTIVE).setMoveId("m1").build());
        // One transaction: both znodes were written at the same zxid.
        Stat move = client.checkExists().forPath(root + "/moves/m1");
        Stat tenant = client.checkExists().forPath(root + "/tenants/acme");
        assertThat(move.getCzxid()).isEqualTo(tenant.getMzxid());
        String json = new String(client.getData().forPath(root + "/moves/m1"), StandardCharsets.UTF_8);
        assertThat(json).startsWith("{\"move_id\":\"m1\",\"tenant_id\":\"acme\",\"from_cell\":\"shared\","
                + "\"to_cell\":\"big\",\"step\":\"PLANNED\"");
    }

    @Test
    void startMove_onAPlacedTenant_comparesAndSetsItsEpoch() {
        store.assignTenant("acme", "shared", -1);
        store.setTenantState("acme", TenantState.ACTIVE, null, 0);

        store.startMove(planned("m1", "acme", 2), 1);

        assertThat(store.placement("acme").orElseThrow().version()).isEqualTo(2);
        assertThatThrownBy(() -> store.startMove(planned("m2", "acme", 2), 1))
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("expected epoch 1, found epoch 2 (cell=shared, state=ACTIVE, move=m1)");
        assertThat(store.move("m2")).isEmpty();
    }

    @Test
    void startMove_repeatedWithTheSameMove_findsItsOwnTransaction() {
        Move m = planned("m1", "acme", 0);
        store.startMove(m, -1);

        assertThat(store.startMove(m, -1)).isEqualTo(new Versioned<>(m, 0));
        assertThat(store.placement("acme").orElseThrow().version()).isZero();
    }

    @Test
    void startMove_refusesATenantAMoveNamesAlready_andATakenMoveId_changingNothing() {
        store.startMove(planned("m1", "acme", 0), -1);
        store.setTenantState("acme", TenantState.ACTIVE, "m1", 0); // epoch 1, still naming m1

        assertThatThrownBy(() -> store.startMove(planned("m2", "acme", 2), 1))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("move m1 is running");
        assertThatThrownBy(() -> store.startMove(planned("m1", "other", 0), -1))
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("moves/m1 exists (version 0 (tenant=acme");
        assertThat(store.placement("other")).isEmpty();
        assertThat(store.moves()).hasSize(1);
    }

    @Test
    void startMove_refusesBadMoves_namingEveryProblem() {
        Move bad = planned("a/b", "acme", 5).toBuilder().setToCell("shared").setStep(MoveStep.COPYING).build();
        assertThatThrownBy(() -> store.startMove(bad, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("move_id: 'a/b'")
                .hasMessageContaining("from_cell and to_cell are both shared")
                .hasMessageContaining("not COPYING")
                .hasMessageContaining("planned_epoch 5");
        assertThatThrownBy(() -> store.startMove(planned("m1", "acme", 1), 0))
                .isInstanceOf(ConcurrentModificationException.class); // no placement at epoch 0
        assertThat(store.moves()).isEmpty();
        assertThat(store.placement("acme")).isEmpty();
    }

    @Test
    void racingStarts_ofOneTenant_fromOneEpoch_exactlyOneIsRecorded() throws Exception {
        int racers = 8;
        CyclicBarrier start = new CyclicBarrier(racers);
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        List<Future<Boolean>> results = new ArrayList<>();
        try {
            for (int i = 0; i < racers; i++) {
                Move m = planned("race-" + i, "acme", 0);
                results.add(pool.submit(() -> {
                    start.await(ZooKeeperFixture.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
                    try {
                        store.startMove(m, -1);
                        return true;
                    } catch (ConcurrentModificationException e) {
                        return false;
                    }
                }));
            }
            int won = 0;
            for (Future<Boolean> f : results) {
                won += f.get(ZooKeeperFixture.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS) ? 1 : 0;
            }
            assertThat(won).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
        List<Versioned<Move>> moves = store.moves();
        assertThat(moves).hasSize(1);
        TenantPlacement p = store.placement("acme").orElseThrow().value();
        assertThat(p.getMoveId()).isEqualTo(moves.get(0).value().getMoveId());
        assertThat(store.placement("acme").orElseThrow().version()).isZero();
    }

    @Test
    void updateMove_isACompareAndSetOnTheVersion_andARepeatFindsItsOwnWrite() {
        Move m = store.startMove(planned("m1", "acme", 0), -1).value();
        Move copying = m.toBuilder().setStep(MoveStep.COPYING).setUpdatedAtMs(2).build();

        assertThat(store.updateMove(copying, 0)).isEqualTo(1);
        assertThat(store.updateMove(copying, 0)).as("the same write repeated").isEqualTo(1);

        Move stale = m.toBuilder().setStep(MoveStep.ABORTING).build();
        assertThatThrownBy(() -> store.updateMove(stale, 0))
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("expected version 0, found version 1 (tenant=acme, shared -> big, step=COPYING");
        assertThat(store.move("m1")).contains(new Versioned<>(copying, 1));
        assertThatThrownBy(() -> store.updateMove(copying.toBuilder().setMoveId("nope").build(), 0))
                .isInstanceOf(ConcurrentModificationException.class).hasMessageContaining("no move");
        assertThatThrownBy(() -> store.updateMove(copying, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void moves_listsEveryMove_andAMissingMoveIsEmpty() {
        store.startMove(planned("m1", "acme", 0), -1);
        store.startMove(planned("m2", "beta", 0), -1);

        assertThat(store.moves()).extracting(v -> v.value().getMoveId()).containsExactlyInAnyOrder("m1", "m2");
        assertThat(store.move("m3")).isEmpty();
    }

    @Test
    void lease_isHeldByOneSessionAtATime_andReleasedOnClose() throws Exception {
        store.startMove(planned("m1", "acme", 0), -1);
        CuratorFramework other = ZooKeeperFixture.client(server, Duration.ofSeconds(10));
        try {
            MoveLease lease = MoveLease.tryAcquire(client, root, "m1", "mover-a").orElseThrow();
            lease.check();
            assertThat(MoveLease.tryAcquire(other, root, "m1", "mover-b")).isEmpty();
            assertThat(MoveLease.holder(other, root, "m1")).contains("mover-a");
            // The same session asking again holds it already.
            MoveLease again = MoveLease.tryAcquire(client, root, "m1", "mover-a").orElseThrow();

            lease.close();
            again.close();

            assertThatThrownBy(lease::check).isInstanceOf(Failure.class).hasMessageContaining("released");
            assertThat(MoveLease.holder(other, root, "m1")).isEmpty();
            MoveLease b = MoveLease.tryAcquire(other, root, "m1", "mover-b").orElseThrow();
            assertThat(MoveLease.holder(client, root, "m1")).contains("mover-b");
            b.close();
        } finally {
            other.close();
        }
        assertThatThrownBy(() -> MoveLease.tryAcquire(client, root, "nope", "x"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("does not exist");
    }

    @Test
    void lease_ofAMoverWhoseSessionEnds_goesToTheNextMover_andTheOldOneStopsActing() throws Exception {
        store.startMove(planned("m1", "acme", 0), -1);
        CuratorFramework crashed = ZooKeeperFixture.client(server, Duration.ofSeconds(10));
        try {
            MoveLease old = MoveLease.tryAcquire(crashed, root, "m1", "mover-a").orElseThrow();
            assertThat(MoveLease.tryAcquire(client, root, "m1", "mover-b")).isEmpty();

            expireOnServer(crashed.getZookeeperClient().getZooKeeper());

            await().atMost(ZooKeeperFixture.scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(20))
                    .until(() -> MoveLease.holder(client, root, "m1").isEmpty());
            Optional<MoveLease> taken = MoveLease.tryAcquire(client, root, "m1", "mover-b");
            assertThat(taken).isPresent();
            await().atMost(ZooKeeperFixture.scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(20))
                    .untilAsserted(() -> assertThatThrownBy(old::check).isInstanceOf(Failure.class)
                            .satisfies(e -> assertThat(((Failure) e).reason()).isEqualTo(Reason.TOPOLOGY_UNAVAILABLE))
                            .hasMessageContaining("lost"));
            old.close(); // gives up nothing: the znode is the new session's
            assertThat(MoveLease.holder(client, root, "m1")).contains("mover-b");
            taken.get().close();
        } finally {
            crashed.close();
        }
    }

    /** Ends {@code zk}'s session on the server: a second handle joins the session and closes it. */
    private static void expireOnServer(ZooKeeper zk) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(server.getConnectString(), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            assertThat(connected.await(ZooKeeperFixture.scaled(Duration.ofSeconds(10)).toMillis(),
                    TimeUnit.MILLISECONDS)).isTrue();
        } finally {
            twin.close();
        }
    }
}
