package io.lastunit.common.topology;

import static io.lastunit.common.topology.TopologyTest.shard;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TopologyStoreIT {
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
    }

    private static final List<ShardInfo> C1_SHARDS = List.of(
            shard("c1-eu-b", "c1", "eu"), shard("c1-eu-a", "c1", "eu"), shard("c1-us-a", "c1", "us"));

    @Test
    void createCell_writesCellAndShards_inOneTransaction() throws Exception {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);

        Cell c1 = store.cells().get(0);
        assertThat(c1.getName()).isEqualTo("c1");
        assertThat(c1.getRegionsList()).containsExactly("eu", "us");
        assertThat(c1.getCreatedAtMs()).isEqualTo(clock.millis());
        assertThat(store.shards("c1")).extracting(ShardInfo::getShardId).containsExactly("c1-eu-a", "c1-eu-b", "c1-us-a");
        assertThat(store.shards("c1")).containsExactlyInAnyOrderElementsOf(C1_SHARDS);
        // One ZooKeeper transaction: every znode it created carries the same creation zxid.
        long czxid = client.checkExists().forPath(root + "/cells/c1").getCzxid();
        assertThat(client.checkExists().forPath(root + "/cells/c1/shards").getCzxid()).isEqualTo(czxid);
        for (ShardInfo s : C1_SHARDS) {
            assertThat(client.checkExists().forPath(root + "/cells/c1/shards/" + s.getShardId()).getCzxid()).isEqualTo(czxid);
        }
    }

    @Test
    void values_areProtobufJson_readableWithZkCli() throws Exception {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);
        String json = new String(client.getData().forPath(root + "/cells/c1/shards/c1-eu-a"), StandardCharsets.UTF_8);
        assertThat(json).isEqualTo("{\"shard_id\":\"c1-eu-a\",\"cell\":\"c1\",\"region\":\"eu\",\"address\":\"c1-eu-a:9000\"}");
    }

    @Test
    void createCell_refusesAnExistingCell_andChangesNothing() {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);

        assertThatThrownBy(() -> store.createCell("c1", List.of("eu"), List.of(shard("c1-eu-z", "c1", "eu"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cell c1 exists");
        assertThat(store.shards("c1")).containsExactlyInAnyOrderElementsOf(C1_SHARDS);
        assertThat(store.cells().get(0).getRegionsList()).containsExactly("eu", "us");
    }

    @Test
    void createCell_refusesAShardIdTakenByAnotherCell_andCreatesNothing() {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);

        assertThatThrownBy(() -> store.createCell("c2", List.of("eu"),
                List.of(shard("c2-eu-a", "c2", "eu"), shard("c1-eu-a", "c2", "eu"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("c1-eu-a (in cell c1)");
        assertThat(store.cells()).extracting(Cell::getName).containsExactly("c1");
        assertThat(store.shards("c2")).isEmpty();
    }

    @Test
    void concurrentCreateCells_neverShareAShardId() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 25; round++) {
                String shardId = "dup-" + round;
                CyclicBarrier together = new CyclicBarrier(2);
                List<Future<Boolean>> created = new ArrayList<>();
                for (String cell : List.of("a" + round, "b" + round)) {
                    created.add(pool.submit(() -> {
                        together.await();
                        try {
                            store.createCell(cell, List.of("eu"), List.of(shard(shardId, cell, "eu")));
                            return true;
                        } catch (ConcurrentModificationException | IllegalStateException refused) {
                            return false;
                        }
                    }));
                }
                int wins = 0;
                for (Future<Boolean> f : created) {
                    wins += f.get(scaledSeconds(10), TimeUnit.SECONDS) ? 1 : 0;
                }
                assertThat(wins).as("round %d: cells created with shard %s", round, shardId).isEqualTo(1);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static long scaledSeconds(long seconds) {
        return Math.max(1, ZooKeeperFixture.scaled(Duration.ofSeconds(seconds)).toSeconds());
    }

    @Test
    void createCell_refusesBadInput_namingEveryProblem() {
        assertThatThrownBy(() -> store.createCell("c/1", List.of("eu", "us", "eu"), List.of(
                shard("a", "c/1", "eu"), shard("a", "c/1", "ap"), shard("b", "other", "eu"),
                ShardInfo.newBuilder(shard("c", "c/1", "eu")).setAddress("").build())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cell: 'c/1'")
                .hasMessageContaining("repeat a region")
                .hasMessageContaining("shard id a appears twice")
                .hasMessageContaining("shard a is in region 'ap'")
                .hasMessageContaining("shard b names cell 'other'")
                .hasMessageContaining("shard c has address ''")
                .hasMessageContaining("region us has no shard");
        assertThatThrownBy(() -> store.createCell("c1", List.of(), List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one region");
        assertThat(store.cells()).isEmpty();
    }

    @Test
    void ensureSharedCell_createsItOnce_andCreateCellAdoptsIt() {
        store.ensureSharedCell(List.of("eu", "us"));
        store.ensureSharedCell(List.of("us", "eu"));
        assertThat(store.cells()).extracting(Cell::getName).containsExactly("shared");
        assertThat(store.shards("shared")).isEmpty();
        assertThatThrownBy(() -> store.ensureSharedCell(List.of("eu")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("exists with regions [eu, us]");

        store.createCell("shared", List.of("eu", "us"), List.of(shard("sh-eu", "shared", "eu"), shard("sh-us", "shared", "us")));
        assertThat(store.shards("shared")).extracting(ShardInfo::getShardId).containsExactly("sh-eu", "sh-us");
        assertThatThrownBy(() -> store.createCell("shared", List.of("eu"), List.of(shard("sh-eu-2", "shared", "eu"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cell shared exists");
    }

    @Test
    void assignTenant_createsThenCompareAndSets_epochIncrementsPerWrite() {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);
        store.createCell("c2", List.of("eu"), List.of(shard("c2-eu-a", "c2", "eu")));
        assertThat(store.epoch("acme")).isEqualTo(-1);
        assertThat(store.placement("acme")).isEmpty();

        assertThat(store.assignTenant("acme", "c1", -1)).isEqualTo(0);
        assertThat(store.epoch("acme")).isEqualTo(0);
        assertThat(store.assignTenant("acme", "c2", 0)).isEqualTo(1);
        assertThat(store.assignTenant("acme", "c1", 1)).isEqualTo(2);

        Versioned<TenantPlacement> p = store.placement("acme").orElseThrow();
        assertThat(p.version()).isEqualTo(2);
        assertThat(p.value()).isEqualTo(TenantPlacement.newBuilder()
                .setTenantId("acme").setCell("c1").setState(TenantState.ACTIVE).build());
    }

    @Test
    void assignTenant_refusesAStaleEpoch_andChangesNothing() throws Exception {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);
        store.createCell("c2", List.of("eu"), List.of(shard("c2-eu-a", "c2", "eu")));
        store.assignTenant("acme", "c1", -1);
        store.assignTenant("acme", "c1", 0);
        Stat before = client.checkExists().forPath(root + "/tenants/acme");

        assertThatThrownBy(() -> store.assignTenant("acme", "c2", 0))
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining(root + "/tenants/acme")
                .hasMessageContaining("expected epoch 0")
                .hasMessageContaining("found epoch 1 (cell=c1, state=ACTIVE)");
        assertThatThrownBy(() -> store.assignTenant("acme", "c2", -1))
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("expected epoch -1 (no placement), found epoch 1");
        assertThatThrownBy(() -> store.assignTenant("acme", "c2", 5))
                .isInstanceOf(ConcurrentModificationException.class);

        assertThat(client.checkExists().forPath(root + "/tenants/acme").getMzxid()).isEqualTo(before.getMzxid());
        assertThat(store.placement("acme").orElseThrow().value().getCell()).isEqualTo("c1");
        assertThat(store.epoch("acme")).isEqualTo(1);
    }

    @Test
    void assignTenant_repeatedAfterItApplied_findsItsOwnWrite() {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);
        assertThat(store.assignTenant("acme", "c1", -1)).isEqualTo(0);
        assertThat(store.assignTenant("acme", "c1", -1)).isEqualTo(0);
        assertThat(store.assignTenant("acme", "c1", 0)).isEqualTo(1);
        assertThat(store.assignTenant("acme", "c1", 0)).isEqualTo(1);
        assertThat(store.epoch("acme")).isEqualTo(1);
    }

    @Test
    void assignTenant_refusesUnknownAndShardlessCells() {
        store.ensureSharedCell(List.of("eu"));
        assertThatThrownBy(() -> store.assignTenant("acme", "nope", -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown cell nope");
        assertThatThrownBy(() -> store.assignTenant("acme", "shared", -1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cell shared has no shards");
        assertThatThrownBy(() -> store.assignTenant("acme", "c1", -2))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(store.placement("acme")).isEmpty();
    }

    @Test
    void setTenantState_marksMovingAndBack_keepingTheCell_underCompareAndSet() {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);
        store.assignTenant("acme", "c1", -1);

        assertThat(store.setTenantState("acme", TenantState.MOVING, "move-1", 0)).isEqualTo(1);
        TenantPlacement moving = store.placement("acme").orElseThrow().value();
        assertThat(moving.getState()).isEqualTo(TenantState.MOVING);
        assertThat(moving.getMoveId()).isEqualTo("move-1");
        assertThat(moving.getCell()).isEqualTo("c1");

        assertThatThrownBy(() -> store.setTenantState("acme", TenantState.ACTIVE, "", 0))
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("found epoch 1 (cell=c1, state=MOVING, move=move-1)");
        assertThat(store.placement("acme").orElseThrow().value()).isEqualTo(moving);

        assertThat(store.setTenantState("acme", TenantState.ACTIVE, null, 1)).isEqualTo(2);
        assertThat(store.placement("acme").orElseThrow().value().getMoveId()).isEmpty();
    }

    @Test
    void setTenantState_onATenantWithoutPlacement_placesItInShared() {
        assertThat(store.setTenantState("acme", TenantState.MOVING, "move-7", -1)).isEqualTo(0);
        TenantPlacement p = store.placement("acme").orElseThrow().value();
        assertThat(p.getCell()).isEqualTo(Topology.SHARED_CELL);
        assertThat(p.getState()).isEqualTo(TenantState.MOVING);
    }

    @Test
    void setTenantState_activeWithAMoveId_isAMoveCopyingTheTenant_whileItSells() {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);
        store.assignTenant("acme", "c1", -1);

        assertThat(store.setTenantState("acme", TenantState.ACTIVE, "move-2", 0)).isEqualTo(1);

        TenantPlacement p = store.placement("acme").orElseThrow().value();
        assertThat(p.getState()).isEqualTo(TenantState.ACTIVE);
        assertThat(p.getMoveId()).isEqualTo("move-2");
        assertThat(p.getCell()).isEqualTo("c1");
    }

    @Test
    void assignTenant_namingAMove_placesTheTenantActiveInTheCell_withTheMove() {
        store.createCell("c1", List.of("eu", "us"), C1_SHARDS);
        store.setTenantState("acme", TenantState.MOVING, "move-3", -1);

        assertThat(store.assignTenant("acme", "c1", "move-3", 0)).isEqualTo(1);

        TenantPlacement p = store.placement("acme").orElseThrow().value();
        assertThat(p).isEqualTo(TenantPlacement.newBuilder().setTenantId("acme").setCell("c1")
                .setState(TenantState.ACTIVE).setMoveId("move-3").build());
        assertThatThrownBy(() -> store.assignTenant("acme", "c1", "m/3", 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("move id");
    }

    @Test
    void setTenantState_refusesInconsistentArguments() {
        assertThatThrownBy(() -> store.setTenantState("acme", TenantState.MOVING, "", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MOVING needs a move id");
        assertThatThrownBy(() -> store.setTenantState("acme", TenantState.ACTIVE, "m/1", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("move id 'm/1' is not a name");
        assertThatThrownBy(() -> store.setTenantState("acme", TenantState.TENANT_STATE_UNSPECIFIED, "", -1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.setTenantState("a/b", TenantState.ACTIVE, "", -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tenant: 'a/b'");
        assertThat(store.placement("acme")).isEmpty();
    }
}
