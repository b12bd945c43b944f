package io.lastunit.shard.lane;

import java.time.Instant;
import java.time.InstantSource;

/**
 * A lane's estimate of the database clock, which judges hold expiry: the local clock plus the
 * offset measured at the last bucket load (the load reads the database's {@code now()}).
 * Lane-confined. Hazard: the estimate is only as good as the last load; it decides when a bucket
 * is worth sweeping and when a sibling's holds are due, never whether a hold expired (the
 * database's conditional statements decide that).
 */
final class DbClock {
    private final InstantSource local;
    /** Database clock minus local clock, in micros, as measured at the last bucket load. */
    private long offsetMicros;

    DbClock(InstantSource local) {
        this.local = local;
    }

    /** A statement read the database's clock as {@code dbNowMicros} just now. */
    void measured(long dbNowMicros) {
        offsetMicros = dbNowMicros - localMicros();
    }

    /** The database clock, estimated, in epoch micros. */
    long nowMicros() {
        return localMicros() + offsetMicros;
    }

    private long localMicros() {
        Instant now = local.instant();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }
}
