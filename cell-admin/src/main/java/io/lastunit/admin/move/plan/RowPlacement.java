package io.lastunit.admin.move.plan;

import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Placement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where each row a source shard exported goes in the target cell: to the shard that placement
 * ({@link Placement}, rendezvous hashing of {@code (tenant, item)}) gives the row's item among the
 * target cell's shards of the source shard's region — the shard the routers will send the item's
 * calls to after the flip. Rows keep their order within their table, and tables keep their order
 * (items first), so every row reaches its target after its item.
 *
 * <p>Pure; stateless. Hazard: the target shards must be the whole set of the target cell in that
 * region; a partial set would place items where their calls never go.
 */
public final class RowPlacement {
    private RowPlacement() {
    }

    /**
     * @param targets the target cell's shards in the source shard's region (not empty)
     * @return per target shard id, the rows it takes, in table order; shards that take none are absent
     * @throws IllegalArgumentException when {@code targets} is empty and there are rows to place
     */
    public static Map<String, List<TenantRows>> route(String tenant, List<TenantRows> tables, List<ShardInfo> targets) {
        Map<String, List<TenantRows>> out = new LinkedHashMap<>();
        Map<String, String> shardOfItem = new HashMap<>();
        for (TenantRows table : tables) {
            Map<String, TenantRows.Builder> byShard = new LinkedHashMap<>();
            for (TenantRow row : table.getRowsList()) {
                if (targets.isEmpty()) {
                    throw new IllegalArgumentException("no target shard for tenant " + tenant + ", item "
                            + row.getItemId() + " (" + table.getTable() + ")");
                }
                String shard = shardOfItem.computeIfAbsent(row.getItemId(),
                        item -> Placement.pick(tenant, item, targets).getShardId());
                byShard.computeIfAbsent(shard, s -> TenantRows.newBuilder().setTable(table.getTable())).addRows(row);
            }
            for (Map.Entry<String, TenantRows.Builder> e : byShard.entrySet()) {
                out.computeIfAbsent(e.getKey(), s -> new ArrayList<>()).add(e.getValue().build());
            }
        }
        return out;
    }
}
