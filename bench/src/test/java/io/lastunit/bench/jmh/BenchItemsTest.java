package io.lastunit.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.common.Limits;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BenchItemsTest {

    @Test
    void itemIds_areNumberedFromZero() {
        assertThat(BenchItems.itemIds(3)).containsExactly("item-0", "item-1", "item-2");
        assertThat(BenchItems.itemIds(1000)).hasSize(1000).doesNotHaveDuplicates();
        assertThatThrownBy(() -> BenchItems.itemIds(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void totalsAndTtl_areWhatTheShardAccepts() {
        Limits defaults = Limits.defaults(Set.of(BenchItems.REGION));
        assertThat(BenchItems.TOTAL).isLessThanOrEqualTo(defaults.itemTotalMax());
        assertThat(BenchItems.HOLD_TTL_MS).isEqualTo(defaults.holdTtlDefaultMs());
    }

    @Test
    void fingerprint_isStable_andDependsOnEveryPart() {
        String fp = BenchItems.fingerprint("item-0", 1, "b", "local", 0);
        assertThat(fp).hasSize(22).isEqualTo(BenchItems.fingerprint("item-0", 1, "b", "local", 0));
        assertThat(BenchItems.fingerprint("item-1", 1, "b", "local", 0)).isNotEqualTo(fp);
        assertThat(BenchItems.fingerprint("item-0", 2, "b", "local", 0)).isNotEqualTo(fp);
        assertThat(BenchItems.fingerprint("item-0", 1, "c", "local", 0)).isNotEqualTo(fp);
        assertThat(BenchItems.fingerprint("item-0", 1, "b", "eu", 0)).isNotEqualTo(fp);
        assertThat(BenchItems.fingerprint("item-0", 1, "b", "local", 1000)).isNotEqualTo(fp);
    }

    @Test
    void fingerprint_isTheLaneEngines() throws Exception {
        java.lang.reflect.Method engines = io.lastunit.shard.lane.LaneEngine.class.getDeclaredMethod("fingerprint",
                io.lastunit.api.inventory.v1.ReserveRequest.class);
        engines.setAccessible(true);
        var request = io.lastunit.api.inventory.v1.ReserveRequest.newBuilder().setTenantId(BenchItems.TENANT)
                .setItemId("item-7").setQuantity(1).setIdempotencyKey("k").setBuyerId("b-c1-x-9")
                .setRegion(BenchItems.REGION).build();
        assertThat(BenchItems.fingerprint("item-7", 1, "b-c1-x-9", BenchItems.REGION, 0))
                .isEqualTo(engines.invoke(null, request));
    }

    @Test
    void ledger_isConsistent_onlyWhenEveryHoldIsCounted() {
        assertThat(new PlainJdbc.Ledger(5, 5, 5, 0).consistent()).isTrue();
        assertThat(new PlainJdbc.Ledger(5, 4, 5, 0).consistent()).isFalse();
        assertThat(new PlainJdbc.Ledger(5, 5, 6, 0).consistent()).isFalse();
        assertThat(new PlainJdbc.Ledger(5, 5, 5, 1).consistent()).isFalse();
    }
}
