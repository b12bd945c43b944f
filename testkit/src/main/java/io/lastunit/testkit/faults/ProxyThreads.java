package io.lastunit.testkit.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Starts a {@link TcpProxy}'s threads (named daemon platform threads, one per direction of each
 * connection plus the accept loop) and knows which of them still run, so that the proxy's close
 * can wait for all of them to end.
 *
 * <p>Owns the set of live threads; thread-safe. After {@link #shutDown} it starts nothing more,
 * which closes the race between a connection being admitted and the proxy closing.
 *
 * <p>Hazard: shutting down only waits; the caller must first make every thread return (close the
 * sockets they block on, interrupt their sleeps), or {@link #shutDown} waits out its bound.
 */
final class ProxyThreads {
    private final String prefix;
    private final Set<Thread> live = new HashSet<>();
    private boolean shutDown;

    ProxyThreads(String prefix) {
        this.prefix = prefix;
    }

    /** The prefix of every thread name, for diagnostics and for tests that look for leftovers. */
    String prefix() {
        return prefix;
    }

    /** Starts {@code body} on a new daemon thread named prefix + suffix; returns null once shut down. */
    synchronized Thread start(String suffix, Runnable body) {
        if (shutDown) {
            return null;
        }
        Thread[] self = new Thread[1];
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } finally {
                ended(self[0]);
            }
        }, prefix + suffix);
        self[0] = thread;
        thread.setDaemon(true);
        live.add(thread);
        thread.start();
        return thread;
    }

    private synchronized void ended(Thread thread) {
        live.remove(thread);
    }

    /** How many of the threads still run. */
    synchronized int liveCount() {
        return live.size();
    }

    /**
     * Starts no more threads and waits up to {@code wait} for the running ones to end.
     *
     * @return the names of the threads still running when the wait ran out (empty when all ended)
     */
    List<String> shutDown(Duration wait) throws InterruptedException {
        List<Thread> running;
        synchronized (this) {
            shutDown = true;
            running = new ArrayList<>(live);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        List<String> left = new ArrayList<>();
        for (Thread thread : running) {
            long remainingMillis = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
            thread.join(remainingMillis);
            if (thread.isAlive()) {
                left.add(thread.getName());
            }
        }
        return left;
    }
}
