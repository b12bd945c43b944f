package io.lastunit.common.lifecycle;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The lifecycle of one node (a router, a shard node, a bucket-balancer): LATENT → STARTED →
 * CLOSED, and the stack of what its start opened. A start registers a {@link Closer} for each
 * thing as it opens it ({@link #onClose}); {@link #close} runs them last registered first, each
 * once, so a node stops in the reverse order of its start, and a start that fails half-way closes
 * exactly what it had opened. A closer that fails is logged and the next one runs: one stuck
 * part never keeps the rest open. A closer may be run early through its handle, when a node's
 * stop interleaves with another's (a server stops taking calls, then the work behind it drains,
 * then the server's calls in flight are awaited); the stack then skips it.
 *
 * <p>Thread-safe (every method holds the instance lock). Hazard: closers run one after the other
 * on the closing thread, so each one that waits must bound its wait ({@link #executor}); the
 * close takes as long as their bounds together, at most.
 */
public final class NodeLifecycle {
    public enum State { LATENT, STARTED, CLOSED }

    /** How one thing stops. It may throw; it may wait, within a bound of its own. */
    @FunctionalInterface
    public interface Stop {
        void stop() throws Exception;
    }

    /** One registered stop: runs at most once, early through {@link #close()} or from the stack. */
    public final class Closer {
        private final String what;
        private final Stop stop;
        private boolean done;

        private Closer(String what, Stop stop) {
            this.what = what;
            this.stop = stop;
        }

        /** Runs the stop now unless it ran already; a failure is logged, never thrown. */
        public void close() {
            synchronized (NodeLifecycle.this) {
                if (done) {
                    return;
                }
                done = true;
            }
            try {
                stop.stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                log.warn("{}: stopping the {} was interrupted", node, what);
            } catch (Exception e) {
                log.warn("{}: stopping the {} failed; stopping the rest", node, what, e);
            }
        }
    }

    private final String node;
    private final Logger log;
    private final Deque<Closer> closers = new ArrayDeque<>();
    private State state = State.LATENT;

    /**
     * @param node what the node is called in messages and logs ({@code router r1})
     * @param log  where failed closers are logged: the node's own logger
     */
    public NodeLifecycle(String node, Logger log) {
        this.node = node;
        this.log = log;
    }

    /** LATENT → STARTED, at the beginning of a start; a node starts once. */
    public synchronized void begin() {
        if (state != State.LATENT) {
            throw new IllegalStateException(node + " is " + state + ": a node starts once");
        }
        state = State.STARTED;
    }

    /**
     * Registers how {@code what} stops, to run before everything registered earlier. After
     * {@link #close} it runs at once: nothing opened late stays open.
     */
    public Closer onClose(String what, Stop stop) {
        Closer c = new Closer(what, stop);
        synchronized (this) {
            if (state != State.CLOSED) {
                closers.push(c);
                return c;
            }
        }
        c.close();
        return c;
    }

    /**
     * Moves to CLOSED and runs every closer not run yet, last registered first. Idempotent: true
     * for the call that closed, false for every later one.
     */
    public synchronized boolean close() {
        if (state == State.CLOSED) {
            return false;
        }
        state = State.CLOSED;
        Closer c;
        while ((c = closers.poll()) != null) {
            c.close();
        }
        return true;
    }

    public synchronized State state() {
        return state;
    }

    /** Stops an executor: interrupts its tasks ({@code shutdownNow}), then waits up to {@code wait} for them. */
    public static Stop executor(ExecutorService executor, Duration wait) {
        return () -> {
            executor.shutdownNow();
            awaitTermination(executor, wait);
        };
    }

    /** Waits up to {@code wait} for a shut-down executor's tasks to end; an interrupt stops the wait and is kept. */
    public static void awaitTermination(ExecutorService executor, Duration wait) {
        try {
            executor.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
