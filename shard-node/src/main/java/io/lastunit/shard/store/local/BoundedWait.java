package io.lastunit.shard.store.local;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;

/**
 * Polls a condition until it holds or a bound passes, every {@link #POLL_INTERVAL}. A condition
 * that throws counts as not holding yet (a server that is still starting refuses connections);
 * the last such error comes back with the outcome, for the message of the caller's failure.
 *
 * <p>Stateless, thread-safe. Hazard: the condition runs on the caller's thread, and a condition
 * that blocks stretches the wait past its bound; bound what it does (connect and login timeouts).
 */
final class BoundedWait {
    /** How often a condition is tried again. */
    static final Duration POLL_INTERVAL = Duration.ofMillis(20);

    private BoundedWait() {
    }

    /** A check that may fail with I/O. */
    @FunctionalInterface
    interface Condition {
        boolean holds() throws IOException;
    }

    /** Whether the condition came to hold, and the last error it threw before the bound passed. */
    record Outcome(boolean held, IOException lastError) {
    }

    /** Polls {@code condition} until it holds or {@code bound} has passed. */
    static Outcome until(Duration bound, Condition condition) throws InterruptedIOException {
        long deadline = System.nanoTime() + bound.toNanos();
        IOException last = null;
        while (true) {
            try {
                if (condition.holds()) {
                    return new Outcome(true, null);
                }
            } catch (InterruptedIOException e) {
                throw e;
            } catch (IOException e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                return new Outcome(false, last);
            }
            try {
                Thread.sleep(POLL_INTERVAL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while polling");
            }
        }
    }
}
