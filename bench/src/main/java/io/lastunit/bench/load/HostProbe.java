package io.lastunit.bench.load;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * How late this host wakes a sleeping thread, measured before a run while nothing of the run is
 * up: one thread parks for {@link #SLEEP_NANOS} again and again and records how much later than
 * asked it ran again. On a shared host this moves with the neighbours' load, and the half-load
 * tail moves with it (docs/performance.md, the round to {@code fc0190c}: p99.9 1.5–2.4 ms in a
 * busy hour, 0.3–0.8 ms in a quiet one), so a result page carries it beside its latencies.
 *
 * @param seconds how long it ran
 * @param samples wake-ups measured
 * @param p50Ms   median lateness, ms
 * @param p99Ms   99th percentile, ms
 * @param p999Ms  99.9th percentile, ms
 * @param maxMs   the latest wake-up, ms
 */
record HostProbe(double seconds, long samples, double p50Ms, double p99Ms, double p999Ms, double maxMs) {

    /** The sleep asked for each time: 0.5 ms, about one Reserve's gap at 2,000/s. */
    static final long SLEEP_NANOS = 500_000;

    /** Longest probe {@code --host-probe} accepts, in seconds. */
    static final int SECONDS_MAX = 60;

    /** Lateness recorded up to 10 s; a later wake-up is recorded as 10 s. */
    private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Parks for {@link #SLEEP_NANOS} repeatedly for {@code seconds} (0 &lt; seconds ≤ {@link #SECONDS_MAX}). */
    static HostProbe measure(double seconds) {
        if (!(seconds > 0 && seconds <= SECONDS_MAX)) {
            throw new IllegalArgumentException("probe seconds " + seconds + " outside (0, " + SECONDS_MAX + "]");
        }
        Histogram lateness = new Histogram(HIGHEST_NANOS, 3);
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long now = start;
        while (now < end) {
            LockSupport.parkNanos(SLEEP_NANOS);
            long woke = System.nanoTime();
            // parkNanos may return early (a spurious wake-up): that is not lateness
            lateness.recordValue(Math.min(HIGHEST_NANOS, Math.max(0, woke - now - SLEEP_NANOS)));
            now = woke;
        }
        return new HostProbe((now - start) / 1e9, lateness.getTotalCount(), ms(lateness.getValueAtPercentile(50)),
                ms(lateness.getValueAtPercentile(99)), ms(lateness.getValueAtPercentile(99.9)),
                ms(lateness.getMaxValue()));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    /** The summary's line. */
    String line() {
        return String.format(Locale.ROOT, "host before the run: a thread asking to sleep 0.5 ms woke %.2f ms late at p50, "
                        + "%.2f at p99, %.2f at p99.9, %.2f at most (%,d wake-ups in %.1f s)", p50Ms, p99Ms, p999Ms, maxMs,
                samples, seconds);
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seconds", seconds);
        m.put("sleep_ms", SLEEP_NANOS / 1e6);
        m.put("samples", samples);
        m.put("late_p50_ms", p50Ms);
        m.put("late_p99_ms", p99Ms);
        m.put("late_p99_9_ms", p999Ms);
        m.put("late_max_ms", maxMs);
        return m;
    }
}
