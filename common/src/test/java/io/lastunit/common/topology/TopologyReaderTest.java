package io.lastunit.common.topology;

import static io.lastunit.common.topology.TopologyTest.cell;
import static io.lastunit.common.topology.TopologyTest.shard;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Message;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

class TopologyReaderTest {
    private final TopologyPaths paths = new TopologyPaths("/lu");

    static ChildData node(String path, byte[] data, int version, int numChildren) {
        Stat stat = new Stat();
        stat.setVersion(version);
        stat.setNumChildren(numChildren);
        return new ChildData(path, stat, data);
    }

    static ChildData node(String path, Message value) {
        return node(path, TopologyCodec.encode(value), 0, 0);
    }

    private List<ChildData> cellWithShards(String name, int declared, String... shardIds) {
        List<ChildData> nodes = new ArrayList<>();
        nodes.add(node(paths.cell(name), cell(name, "eu")));
        nodes.add(node(paths.shards(name), new byte[0], 0, declared));
        for (String id : shardIds) {
            nodes.add(node(paths.shard(name, id), shard(id, name, "eu")));
        }
        return nodes;
    }

    @Test
    void readsCellsShardsLiveAndTenants_withTheZnodeVersionAsEpoch() {
        List<ChildData> nodes = new ArrayList<>(cellWithShards("shared", 2, "s1", "s2"));
        nodes.add(node(paths.live("s1"), LiveShard.newBuilder().setShardId("s1").setAddress("a:1").build()));
        nodes.add(node(paths.tenant("acme"), TopologyCodec.encode(TenantPlacement.newBuilder()
                .setTenantId("acme").setCell("shared").setState(TenantState.ACTIVE).build()), 4, 0));

        Topology t = TopologyReader.read(paths, nodes);

        assertThat(t.shards("shared", "eu")).extracting(ShardInfo::getShardId).containsExactly("s1", "s2");
        assertThat(t.isLive("s1")).isTrue();
        assertThat(t.epochOf("acme")).isEqualTo(4);
    }

    @Test
    void cellWithSomeShardsCached_isNotRoutable_untilAllAre() {
        List<ChildData> partial = cellWithShards("big", 3, "b1", "b2");
        Topology t = TopologyReader.read(paths, partial);
        assertThat(t.cell("big")).isPresent();
        assertThat(t.shards("big", "eu")).isEmpty();
        assertThat(t.shardFor("x", "item", "eu")).isEmpty();

        List<ChildData> all = cellWithShards("big", 3, "b1", "b2", "b3");
        assertThat(TopologyReader.read(paths, all).shards("big", "eu")).hasSize(3);
    }

    @Test
    void shardsWithoutTheirCellOrShardsNode_areLeftOut() {
        List<ChildData> nodes = List.of(
                node(paths.cell("c"), cell("c", "eu")),
                node(paths.shard("c", "s1"), shard("s1", "c", "eu")),
                node(paths.shard("ghost", "g1"), shard("g1", "ghost", "eu")));
        Topology t = TopologyReader.read(paths, nodes);
        assertThat(t.shards("c")).isEmpty();
        assertThat(t.shard("g1")).isEmpty();
    }

    @Test
    void ignoresNodesOutsideTheLayout() {
        List<ChildData> nodes = List.of(
                node("/lu", new byte[0], 0, 3),
                node(paths.cells(), new byte[0], 5, 0),
                node("/lu/moves/m1", "{\"whatever\":1}".getBytes(StandardCharsets.UTF_8), 0, 0),
                node("/lu/balancer/leader/_c_x-latch-0001", "10.0.0.1".getBytes(StandardCharsets.UTF_8), 0, 0),
                node("/other/cells/x", "junk".getBytes(StandardCharsets.UTF_8), 0, 0));
        assertThat(TopologyReader.read(paths, nodes).cells()).isEmpty();
    }

    @Test
    void ignoresUnknownJsonFields_forRollingUpgrades() {
        byte[] newer = "{\"name\":\"c\",\"regions\":[\"eu\"],\"added_later\":true}".getBytes(StandardCharsets.UTF_8);
        Topology t = TopologyReader.read(paths, List.of(node(paths.cell("c"), newer, 0, 0)));
        assertThat(t.cell("c").orElseThrow().getRegionsList()).containsExactly("eu");
    }

    @Test
    void refusesAValueThatDoesNotParse() {
        List<ChildData> nodes = List.of(node(paths.tenant("acme"), "not json".getBytes(StandardCharsets.UTF_8), 0, 0));
        assertThatThrownBy(() -> TopologyReader.read(paths, nodes))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/lu/tenants/acme")
                .hasMessageContaining("TenantPlacement");
    }

    @Test
    void refusesAValueThatDisagreesWithItsPath() {
        List<ChildData> nodes = List.of(node(paths.live("s1"), LiveShard.newBuilder().setShardId("s2").build()));
        assertThatThrownBy(() -> TopologyReader.read(paths, nodes))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/lu/live/s1: shard_id=s2 does not match its path");
    }

    @Test
    void codec_writesProtoFieldNamesOnOneLine() {
        String json = new String(TopologyCodec.encode(shard("s1", "c", "eu")), StandardCharsets.UTF_8);
        assertThat(json).isEqualTo("{\"shard_id\":\"s1\",\"cell\":\"c\",\"region\":\"eu\",\"address\":\"s1:9000\"}");
    }
}
