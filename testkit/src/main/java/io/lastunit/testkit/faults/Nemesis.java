package io.lastunit.testkit.faults;

/**
 * A fault a test turns on and off while its clients run (Jepsen's nemesis): {@link #start()}
 * injects it, {@link #stop()} heals it. Both are idempotent: starting a started nemesis or
 * stopping a stopped one does nothing, so a test's finally may always call {@link #stop()}.
 *
 * <p>Implementations say whether they are thread-safe; those here are. Build a new kind from two
 * actions with {@link #of}, e.g. a PostgreSQL restart around a server controller:
 * {@code Nemesis.of("restart pg", server::stop, server::start)}.
 */
public interface Nemesis {

    /** What the nemesis does, for the history and for failure messages ("cut pg-proxy"). */
    String name();

    /** Injects the fault; does nothing if it is already in force. */
    void start();

    /** Heals the fault; does nothing if it is not in force. */
    void stop();

    /**
     * A nemesis that runs {@code start} to inject and {@code stop} to heal, each only when the
     * nemesis is not already in that state. If an action throws, the state stays as it was, so
     * the action is tried again on the next call.
     */
    static Nemesis of(String name, Runnable start, Runnable stop) {
        return new RunnableNemesis(name, start, stop);
    }
}
