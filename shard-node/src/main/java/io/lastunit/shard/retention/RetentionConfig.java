package io.lastunit.shard.retention;

import io.lastunit.common.invariant.CrossShardChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Bounds of {@link Retention}, validated at start (docs/operations.md, "Retention").
 *
 * @param enabled          false: nothing is ever deleted (no retention thread)
 * @param interval         pause between the end of one pass and the start of the next
 * @param holdsAfter       a hold is deleted once it ended longer ago than this, by the database's
 *                         clock: the <b>idempotency window</b>, after which its key names a new
 *                         Reserve. At least {@link #HOLDS_AFTER_MIN}; the node also asks for at
 *                         least twice {@code hold-ttl-max-ms} (ShardConfig)
 * @param transfersAfter   a DONE OUT transfer record is deleted once it was completed longer ago
 *                         than this: at least {@link #TRANSFERS_AFTER_MIN}, far beyond the
 *                         cross-shard check's {@link CrossShardChecker#TRANSFER_WINDOW}
 * @param batchMax         rows one delete statement takes (one transaction)
 * @param batchesPerRunMax batches one pass runs, all tenants and both tables together
 * @param batchPause       pause after each batch, so a pass never holds a connection or the disk
 *                         for long at a stretch
 */
public record RetentionConfig(
        boolean enabled,
        Duration interval,
        Duration holdsAfter,
        Duration transfersAfter,
        int batchMax,
        int batchesPerRunMax,
        Duration batchPause) {

    public static final Duration INTERVAL_MIN = Duration.ofSeconds(1);
    public static final Duration INTERVAL_MAX = Duration.ofDays(1);
    /** The shortest idempotency window a node accepts. */
    public static final Duration HOLDS_AFTER_MIN = Duration.ofHours(1);
    /**
     * A DONE OUT record must outlive every cross-shard check that may still ask for it (one whose
     * snapshot lists the transfer's IN record, at most one {@link CrossShardChecker#TRANSFER_WINDOW}
     * old) and every repeat of step 1 by a balancer (seconds): one hour, 120 windows.
     */
    public static final Duration TRANSFERS_AFTER_MIN = max(Duration.ofHours(1),
            CrossShardChecker.TRANSFER_WINDOW.multipliedBy(120));
    public static final Duration AFTER_MAX = Duration.ofDays(3_650);
    public static final int BATCH_MAX_LIMIT = 10_000;
    public static final int BATCHES_PER_RUN_LIMIT = 10_000;
    public static final Duration BATCH_PAUSE_MAX = Duration.ofSeconds(10);

    public static RetentionConfig defaults() {
        return new RetentionConfig(true, Duration.ofMinutes(1), Duration.ofDays(7), Duration.ofDays(7), 1_000, 100,
                Duration.ofMillis(100));
    }

    public RetentionConfig {
        List<String> problems = new ArrayList<>();
        check(problems, "interval", interval, INTERVAL_MIN, INTERVAL_MAX, "");
        check(problems, "holdsAfter", holdsAfter, HOLDS_AFTER_MIN, AFTER_MAX,
                " (the idempotency window: a hold's key names a new Reserve once the hold is deleted)");
        check(problems, "transfersAfter", transfersAfter, TRANSFERS_AFTER_MIN, AFTER_MAX,
                " (a DONE record must outlive the cross-shard check's " + CrossShardChecker.TRANSFER_WINDOW.toSeconds()
                        + " s transfer window by far)");
        if (batchMax < 1 || batchMax > BATCH_MAX_LIMIT) {
            problems.add("batchMax=" + batchMax + " is outside [1, " + BATCH_MAX_LIMIT + "]");
        }
        if (batchesPerRunMax < 1 || batchesPerRunMax > BATCHES_PER_RUN_LIMIT) {
            problems.add("batchesPerRunMax=" + batchesPerRunMax + " is outside [1, " + BATCHES_PER_RUN_LIMIT + "]");
        }
        check(problems, "batchPause", batchPause, Duration.ZERO, BATCH_PAUSE_MAX, "");
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid retention config: " + String.join("; ", problems));
        }
    }

    private static void check(List<String> problems, String name, Duration d, Duration min, Duration max, String why) {
        if (d == null) {
            problems.add(name + " is required");
        } else if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            problems.add(name + "=" + d.toMillis() + " ms is outside [" + min.toMillis() + ", " + max.toMillis()
                    + "] ms" + why);
        }
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
