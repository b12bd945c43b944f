package io.lastunit.bench.jmh;

import io.lastunit.shard.lane.LaneEngine;
import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.Locale;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * The lanes' counters over one JMH iteration, so that a score comes with what produced it: the
 * commits, the operations each carried, the mean time of a committing batch from its decision to
 * its commit (the database's part), the CPU this JVM spent per operation (the callers, and end to
 * end the router and the shard nodes too), and end to end the Reserves each router → shard
 * {@code ReserveBatch} call carried. A trial's totals include its setup and warm-up; these do not.
 * {@code bench/report.py} sums the measurement lines of a log.
 *
 * <p>One line per iteration: {@code [lanes] phase=measurement seconds=… commits=… ops=… write_ms=…
 * one_statement=… paced=… ops_per_commit=… ms_decision_to_commit=… commits_per_s=…
 * jvm_cpu_us_per_op=…} (and {@code router_calls=… router_reserves=… reserves_per_call=…} end to
 * end). Not thread-safe: JMH runs the iteration fixtures on one thread.
 */
final class LaneWindow {
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private long startNanos;
    private long startCpuNanos;
    private long[] start;

    /** At the start of an iteration; {@code routerBatches} is {calls, Reserves} ({@code RouterNode.reserveBatches}) or null. */
    void begin(Collection<LaneEngine> engines, long[] routerBatches) {
        start = totals(engines.stream().map(LaneEngine::stats).toList(), routerBatches);
        startCpuNanos = OS.getProcessCpuTime();
        startNanos = System.nanoTime();
    }

    /** At the end of the iteration begun last: prints its line. */
    void end(Collection<LaneEngine> engines, long[] routerBatches, IterationParams iteration) {
        if (start == null) {
            return;
        }
        long nanos = System.nanoTime() - startNanos;
        long cpuNanos = OS.getProcessCpuTime() - startCpuNanos;
        long[] now = totals(engines.stream().map(LaneEngine::stats).toList(), routerBatches);
        System.out.println(line(iteration.getType() == IterationType.WARMUP, nanos, cpuNanos, start, now,
                routerBatches != null));
        start = null;
    }

    /** {commits, operations, write nanos, one-statement batches, paced batches, router calls, router Reserves}. */
    static long[] totals(Collection<LaneEngine.Stats> stats, long[] routerBatches) {
        long[] t = new long[7];
        for (LaneEngine.Stats s : stats) {
            t[0] += s.transactions();
            t[1] += s.opsApplied();
            t[2] += s.writeNanos();
            t[3] += s.oneStatementBatches();
            t[4] += s.paced();
        }
        if (routerBatches != null) {
            t[5] = routerBatches[0];
            t[6] = routerBatches[1];
        }
        return t;
    }

    /** The line for the counters that moved from {@code from} to {@code to} ({@link #totals}) in {@code nanos}. */
    static String line(boolean warmup, long nanos, long cpuNanos, long[] from, long[] to, boolean router) {
        long commits = to[0] - from[0];
        long ops = to[1] - from[1];
        long writeNanos = to[2] - from[2];
        long calls = to[5] - from[5];
        long reserves = to[6] - from[6];
        double seconds = nanos / 1e9;
        String s = String.format(Locale.ROOT, "[lanes] phase=%s seconds=%.2f commits=%d ops=%d write_ms=%.1f"
                        + " one_statement=%d paced=%d ops_per_commit=%.1f ms_decision_to_commit=%.2f commits_per_s=%.0f"
                        + " jvm_cpu_us_per_op=%.1f", warmup ? "warmup" : "measurement", seconds, commits, ops,
                writeNanos / 1e6, to[3] - from[3], to[4] - from[4], commits == 0 ? 0.0 : (double) ops / commits,
                commits == 0 ? 0.0 : writeNanos / 1e6 / commits, seconds == 0 ? 0.0 : commits / seconds,
                ops == 0 ? 0.0 : cpuNanos / 1e3 / ops);
        if (!router) {
            return s;
        }
        return s + String.format(Locale.ROOT, " router_calls=%d router_reserves=%d reserves_per_call=%.1f", calls,
                reserves, calls == 0 ? 0.0 : (double) reserves / calls);
    }
}
