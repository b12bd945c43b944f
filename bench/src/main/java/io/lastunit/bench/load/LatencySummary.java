package io.lastunit.bench.load;

import org.HdrHistogram.Histogram;

/**
 * Percentiles of one latency histogram, in milliseconds. The histograms of a run record
 * microseconds; each figure is HdrHistogram's value at that percentile (within its 3 significant
 * digits). An empty histogram gives count 0 and zeros. Immutable; pure.
 */
record LatencySummary(long count, double p50, double p90, double p99, double p999, double max, double mean) {

    static final LatencySummary EMPTY = new LatencySummary(0, 0, 0, 0, 0, 0, 0);

    /** @param micros a histogram of latencies in microseconds */
    static LatencySummary ofMicros(Histogram micros) {
        if (micros.getTotalCount() == 0) {
            return EMPTY;
        }
        return new LatencySummary(micros.getTotalCount(), ms(micros.getValueAtPercentile(50.0)),
                ms(micros.getValueAtPercentile(90.0)), ms(micros.getValueAtPercentile(99.0)),
                ms(micros.getValueAtPercentile(99.9)), ms(micros.getMaxValue()), micros.getMean() / 1_000.0);
    }

    private static double ms(long micros) {
        return micros / 1_000.0;
    }
}
