package io.lastunit.bench.load;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Reserve latency second by second: the run is cut into one-second windows by reply time, and
 * each window keeps its own percentiles. A run's p99 says how slow the slowest 1% were; the
 * timeline says whether they came spread over the run (the platform is busy all the time) or in
 * a few seconds (a stall: a checkpoint, the kernel flushing dirty pages, a GC pause).
 *
 * <p>Bounded: the first {@link #SECONDS_MAX} seconds are kept; later windows are counted in
 * {@link #dropped()} only. Thread-safe: {@link #record} from any thread (HdrHistogram's
 * {@link Recorder}, wait-free), {@link #cut} and the readers under this object's lock.
 */
final class Timeline {
    /** Windows kept: an hour of a run. */
    static final int SECONDS_MAX = 3_600;

    /**
     * One window.
     *
     * @param index   0 for the first second of the run
     * @param millis  the window's length: 1,000 give or take the timer's jitter; the last window is shorter
     * @param latency the percentiles of the Reserves answered in it
     */
    record Second(int index, long millis, LatencySummary latency) {
    }

    private final Recorder recorder = new Recorder(SaleDriver.LATENCY_MAX_MICROS, 3);
    private final List<Second> seconds = new ArrayList<>();
    private Histogram reuse;
    private long windowStartNanos;
    private int next;
    private int dropped;
    private boolean closed;

    /** @param startNanos the run's start ({@link System#nanoTime()}); the first window begins there */
    Timeline(long startNanos) {
        this.windowStartNanos = startNanos;
    }

    /** Records one Reserve's latency in the current window. */
    void record(long micros) {
        recorder.recordValue(Math.min(SaleDriver.LATENCY_MAX_MICROS, Math.max(0, micros)));
    }

    /**
     * Closes the current window at {@code nowNanos} and opens the next. An empty window is kept too
     * (count 0). After {@link #close}, does nothing (a timer's last tick may come late).
     */
    synchronized void cut(long nowNanos) {
        if (closed) {
            return;
        }
        reuse = recorder.getIntervalHistogram(reuse);
        long millis = Math.max(0, (nowNanos - windowStartNanos) / 1_000_000);
        windowStartNanos = nowNanos;
        if (seconds.size() < SECONDS_MAX) {
            seconds.add(new Second(next, millis, LatencySummary.ofMicros(reuse)));
        } else {
            dropped++;
        }
        next++;
    }

    /** Closes the last window at {@code nowNanos}; later {@link #cut}s do nothing. */
    synchronized void close(long nowNanos) {
        cut(nowNanos);
        closed = true;
    }

    synchronized List<Second> seconds() {
        return List.copyOf(seconds);
    }

    /** Windows closed after the first {@link #SECONDS_MAX}, not kept. */
    synchronized int dropped() {
        return dropped;
    }

    /** How many of {@code seconds} had Reserves and a p99 over {@code p99Ms}. */
    static long over(List<Second> seconds, double p99Ms) {
        return seconds.stream().filter(s -> s.latency().count() > 0 && s.latency().p99() > p99Ms).count();
    }

    /** The {@code n} windows with the highest p99 (earlier first on a tie), slowest first; empty windows never. */
    static List<Second> slowest(List<Second> seconds, int n) {
        return seconds.stream().filter(s -> s.latency().count() > 0)
                .sorted(Comparator.comparingDouble((Second s) -> s.latency().p99()).reversed()
                        .thenComparingInt(Second::index))
                .limit(n).toList();
    }
}
