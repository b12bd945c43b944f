package io.lastunit.bench.load;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * What a run started, closed in reverse order exactly once — from the run itself or from the
 * shutdown hook (Ctrl-C), whichever comes first. Thread-safe.
 */
final class Closer implements AutoCloseable {
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private boolean closed;

    /** Registers {@code c}; when already closed (Ctrl-C during the start), closes it at once. */
    synchronized <T extends AutoCloseable> T add(T c) {
        if (closed) {
            closeQuietly(c);
            throw new IllegalStateException("stopped while starting");
        }
        started.push(c);
        return c;
    }

    @Override
    public synchronized void close() {
        closed = true;
        while (!started.isEmpty()) {
            closeQuietly(started.pop());
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            System.err.println("lastunit bench: while stopping: " + e);
        }
    }
}
