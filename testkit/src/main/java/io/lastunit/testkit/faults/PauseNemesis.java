package io.lastunit.testkit.faults;

import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Pauses a process (SIGSTOP, {@link ProcessPause}) while in force and resumes it on stop. The pid
 * is asked for at each start, so the nemesis follows a server that was restarted under a new pid;
 * stop resumes the process that start paused.
 *
 * <p>Owns the pause in force; thread-safe (start and stop are serialized). Hazard: a nemesis left
 * started leaves its process stopped after the test; stop it in a finally.
 */
public final class PauseNemesis implements Nemesis {
    private final String name;
    private final LongSupplier pid;
    private ProcessPause.Paused paused;

    /** Pauses the process whose pid {@code pid} gives at each start. */
    public PauseNemesis(String name, LongSupplier pid) {
        this.name = Objects.requireNonNull(name, "name");
        this.pid = Objects.requireNonNull(pid, "pid");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public synchronized void start() {
        if (paused == null) {
            paused = ProcessPause.pause(pid.getAsLong());
        }
    }

    @Override
    public synchronized void stop() {
        if (paused != null) {
            paused.close();
            paused = null;
        }
    }

    @Override
    public synchronized String toString() {
        return name + (paused != null ? " (pid " + paused.pid() + " paused)" : "");
    }
}
