package io.lastunit.bench.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.lane.LaneEngine;
import java.util.List;
import org.junit.jupiter.api.Test;

class LaneWindowTest {

    private static LaneEngine.Stats stats(long ops, long transactions, long oneStatement, long paced, long writeNanos) {
        return new LaneEngine.Stats(transactions, ops, 0, transactions, oneStatement, 0, paced, 0, 0, writeNanos, 0, 0, 0,
                0);
    }

    @Test
    void line_countsOnlyWhatMovedInTheIteration_summedOverEngines() {
        long[] from = LaneWindow.totals(List.of(stats(1_000, 100, 90, 0, 50_000_000L), stats(0, 0, 0, 0, 0)),
                new long[] {10, 30});
        long[] to = LaneWindow.totals(List.of(stats(3_000, 150, 140, 2, 250_000_000L), stats(1_000, 50, 50, 0,
                100_000_000L)), new long[] {1_010, 3_030});

        String line = LaneWindow.line(false, 2_000_000_000L, 400_000_000L, from, to, true);

        // 3,000 ops in 100 commits over 2 s, 300 ms of decision to commit, 0.4 s of CPU.
        assertThat(line).startsWith("[lanes] phase=measurement seconds=2.00 commits=100 ops=3000 write_ms=300.0"
                + " one_statement=100 paced=2 ops_per_commit=30.0 ms_decision_to_commit=3.00 commits_per_s=50"
                + " jvm_cpu_us_per_op=133.3 router_calls=1000 router_reserves=3000 reserves_per_call=3.0");
    }

    @Test
    void line_withoutCommitsOrRouter_printsZeros_andNoRouterFields() {
        long[] same = LaneWindow.totals(List.of(stats(5, 1, 1, 0, 1)), null);

        String line = LaneWindow.line(true, 1_000_000_000L, 0, same, same, false);

        assertThat(line).isEqualTo("[lanes] phase=warmup seconds=1.00 commits=0 ops=0 write_ms=0.0 one_statement=0"
                + " paced=0 ops_per_commit=0.0 ms_decision_to_commit=0.00 commits_per_s=0 jvm_cpu_us_per_op=0.0");
    }
}
