package io.lastunit.shard.lane;

import java.util.ArrayList;
import java.util.List;

/**
 * Bounds of the lane engine, validated at start.
 *
 * @param laneCount        single-writer lanes (threads, each with one connection per batch)
 * @param queueCapacity    operations waiting per lane; a full queue answers RESOURCE_EXHAUSTED
 * @param batchMax         operations decided and committed together in one transaction
 * @param batchIntervalMicros while a lane stays busy, it starts its batches at least this far
 *                         apart (0, the default: as soon as the last one is written), so that
 *                         at moderate load one commit carries more operations (docs/lanes.md,
 *                         "Pacing")
 * @param paceBelow        a lane keeps that interval only while fewer operations than this
 *                         (or than {@code batchMax}) wait for it: a full enough batch starts at
 *                         once
 * @param redoMax          times a batch is decided again after the database refused the
 *                         cached view (stale counters, a key placed elsewhere) before its
 *                         operations fail with UNAVAILABLE
 * @param keyIndexMax      idempotency keys remembered per bucket
 * @param sweepBatchMax    holds expired by one sweep statement
 * @param retryAfterMs     the retry hint sent with QUEUE_FULL and STORE_UNAVAILABLE
 * @param collapseBelow    when an item's available units over its open buckets on this shard
 *                         fall under this many, its buckets collapse into bucket 0
 * @param unitsPerBucket   CreateItem without bucket_count gets one bucket per this many units
 * @param defaultBucketsMax most buckets an item gets by default
 */
public record LaneConfig(
        int laneCount,
        int queueCapacity,
        int batchMax,
        long batchIntervalMicros,
        int paceBelow,
        int redoMax,
        int keyIndexMax,
        int sweepBatchMax,
        long retryAfterMs,
        long collapseBelow,
        long unitsPerBucket,
        int defaultBucketsMax) {

    public static LaneConfig defaults() {
        return new LaneConfig(4, 16_384, 512, 0, 64, 3, 1_000_000, 1_000, 50, 256, 1_024, 8);
    }

    /** Buckets for a region's quota when CreateItem leaves bucket_count at 0. */
    public int defaultBuckets(long quota) {
        long n = (quota + unitsPerBucket - 1) / unitsPerBucket;
        return (int) Math.max(1, Math.min(defaultBucketsMax, n));
    }

    public LaneConfig {
        List<String> problems = new ArrayList<>();
        check(problems, "laneCount", laneCount, 1, 256);
        check(problems, "queueCapacity", queueCapacity, 1, 1 << 22);
        check(problems, "batchMax", batchMax, 1, 10_000);
        check(problems, "batchIntervalMicros", batchIntervalMicros, 0, 1_000_000);
        check(problems, "paceBelow", paceBelow, 1, 10_000);
        check(problems, "redoMax", redoMax, 0, 100);
        check(problems, "keyIndexMax", keyIndexMax, 0, 100_000_000);
        check(problems, "sweepBatchMax", sweepBatchMax, 1, 100_000);
        check(problems, "retryAfterMs", retryAfterMs, 1, 60_000);
        check(problems, "collapseBelow", collapseBelow, 0, 1_000_000_000L);
        check(problems, "unitsPerBucket", unitsPerBucket, 1, 1_000_000_000L);
        check(problems, "defaultBucketsMax", defaultBucketsMax, 1, 1024);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid lane config: " + String.join("; ", problems));
        }
    }

    private static void check(List<String> problems, String name, long v, long min, long max) {
        if (v < min || v > max) {
            problems.add(name + "=" + v + " is outside [" + min + ", " + max + "]");
        }
    }
}
