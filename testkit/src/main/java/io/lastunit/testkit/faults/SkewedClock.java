package io.lastunit.testkit.faults;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real clock shifted by an offset the test changes while the code under test runs: the clock
 * skew between one JVM and the database (or another node). Inject it where the code takes a
 * {@link Clock} or an {@link java.time.InstantSource}; {@link #skew} moves it forwards or backwards
 * at once.
 *
 * <p>Owns the offset, in nanoseconds; thread-safe (the code under test reads it from its threads
 * while the test skews it). Clocks made by {@link #withZone} share the offset, so a later skew
 * moves them too.
 *
 * <p>Hazard: unlike {@link io.lastunit.testkit.ManualClock}, it moves on its own and may step
 * backwards when the offset shrinks, which is what real clock corrections do: code that assumes
 * wall time never goes back is exactly what this exposes. It shifts only wall time;
 * {@link System#nanoTime()} and timeouts measured with it are untouched.
 */
public final class SkewedClock extends Clock {
    /** The largest skew accepted either way; more is surely a mistake in units. */
    public static final Duration SKEW_MAX = Duration.ofDays(365);

    private final Clock base;
    private final AtomicLong offsetNanos;

    /** The system clock in UTC, not yet skewed. */
    public SkewedClock() {
        this(Clock.systemUTC());
    }

    /** {@code base} (a fixed clock in a unit test), not yet skewed. */
    public SkewedClock(Clock base) {
        this(base, new AtomicLong());
    }

    private SkewedClock(Clock base, AtomicLong offsetNanos) {
        this.base = Objects.requireNonNull(base, "base");
        this.offsetNanos = offsetNanos;
    }

    /**
     * Sets the offset from the base clock (replacing the previous one, not adding to it).
     *
     * @throws IllegalArgumentException if {@code offset} exceeds {@link #SKEW_MAX} either way
     */
    public void skew(Duration offset) {
        offsetNanos.set(checkedSkew(offset).toNanos());
    }

    /** {@code offset}, once checked to be within {@link #SKEW_MAX} either way. */
    static Duration checkedSkew(Duration offset) {
        Objects.requireNonNull(offset, "offset");
        if (offset.abs().compareTo(SKEW_MAX) > 0) {
            throw new IllegalArgumentException("skew must be within ±" + SKEW_MAX + ", got " + offset);
        }
        return offset;
    }

    /** The offset now: positive when this clock is ahead of its base. */
    public Duration offset() {
        return Duration.ofNanos(offsetNanos.get());
    }

    @Override
    public Instant instant() {
        return base.instant().plusNanos(offsetNanos.get());
    }

    @Override
    public ZoneId getZone() {
        return base.getZone();
    }

    /** The same skewed clock seen in {@code zone}; it shares this clock's offset. */
    @Override
    public Clock withZone(ZoneId zone) {
        if (zone.equals(base.getZone())) {
            return this;
        }
        return new SkewedClock(base.withZone(zone), offsetNanos);
    }

    @Override
    public String toString() {
        return "SkewedClock[" + base + ", offset=" + offset() + "]";
    }
}
