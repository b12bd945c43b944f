package io.lastunit.admin.cli;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * What a command (or the bench's load generator) started, closed in reverse order exactly once — from the command itself or from
 * a shutdown hook (Ctrl-C), whichever comes first. Thread-safe.
 */
public final class Closer implements AutoCloseable {
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private boolean closed;

    /** Registers {@code c}; when already closed (Ctrl-C during start), closes it at once. */
    public synchronized <T extends AutoCloseable> T add(T c) {
        if (closed) {
            closeQuietly(c);
            throw new CliError(ExitCodes.FAILED, "stopped while starting");
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
            System.err.println("lastunit: while stopping: " + e);
        }
    }
}
