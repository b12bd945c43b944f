package io.lastunit.common.topology;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/** A clock that moves only when told to. Thread-safe. */
final class FakeClock implements InstantSource {
    private volatile Instant now;

    FakeClock(Instant start) {
        this.now = start;
    }

    FakeClock() {
        this(Instant.parse("2026-01-01T00:00:00Z"));
    }

    synchronized void advance(Duration d) {
        now = now.plus(d);
    }

    @Override
    public Instant instant() {
        return now;
    }
}
