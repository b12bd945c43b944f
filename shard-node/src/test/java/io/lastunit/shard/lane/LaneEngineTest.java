package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which lane writes a bucket ({@link LaneEngine#laneOf(String, String, int, int)}). */
class LaneEngineTest {
    /**
     * These picks decide which lane owns a bucket. The lanes of one node must agree for as long as
     * it runs; a change here also moves every bucket to another lane, which benchmarks of a hot
     * item with several buckets would see as a different spread over the lanes.
     */
    @ParameterizedTest
    @CsvSource({
        "acme, sku-1, 0, 2, 10",
        "acme, sku-1, 1, 1, 9",
        "acme, sku-1, 7, 3, 3",
        "acme, sku-2, 0, 3, 11",
        "acme, sku-2, 7, 0, 12",
        "globex, ticket-42, 0, 1, 13",
        "globex, ticket-42, 1, 0, 12",
        "initech, x, 7, 0, 8",
        "t, i, 1, 1, 13",
    })
    void laneOf_isPinnedForever(String tenant, String item, int bucketNo, int ofFour, int ofSixteen) {
        assertThat(LaneEngine.laneOf(tenant, item, bucketNo, 4)).isEqualTo(ofFour);
        assertThat(LaneEngine.laneOf(tenant, item, bucketNo, 16)).isEqualTo(ofSixteen);
        assertThat(LaneEngine.laneOf(tenant, item, bucketNo, 1)).isZero();
    }

    @Test
    void laneOf_spreadsTheBucketsOfManyItemsEvenly_overFourLanes() {
        Map<Integer, Integer> counts = new HashMap<>();
        int buckets = 0;
        for (int i = 0; i < 2_000; i++) {
            for (int b = 0; b < 8; b++) {
                counts.merge(LaneEngine.laneOf("acme", "item-" + i, b, 4), 1, Integer::sum);
                buckets++;
            }
        }
        assertThat(counts).hasSize(4);
        int even = buckets / 4;
        assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween((int) (even * 0.9), (int) (even * 1.1)));
    }
}
