package io.lastunit.shard.lane;

import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers the callers of a lane's committed batches, so that the lane starts its next batch while
 * the replies of the last one go out (waking blocked callers, serializing gRPC replies). One
 * thread, so a lane's callers are answered in commit order. Bounded: past
 * {@link #REPLY_BATCHES_MAX} batches waiting, the lane answers inline and slows down with it.
 * Thread-safe.
 */
final class Replier {
    private static final Logger log = LoggerFactory.getLogger(Replier.class);
    static final int REPLY_BATCHES_MAX = 64;

    private final int laneIndex;
    private final ThreadPoolExecutor executor;
    private final AtomicInteger waiting = new AtomicInteger();

    Replier(int laneIndex) {
        this.laneIndex = laneIndex;
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "lane-" + laneIndex + "-replies");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Runs a committed batch's completions on the replier thread (inline when it is behind or
     * shut down). Called after the batch's state is published.
     */
    void reply(List<Runnable> completions) {
        if (completions.isEmpty()) {
            return;
        }
        if (waiting.incrementAndGet() <= REPLY_BATCHES_MAX) {
            try {
                executor.execute(() -> {
                    try {
                        runAll(completions);
                    } finally {
                        waiting.decrementAndGet();
                    }
                });
                return;
            } catch (RejectedExecutionException shutDown) {
                // fall through: answer here
            }
        }
        waiting.decrementAndGet();
        runAll(completions);
    }

    private static void runAll(List<Runnable> completions) {
        for (Runnable r : completions) {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.error("completing a caller failed", e);
            }
        }
    }

    /** After the lane thread ended: lets the replier finish what it was given (bounded wait). */
    void close() throws InterruptedException {
        executor.shutdown();
        if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
            log.warn("lane {}: replies still running after 10 s", laneIndex);
        }
    }
}
