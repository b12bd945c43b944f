package io.lastunit.shard.move;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The tenants this node served a tenant move's call for lately (an export, an import, a state
 * change, a drop, a summary), in memory: for {@link #QUIET} after a tenant's last such call,
 * {@link #recent} says so. Retention asks it, besides the topology, before it deletes a tenant's
 * rows: a move's first export can reach a node before its topology shows the move, and a node
 * without a topology sees moves only this way. An export notes its tenant before it takes the
 * tenant's lock for its cut, so a retention batch either committed before the export's snapshot or
 * sees the note.
 *
 * <p>Bounded: at most {@link #TENANTS_MAX} tenants; past that, entries older than {@link #QUIET}
 * are dropped, and while it is still full every tenant reads as recent (retention then deletes
 * nothing: safe, and loud in its log line). Thread-safe; never blocks. Time from the injected
 * nanosecond clock.
 */
public final class MoveActivity {
    /** How long after a tenant's last move call here it still counts as moving. */
    public static final Duration QUIET = Duration.ofHours(1);
    /** Tenants remembered at once. */
    public static final int TENANTS_MAX = 10_000;

    private final LongSupplier nanoClock;
    private final Map<String, Long> lastCallNanos = new ConcurrentHashMap<>();

    public MoveActivity(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    /** Notes a move call for {@code tenant}, now. */
    public void touch(String tenant) {
        long now = nanoClock.getAsLong();
        lastCallNanos.put(tenant, now);
        if (lastCallNanos.size() > TENANTS_MAX) {
            lastCallNanos.values().removeIf(at -> now - at > QUIET.toNanos());
        }
    }

    /** Whether a move call for {@code tenant} came in the last {@link #QUIET} (every tenant, while full). */
    public boolean recent(String tenant) {
        if (lastCallNanos.size() > TENANTS_MAX) {
            return true;
        }
        Long at = lastCallNanos.get(tenant);
        return at != null && nanoClock.getAsLong() - at <= QUIET.toNanos();
    }
}
