package io.lastunit.testkit.faults;

import java.util.Objects;

/**
 * The nemesis of {@link Nemesis#of}: two actions and whether the fault is in force.
 *
 * <p>Owns that flag; thread-safe: start and stop are serialized, so a heal never runs while the
 * injection is still under way. Hazard: an action that blocks holds up every other call on this
 * nemesis until it returns.
 */
final class RunnableNemesis implements Nemesis {
    private final String name;
    private final Runnable start;
    private final Runnable stop;
    private boolean active;

    RunnableNemesis(String name, Runnable start, Runnable stop) {
        this.name = Objects.requireNonNull(name, "name");
        this.start = Objects.requireNonNull(start, "start");
        this.stop = Objects.requireNonNull(stop, "stop");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public synchronized void start() {
        if (!active) {
            start.run();
            active = true;
        }
    }

    @Override
    public synchronized void stop() {
        if (active) {
            stop.run();
            active = false;
        }
    }

    @Override
    public synchronized String toString() {
        return name + (active ? " (in force)" : "");
    }
}
