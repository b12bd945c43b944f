package io.lastunit.balancer.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.lastunit.common.invariant.ItemKey;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DemandTrackerTest {
    private static final ItemKey ITEM = new ItemKey("acme", "shoe");
    private static final long SECOND = 1_000_000_000L;

    private static ItemView view(long euReserves, long usReserves, String usShard) {
        return new ItemView(ITEM, "eu", List.of(new RegionLevel("eu", "s-eu", 10, 10, false, euReserves),
                new RegionLevel("us", usShard, 10, 10, false, usReserves)), true);
    }

    @Test
    void rate_isTheCounterDifferenceOverTheWindow() {
        DemandTracker d = new DemandTracker(Duration.ofSeconds(10), 100);
        d.observe(view(0, 0, "s-us"), 0);
        assertThat(d.rates(ITEM)).isEmpty(); // one sample: no rate yet
        d.observe(view(10, 100, "s-us"), SECOND);
        d.observe(view(20, 300, "s-us"), 2 * SECOND);
        assertThat(d.rates(ITEM).get("eu")).isCloseTo(10.0, within(1e-9));
        assertThat(d.rates(ITEM).get("us")).isCloseTo(150.0, within(1e-9));
    }

    @Test
    void oldSamplesLeaveTheWindow() {
        DemandTracker d = new DemandTracker(Duration.ofSeconds(2), 100);
        d.observe(view(0, 0, "s-us"), 0);
        d.observe(view(0, 1_000, "s-us"), SECOND);   // a burst long ago
        d.observe(view(0, 1_000, "s-us"), 10 * SECOND);
        d.observe(view(0, 1_010, "s-us"), 11 * SECOND);
        assertThat(d.rates(ITEM).get("us")).isCloseTo(10.0, within(1e-9));
    }

    @Test
    void aCounterThatWentDown_orAnotherShard_restartsTheSeries() {
        DemandTracker d = new DemandTracker(Duration.ofSeconds(10), 100);
        d.observe(view(0, 500, "s-us"), 0);
        d.observe(view(0, 600, "s-us"), SECOND);
        d.observe(view(0, 5, "s-us"), 2 * SECOND); // the shard node restarted
        assertThat(d.rates(ITEM)).doesNotContainKey("us");
        d.observe(view(0, 15, "s-us"), 3 * SECOND);
        assertThat(d.rates(ITEM).get("us")).isCloseTo(10.0, within(1e-9));
        d.observe(view(0, 20, "s-us-2"), 4 * SECOND);
        assertThat(d.rates(ITEM)).doesNotContainKey("us");
    }

    @Test
    void samplesAreBounded_andItemsNotSeenAreForgotten() {
        DemandTracker d = new DemandTracker(Duration.ofHours(1), 3);
        for (int i = 0; i < 10; i++) {
            d.observe(view(0, i * 10L, "s-us"), i * SECOND);
        }
        assertThat(d.rates(ITEM).get("us")).isCloseTo(10.0, within(1e-9));
        assertThat(d.tracked()).isEqualTo(2);
        d.retain(Set.of());
        assertThat(d.tracked()).isZero();
        assertThat(d.rates(ITEM)).isEmpty();
    }
}
