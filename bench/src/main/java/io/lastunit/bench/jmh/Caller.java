package io.lastunit.bench.jmh;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * One benchmark thread as a stream of distinct buyers: every call gets an idempotency key and a
 * buyer id never used before in the trial, so no design can answer a call from a previous one (no
 * idempotent replay, no per-buyer rate limit or cap), and the item it targets. JMH gives each
 * benchmark thread its own instance. Not thread-safe (it does not need to be).
 */
@State(Scope.Thread)
public class Caller {
    private static final AtomicInteger THREADS = new AtomicInteger();

    private String prefix;
    private long n;

    @Setup(Level.Trial)
    public void setUp() {
        init(THREADS.incrementAndGet(), ThreadLocalRandom.current().nextInt(1 << 30));
    }

    void init(int thread, int nonce) {
        prefix = "c" + thread + "-" + Integer.toString(nonce, 36) + "-";
        n = 0;
    }

    /** Moves to the next call; {@link #key()} and {@link #buyer()} then name it. */
    public Caller next() {
        n++;
        return this;
    }

    /** The current call's idempotency key. */
    public String key() {
        return "k-" + prefix + n;
    }

    /** The current call's buyer. */
    public String buyer() {
        return "b-" + prefix + n;
    }

    /** Item 0 when there is one item (the hot item); otherwise uniformly one of {@code items}. */
    public static int pickItem(int items) {
        return items == 1 ? 0 : ThreadLocalRandom.current().nextInt(items);
    }
}
