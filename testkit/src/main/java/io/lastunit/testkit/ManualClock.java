package io.lastunit.testkit;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when a test says so, for code that takes its time injected: as an
 * {@link InstantSource} (a shard node's lanes) and as a nanosecond ticker with
 * {@link System#nanoTime()} semantics (the router's sold-out cache, rate limiter and recent keys).
 * Both views read the same count, so one {@link #advance} moves both.
 *
 * <p>Owns one counter of nanoseconds since its start instant; thread-safe (the code under test
 * reads it from its own threads while the test advances it).
 *
 * <p>Hazard: while it stands still, nothing the code under test measures with it ever expires.
 * That is the point (a test decides when a deadline passes instead of hoping the host is fast
 * enough), but a test that waits for such a deadline without advancing the clock waits forever:
 * bound such waits with {@link TestTimeouts}.
 */
public final class ManualClock implements InstantSource {
    private final Instant start;
    private final AtomicLong nanos = new AtomicLong();

    /** A clock standing at {@code start}. */
    public ManualClock(Instant start) {
        this.start = Objects.requireNonNull(start, "start");
    }

    /** A clock standing at the real time of its creation, so it reads like a real clock would at first. */
    public ManualClock() {
        this(Instant.now());
    }

    /**
     * Moves the clock forward by {@code d}.
     *
     * @throws IllegalArgumentException if {@code d} is negative: time read through it never goes back
     */
    public void advance(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("a clock only moves forward, not by " + d);
        }
        nanos.addAndGet(d.toNanos());
    }

    @Override
    public Instant instant() {
        return start.plusNanos(nanos.get());
    }

    /** Nanoseconds since the clock's start, for code that takes a {@code LongSupplier} like {@code System::nanoTime}. */
    public long nanoTime() {
        return nanos.get();
    }
}
