package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.common.metrics.Scrape;
import java.util.List;
import org.junit.jupiter.api.Test;

class TopViewTest {
    private static Scrape shard(double created, double batches, double ops, double le1ms, double inf, double drift,
                                double paused) {
        return Scrape.parse("""
                lastunit_shard_info{cell="shared",component="shard",shard="s1"} 1.0
                lastunit_holds_total{event="created",shard="s1"} %s
                lastunit_holds_total{event="confirmed",shard="s1"} 10.0
                lastunit_holds_held{shard="s1"} 42.0
                lastunit_lane_batches_total{shard="s1"} %s
                lastunit_lane_batch_size_operations_count{shard="s1"} %s
                lastunit_lane_batch_size_operations_sum{shard="s1"} %s
                lastunit_lane_queue_depth{lane="0",shard="s1"} 3.0
                lastunit_lane_queue_depth{lane="1",shard="s1"} 7.0
                lastunit_lane_commit_seconds_bucket{le="0.001",shard="s1"} %s
                lastunit_lane_commit_seconds_bucket{le="+Inf",shard="s1"} %s
                lastunit_lane_refusals_total{reason="QUEUE_FULL",shard="s1"} 0.0
                lastunit_invariant_drift_units{scope="shard",shard="s1"} %s
                lastunit_invariant_check_failed{scope="shard",shard="s1"} 0.0
                lastunit_db_writes_paused{shard="s1"} %s
                """.formatted(created, batches, batches, ops, le1ms, inf, drift, paused));
    }

    @Test
    void ratesMeansAndQuantiles_overTheInterval() {
        Scrape before = shard(1_000, 100, 1_000, 90, 100, 0, 0);
        Scrape now = shard(3_000, 200, 5_000, 180, 200, 0, 0);
        List<String> screen = TopView.render(List.of(new TopView.Source("s1", before, now)), 2.0);
        assertThat(screen.get(0)).isEqualTo("lastunit top — 1 services, 1000 holds created/s, drift 0 units");
        String row = screen.stream().filter(l -> l.startsWith("s1")).findFirst().orElseThrow();
        // 2,000 created in 2 s; 100 batches of 4,000 ops; deepest queue 7; 90 of 100 commits under
        // 1 ms, so the p99 is in the +Inf bucket.
        assertThat(row).contains("shared").contains("1000").contains("40.0").contains(" 7 ").contains("> 10 s")
                .endsWith("ok");
        assertThat(row.split("\\s+")[5]).as("held").isEqualTo("42");
    }

    @Test
    void aP99WithinABucket_isItsUpperBound_andDriftAndPausedWritesShow() {
        Scrape before = shard(0, 0, 0, 0, 0, 0, 0);
        Scrape now = shard(10, 10, 10, 100, 100, 5, 1);
        String row = TopView.render(List.of(new TopView.Source("s1", before, now)), 1.0).stream()
                .filter(l -> l.startsWith("s1")).findFirst().orElseThrow();
        assertThat(row).contains("≤ 1.0 ms").contains(" 5 ").endsWith("PAUSED");
    }

    @Test
    void aRestartedCounter_countsFromZero_andAServiceThatDidNotAnswerShowsDown() {
        Scrape before = shard(5_000, 100, 100, 0, 0, 0, 0);
        Scrape now = shard(300, 110, 110, 0, 0, 0, 0);
        List<String> screen = TopView.render(List.of(new TopView.Source("s1", before, now),
                new TopView.Source("s2", null, null)), 1.0);
        assertThat(screen.get(0)).contains("300 holds created/s").endsWith("1 not answering");
        assertThat(screen).anySatisfy(l -> assertThat(l).startsWith("s2").contains("down"));
    }

    @Test
    void routers_showAnswersShedsAndReserveP99() {
        String text = """
                lastunit_router_reserves_total{outcome="RESERVED"} %s
                lastunit_router_reserves_total{outcome="SOLD_OUT"} %s
                lastunit_router_reserves_total{outcome="SHARD_UNAVAILABLE"} %s
                lastunit_router_sheds_total{cause="sold_out_cache"} %s
                lastunit_router_sheds_total{cause="rate_limit"} 0.0
                lastunit_router_sheds_total{cause="in_flight"} 0.0
                lastunit_grpc_server_processing_duration_seconds_bucket{method="Reserve",statusCode="OK",le="0.005"} %s
                lastunit_grpc_server_processing_duration_seconds_bucket{method="Reserve",statusCode="OK",le="+Inf"} %s
                """;
        Scrape before = Scrape.parse(text.formatted(0, 0, 0, 0, 0, 0));
        Scrape now = Scrape.parse(text.formatted(100, 50, 10, 500, 160, 160));
        String row = TopView.render(List.of(new TopView.Source("r1", before, now)), 10.0).stream()
                .filter(l -> l.startsWith("r1 ")).findFirst().orElseThrow();
        assertThat(row.split("\\s{2,}")).containsExactly("r1", "16.0", "5.0", "1.0", "50.0", "0.0", "0.0", "≤ 5.0 ms");
    }
}
