package io.lastunit.common.topology;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.curator.framework.recipes.cache.ChildData;

/**
 * Turns the cached znodes under a root into a {@link Topology}. Pure: no I/O, no state;
 * thread-safe. Znodes outside the layout of {@link TopologyPaths} (the root's folders,
 * {@code moves/}, {@code balancer/}) are ignored.
 *
 * <p>Hazard: a cache fills node by node, so it can hold a cell with only some of its shards
 * (during the initial load, after a resync). Placing items over a partial shard set would send
 * them to the wrong shard. A cell's shards are therefore used only when the cache holds exactly
 * as many as the {@code shards} znode says it has children (the set is fixed at creation, so that
 * count is final); until then the cell has no shards in the snapshot and routing to it is refused.
 */
final class TopologyReader {

    private TopologyReader() {
    }

    /**
     * @throws IllegalArgumentException when a value does not parse, disagrees with its path, or
     *     the snapshot breaks an invariant of {@link Topology#of}
     */
    static Topology read(TopologyPaths paths, Iterable<ChildData> nodes) {
        List<Cell> cells = new ArrayList<>();
        Map<String, Integer> shardCountByCell = new HashMap<>();
        Map<String, List<ShardInfo>> shardsByCell = new HashMap<>();
        List<LiveShard> live = new ArrayList<>();
        Map<String, Versioned<TenantPlacement>> tenants = new HashMap<>();
        for (ChildData node : nodes) {
            String[] seg = paths.relative(node.getPath());
            if (seg == null) {
                continue;
            }
            String path = node.getPath();
            if (seg.length == 2 && seg[0].equals(TopologyPaths.CELLS)) {
                Cell cell = TopologyCodec.decode(path, node.getData(), Cell.newBuilder());
                expect(path, "name", seg[1], cell.getName());
                cells.add(cell);
            } else if (seg.length == 3 && seg[0].equals(TopologyPaths.CELLS) && seg[2].equals(TopologyPaths.SHARDS)) {
                shardCountByCell.put(seg[1], node.getStat().getNumChildren());
            } else if (seg.length == 4 && seg[0].equals(TopologyPaths.CELLS) && seg[2].equals(TopologyPaths.SHARDS)) {
                ShardInfo shard = TopologyCodec.decode(path, node.getData(), ShardInfo.newBuilder());
                expect(path, "shard_id", seg[3], shard.getShardId());
                expect(path, "cell", seg[1], shard.getCell());
                shardsByCell.computeIfAbsent(seg[1], c -> new ArrayList<>()).add(shard);
            } else if (seg.length == 2 && seg[0].equals(TopologyPaths.LIVE)) {
                LiveShard l = TopologyCodec.decode(path, node.getData(), LiveShard.newBuilder());
                expect(path, "shard_id", seg[1], l.getShardId());
                live.add(l);
            } else if (seg.length == 2 && seg[0].equals(TopologyPaths.TENANTS)) {
                TenantPlacement p = TopologyCodec.decode(path, node.getData(), TenantPlacement.newBuilder());
                expect(path, "tenant_id", seg[1], p.getTenantId());
                tenants.put(seg[1], new Versioned<>(p, node.getStat().getVersion()));
            }
        }
        List<ShardInfo> shards = new ArrayList<>();
        for (Cell cell : cells) {
            List<ShardInfo> loaded = shardsByCell.getOrDefault(cell.getName(), List.of());
            Integer expected = shardCountByCell.get(cell.getName());
            if (expected != null && expected == loaded.size()) {
                shards.addAll(loaded);
            }
        }
        return Topology.of(cells, shards, live, tenants);
    }

    private static void expect(String path, String field, String fromPath, String fromValue) {
        if (!fromPath.equals(fromValue)) {
            throw new IllegalArgumentException(path + ": " + field + "=" + fromValue + " does not match its path");
        }
    }
}
