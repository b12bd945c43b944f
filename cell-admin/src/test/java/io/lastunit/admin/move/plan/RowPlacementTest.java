package io.lastunit.admin.move.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RowPlacementTest {
    private static final List<ShardInfo> TARGETS = List.of(shard("big-eu-1"), shard("big-eu-2"), shard("big-eu-3"));

    private static ShardInfo shard(String id) {
        return ShardInfo.newBuilder().setShardId(id).setCell("big").setRegion("eu").setAddress(id + ":1").build();
    }

    private static TenantRows rows(String table, String... items) {
        TenantRows.Builder b = TenantRows.newBuilder().setTable(table);
        for (int i = 0; i < items.length; i++) {
            b.addRows(TenantRow.newBuilder().setItemId(items[i]).setJson("{\"n\":" + i + "}"));
        }
        return b.build();
    }

    @Test
    void everyRow_goesToTheShardPlacementGivesItsItem_inTableOrder() {
        List<String> items = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            items.add("sku-" + i);
        }
        List<TenantRows> tables = List.of(rows("items", items.toArray(new String[0])),
                rows("buckets", items.toArray(new String[0])), rows("holds", "sku-3", "sku-3", "sku-7"));

        Map<String, List<TenantRows>> routed = RowPlacement.route("acme", tables, TARGETS);

        int total = 0;
        for (Map.Entry<String, List<TenantRows>> e : routed.entrySet()) {
            List<String> order = e.getValue().stream().map(TenantRows::getTable).toList();
            assertThat(order).as(e.getKey()).isSubsetOf("items", "buckets", "holds");
            assertThat(order.get(0)).isEqualTo("items");
            for (TenantRows t : e.getValue()) {
                for (TenantRow r : t.getRowsList()) {
                    assertThat(Placement.pick("acme", r.getItemId(), TARGETS).getShardId()).isEqualTo(e.getKey());
                    total++;
                }
            }
        }
        assertThat(total).isEqualTo(83);
        assertThat(routed).as("40 items spread over the three shards").hasSize(3);
        String shardOf3 = Placement.pick("acme", "sku-3", TARGETS).getShardId();
        TenantRows holds = routed.get(shardOf3).stream().filter(t -> t.getTable().equals("holds")).findFirst()
                .orElseThrow();
        assertThat(holds.getRowsList()).extracting(TenantRow::getJson).startsWith("{\"n\":0}", "{\"n\":1}");
    }

    @Test
    void noRows_goNowhere_evenWithoutTargets_butRowsWithoutATargetAreRefused() {
        assertThat(RowPlacement.route("acme", List.of(rows("items")), List.of())).isEmpty();
        assertThatThrownBy(() -> RowPlacement.route("acme", List.of(rows("items", "x")), List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("item x");
    }
}
