package io.lastunit.admin.move;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The bounds of a mover's work against the shard nodes. Immutable; validated when built.
 *
 * @param callTimeout       deadline of one unary shard call (and of one import)
 * @param exportTimeout     deadline of one whole export stream of one source shard
 * @param attemptsMax       attempts of one shard call that fails retryably (UNAVAILABLE, DEADLINE_EXCEEDED,
 *                          RESOURCE_EXHAUSTED, ABORTED), the first included; every call of a move is idempotent
 * @param backoff           pause before the second attempt, doubling for each further one
 * @param chunkRows         rows per export chunk asked of a source shard (1..10,000)
 * @param importRowsMax     most rows in one ImportTenant request (1..10,000, the protocol's bound)
 * @param importBytesMax    most bytes of rows (their JSON) in one ImportTenant request: keep it under the
 *                          shard node's largest accepted request
 * @param copyThreads       source shards copied at once in one pass
 * @param transferWaitMax   how long the move waits for the tenant's pending transfers before it fences
 * @param transferPoll      how often it asks meanwhile
 * @param abortPoll         how often a copy pass looks for an abort requested meanwhile
 * @param retireGrace       time between retiring the source (MOVED) and dropping its rows, so that
 *                          every source shard's topology has seen the flip before a stale call could
 *                          find no row there
 */
public record MoverSettings(Duration callTimeout, Duration exportTimeout, int attemptsMax, Duration backoff,
        int chunkRows, int importRowsMax, int importBytesMax, int copyThreads, Duration transferWaitMax,
        Duration transferPoll, Duration abortPoll, Duration retireGrace) {

    /** The protocol's bound on rows per export chunk and per import request. */
    public static final int ROWS_PER_CALL_LIMIT = 10_000;

    public MoverSettings {
        List<String> problems = new ArrayList<>();
        positive(problems, "callTimeout", callTimeout, Duration.ofMinutes(5));
        positive(problems, "exportTimeout", exportTimeout, Duration.ofHours(6));
        positive(problems, "backoff", backoff, Duration.ofMinutes(1));
        positive(problems, "transferWaitMax", transferWaitMax, Duration.ofMinutes(10));
        positive(problems, "transferPoll", transferPoll, Duration.ofMinutes(1));
        positive(problems, "abortPoll", abortPoll, Duration.ofMinutes(1));
        if (retireGrace == null || retireGrace.isNegative() || retireGrace.compareTo(Duration.ofMinutes(10)) > 0) {
            problems.add("retireGrace=" + retireGrace + " is outside [0, 10 min]");
        }
        range(problems, "attemptsMax", attemptsMax, 1, 20);
        range(problems, "chunkRows", chunkRows, 1, ROWS_PER_CALL_LIMIT);
        range(problems, "importRowsMax", importRowsMax, 1, ROWS_PER_CALL_LIMIT);
        range(problems, "importBytesMax", importBytesMax, 1_024, 64 << 20);
        range(problems, "copyThreads", copyThreads, 1, 64);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid mover settings: " + String.join("; ", problems));
        }
    }

    /**
     * Defaults: 10 s per call, 30 min per export, 4 attempts from 100 ms, chunks of 1,000 rows,
     * imports of at most 5,000 rows and 768 KiB (a shard node accepts requests of 1 MiB), 4 sources at
     * once, 10 s for pending transfers polled every 100 ms, abort looked for every 250 ms, 1 s of grace.
     */
    public static MoverSettings defaults() {
        return new MoverSettings(Duration.ofSeconds(10), Duration.ofMinutes(30), 4, Duration.ofMillis(100), 1_000,
                5_000, 768 << 10, 4, Duration.ofSeconds(10), Duration.ofMillis(100), Duration.ofMillis(250),
                Duration.ofSeconds(1));
    }

    /** These settings with another grace between retiring and dropping the source (tests pass 0). */
    public MoverSettings withRetireGrace(Duration grace) {
        return new MoverSettings(callTimeout, exportTimeout, attemptsMax, backoff, chunkRows, importRowsMax,
                importBytesMax, copyThreads, transferWaitMax, transferPoll, abortPoll, grace);
    }

    private static void positive(List<String> problems, String name, Duration d, Duration max) {
        if (d == null || d.isNegative() || d.isZero() || d.compareTo(max) > 0) {
            problems.add(name + "=" + d + " is outside (0, " + max + "]");
        }
    }

    private static void range(List<String> problems, String name, long v, long min, long max) {
        if (v < min || v > max) {
            problems.add(name + "=" + v + " is outside [" + min + ", " + max + "]");
        }
    }
}
