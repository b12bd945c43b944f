package io.lastunit.common.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopologyTest {

    static Cell cell(String name, String... regions) {
        return Cell.newBuilder().setName(name).addAllRegions(List.of(regions)).build();
    }

    static ShardInfo shard(String id, String cell, String region) {
        return ShardInfo.newBuilder().setShardId(id).setCell(cell).setRegion(region).setAddress(id + ":9000").build();
    }

    static Versioned<TenantPlacement> placed(String tenant, String cell, TenantState state, int epoch) {
        return new Versioned<>(TenantPlacement.newBuilder().setTenantId(tenant).setCell(cell).setState(state).build(), epoch);
    }

    private final Topology topology = Topology.of(
            List.of(cell("shared", "eu", "us"), cell("big", "eu")),
            List.of(shard("sh-eu-2", "shared", "eu"), shard("sh-eu-1", "shared", "eu"), shard("sh-us-1", "shared", "us"),
                    shard("big-1", "big", "eu"), shard("big-2", "big", "eu")),
            List.of(LiveShard.newBuilder().setShardId("big-1").setAddress("big-1:9000").build()),
            Map.of("acme", placed("acme", "big", TenantState.MOVING, 7)));

    @Test
    void tenantWithoutPlacement_livesInSharedCell_active_epochMinusOne() {
        assertThat(topology.cellOf("nobody")).isEqualTo("shared");
        assertThat(topology.epochOf("nobody")).isEqualTo(-1);
        assertThat(topology.stateOf("nobody")).isEqualTo(TenantState.ACTIVE);
        assertThat(topology.placement("nobody")).isEmpty();
    }

    @Test
    void placedTenant_hasItsCellStateAndEpoch() {
        assertThat(topology.cellOf("acme")).isEqualTo("big");
        assertThat(topology.epochOf("acme")).isEqualTo(7);
        assertThat(topology.stateOf("acme")).isEqualTo(TenantState.MOVING);
    }

    @Test
    void moveOf_isThePlacementsMoveId_andEmptyWithoutOne() {
        Topology t = Topology.of(List.of(cell("shared", "eu")), List.of(shard("sh-eu-1", "shared", "eu")), List.of(),
                Map.of("acme", new Versioned<>(TenantPlacement.newBuilder().setTenantId("acme").setCell("shared")
                        .setState(TenantState.ACTIVE).setMoveId("m1").build(), 3)));
        assertThat(t.moveOf("acme")).isEqualTo("m1");
        assertThat(t.stateOf("acme")).isEqualTo(TenantState.ACTIVE);
        assertThat(t.moveOf("nobody")).isEmpty();
        assertThat(topology.moveOf("acme")).isEmpty();
    }

    @Test
    void shards_areSortedById_perCellAndRegion() {
        assertThat(topology.shards("shared", "eu")).extracting(ShardInfo::getShardId).containsExactly("sh-eu-1", "sh-eu-2");
        assertThat(topology.shards("shared", "us")).extracting(ShardInfo::getShardId).containsExactly("sh-us-1");
        assertThat(topology.shards("shared")).extracting(ShardInfo::getShardId)
                .containsExactly("sh-eu-1", "sh-eu-2", "sh-us-1");
        assertThat(topology.shards("big", "us")).isEmpty();
        assertThat(topology.shards("nope", "eu")).isEmpty();
    }

    @Test
    void shardFor_picksOverTheTenantsCellInTheRegion() {
        assertThat(topology.shardFor("acme", "sku-1", "eu"))
                .contains(Placement.pick("acme", "sku-1", List.of(shard("big-1", "big", "eu"), shard("big-2", "big", "eu"))));
        assertThat(topology.shardFor("other", "sku-1", "us")).map(ShardInfo::getShardId).contains("sh-us-1");
        assertThat(topology.shardFor("acme", "sku-1", "us")).isEmpty();
    }

    @Test
    void shardFor_ignoresLiveness() {
        for (int i = 0; i < 50; i++) {
            assertThat(topology.shardFor("acme", "item-" + i, "eu")).isPresent();
        }
        assertThat(topology.isLive("big-1")).isTrue();
        assertThat(topology.isLive("big-2")).isFalse();
        assertThat(topology.liveShardIds()).containsExactly("big-1");
        assertThat(topology.liveShard("big-1").orElseThrow().getAddress()).isEqualTo("big-1:9000");
    }

    @Test
    void lookups_byName() {
        assertThat(topology.cells()).extracting(Cell::getName).containsExactly("big", "shared");
        assertThat(topology.cell("big")).isPresent();
        assertThat(topology.shard("sh-us-1").orElseThrow().getRegion()).isEqualTo("us");
        assertThat(topology.shard("nope")).isEmpty();
    }

    @Test
    void empty_hasNothingButStillAnswers() {
        assertThat(Topology.EMPTY.cells()).isEmpty();
        assertThat(Topology.EMPTY.cellOf("acme")).isEqualTo("shared");
        assertThat(Topology.EMPTY.shardFor("acme", "x", "eu")).isEmpty();
    }

    @Test
    void of_refusesBrokenInvariants_namingEach() {
        assertThatThrownBy(() -> Topology.of(
                List.of(cell("a", "eu")),
                List.of(shard("s1", "a", "eu"), shard("s1", "a", "eu"), shard("s2", "ghost", "eu"), shard("s3", "a", "us")),
                List.of(),
                Map.of("t1", placed("t2", "a", TenantState.ACTIVE, 0))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shard s1 appears twice")
                .hasMessageContaining("shard s2 is in unknown cell ghost")
                .hasMessageContaining("shard s3 is in region us")
                .hasMessageContaining("tenant t1 holds the placement of tenant_id=t2");
    }

    @Test
    void snapshot_isUnmodifiable() {
        assertThatThrownBy(() -> topology.shards("shared", "eu").add(shard("x", "shared", "eu")))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> topology.tenants().clear()).isInstanceOf(UnsupportedOperationException.class);
    }
}
