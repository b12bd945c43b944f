package io.lastunit.balancer.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.common.invariant.ItemKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ItemViewTest {
    private static final ItemKey ITEM = new ItemKey("acme", "shoe");

    private static ItemLevel level(String region, long available) {
        return ItemLevel.newBuilder().setTenantId("acme").setItemId("shoe").setRegion(region).setHomeRegion("eu")
                .addAllRegions(List.of("eu", "us")).setBase(100).setAllotment(available).setAvailable(available)
                .setState("ACTIVE").setReserves(7).build();
    }

    @Test
    void of_assemblesOneRegionPerShard_withTotals() {
        Map<String, ItemLevel> levels = new LinkedHashMap<>();
        levels.put("s-us", level("us", 30));
        levels.put("s-eu", level("eu", 70));
        ItemView v = ItemView.of(ITEM, levels);
        assertThat(v.homeRegion()).isEqualTo("eu");
        assertThat(v.home().shardId()).isEqualTo("s-eu");
        assertThat(v.available()).isEqualTo(100);
        assertThat(v.base()).isEqualTo(200);
        assertThat(v.multiRegion()).isTrue();
        assertThat(v.active()).isTrue();
        assertThat(v.region("us").orElseThrow().reserves()).isEqualTo(7);
    }

    @Test
    void of_refusesAnItemWithARegionMissing() {
        assertThatThrownBy(() -> ItemView.of(ITEM, Map.of("s-eu", level("eu", 70))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no level for region(s) [us]");
    }

    @Test
    void of_refusesShardsThatDisagree() {
        Map<String, ItemLevel> levels = new LinkedHashMap<>();
        levels.put("s-eu", level("eu", 70));
        levels.put("s-us", level("us", 30).toBuilder().setHomeRegion("us").build());
        assertThatThrownBy(() -> ItemView.of(ITEM, levels)).hasMessageContaining("disagree");
        Map<String, ItemLevel> twice = new LinkedHashMap<>();
        twice.put("s-eu", level("eu", 70));
        twice.put("s-eu2", level("eu", 70));
        assertThatThrownBy(() -> ItemView.of(ITEM, twice)).hasMessageContaining("two shards report region eu");
    }

    @Test
    void anItemNotActiveOnSomeShard_isNotActive() {
        Map<String, ItemLevel> levels = new LinkedHashMap<>();
        levels.put("s-eu", level("eu", 70));
        levels.put("s-us", level("us", 30).toBuilder().setState("FROZEN").build());
        assertThat(ItemView.of(ITEM, levels).active()).isFalse();
    }
}
