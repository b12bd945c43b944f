package io.lastunit.testkit.faults;

import java.time.Duration;
import java.util.Objects;

/**
 * Skews a {@link SkewedClock} by an offset while in force; stop puts back the offset the clock had
 * when the nemesis started (so nemeses on one clock nest, if they stop in reverse order).
 *
 * <p>Owns the offset to put back; thread-safe (start and stop are serialized).
 */
public final class ClockSkewNemesis implements Nemesis {
    private final SkewedClock clock;
    private final Duration offset;
    private Duration before;

    /**
     * @throws IllegalArgumentException if {@code offset} exceeds {@link SkewedClock#SKEW_MAX} either way
     */
    public ClockSkewNemesis(SkewedClock clock, Duration offset) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.offset = SkewedClock.checkedSkew(offset);
    }

    @Override
    public String name() {
        return "skew clock " + offset;
    }

    @Override
    public synchronized void start() {
        if (before == null) {
            Duration previous = clock.offset();
            clock.skew(offset);
            before = previous;
        }
    }

    @Override
    public synchronized void stop() {
        if (before != null) {
            clock.skew(before);
            before = null;
        }
    }

    @Override
    public synchronized String toString() {
        return name() + (before != null ? " (in force)" : "");
    }
}
