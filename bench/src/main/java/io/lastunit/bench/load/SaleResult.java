package io.lastunit.bench.load;

import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * How the sale went, as the load generator saw it. Times are relative to the first request
 * (in open loop: the first request's intended send time).
 *
 * @param buyers         buyers, one logical Reserve each
 * @param reserved       Reserves answered RESERVED
 * @param soldOut        Reserves answered SOLD_OUT
 * @param limited        Reserves answered LIMIT_EXCEEDED, or still RESOURCE_EXHAUSTED after the last attempt
 * @param errors         failed Reserves (any other failure, or UNAVAILABLE after the last attempt), plus failed
 *                       Confirms
 * @param confirmErrors  of {@code errors}, the failed Confirms
 * @param retries        attempts repeated after RESOURCE_EXHAUSTED / UNAVAILABLE (same idempotency key)
 * @param calls          Reserve calls sent, retries included
 * @param confirmed      holds confirmed ({@code --confirm})
 * @param durationNanos  from the first request to the last reply
 * @param sellOutNanos   from the first request to the reply that reserved the last unit, or -1 when the run
 *                       did not reserve every unit
 * @param all            latency of every Reserve, in microseconds, from its (intended) send to its final answer,
 *                       retries included
 * @param reservedOnly   the same for the Reserves answered RESERVED
 * @param seconds        the latency of every Reserve again, window by window of one second by reply time
 *                       ({@link Timeline}), at most {@link Timeline#SECONDS_MAX}
 * @param secondsDropped windows after the first {@link Timeline#SECONDS_MAX}, not kept
 */
record SaleResult(long buyers, long reserved, long soldOut, long limited, long errors, long confirmErrors,
        long retries, long calls, long confirmed, long durationNanos, long sellOutNanos, Histogram all,
        Histogram reservedOnly, List<String> errorSamples, List<Timeline.Second> seconds, int secondsDropped) {

    double durationSeconds() {
        return durationNanos / 1e9;
    }

    /** The window of {@link #reservePerSecond}: up to the last unit's reservation, else the whole run. */
    long saleNanos() {
        return saleNanos(sellOutNanos, durationNanos);
    }

    static long saleNanos(long sellOutNanos, long durationNanos) {
        return sellOutNanos >= 0 ? sellOutNanos : durationNanos;
    }

    /** Successful reservations per second over the sale: see {@link #reservePerSecond(long, long, long)}. */
    double reservePerSecond() {
        return reservePerSecond(reserved, sellOutNanos, durationNanos);
    }

    /**
     * reserve_per_s: {@code reserved} ÷ the seconds from the first request to the reply that
     * reserved the last unit; when not every unit was reserved, to the last reply of the run.
     * 0 for an empty window.
     */
    static double reservePerSecond(long reserved, long sellOutNanos, long durationNanos) {
        long window = saleNanos(sellOutNanos, durationNanos);
        return window <= 0 ? 0 : reserved * 1e9 / window;
    }

    /** Reserve calls (retries included) per second over the whole run. */
    double requestsPerSecond() {
        return durationNanos <= 0 ? 0 : calls * 1e9 / durationNanos;
    }

    /** Buyers answered per second over the whole run. */
    double buyersPerSecond() {
        return durationNanos <= 0 ? 0 : buyers * 1e9 / durationNanos;
    }

    LatencySummary allLatency() {
        return LatencySummary.ofMicros(all);
    }

    LatencySummary reservedLatency() {
        return LatencySummary.ofMicros(reservedOnly);
    }
}
