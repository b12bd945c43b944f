package io.lastunit.shard.decide;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What the lane loaded for one attempt at a batch, because a decision asked for it
 * ({@link Needs}): key rows, buyer usage, hold rows, each bucket's due holds, and what borrows
 * came to. "Loaded and absent" is recorded as such: a key with no row is a new key, a buyer
 * with no row has used nothing. Filled by the lane between decisions; read by the decider.
 * Not thread-safe.
 */
public final class Loaded {
    /** The database clock when the attempt's transaction began (epoch micros); the lane's estimate until a load. */
    long nowMicros;
    final Map<KeyName, HoldFacts> keyRows = new HashMap<>();
    final Set<KeyName> keysLoaded = new HashSet<>();
    final Map<BuyerName, Long> usage = new HashMap<>();
    final Map<UUID, HoldFacts> holds = new HashMap<>();
    final Set<UUID> holdsLoaded = new HashSet<>();
    final Map<Slot, Due> due = new HashMap<>();
    final Map<Slot, BorrowResult> borrows = new HashMap<>();

    /**
     * A bucket's due holds: HELD with expiry at or before {@link #nowMicros}, at most the sweep's
     * limit, and the earliest expiry of its HELD holds after them ({@link Long#MIN_VALUE}: the
     * limit cut the list, sweep again next batch; {@link Long#MAX_VALUE}: none).
     */
    public record Due(List<HoldFacts> holds, long nextDueMicros) {
        public Due {
            holds = List.copyOf(holds);
        }
    }

    public Loaded(long nowMicros) {
        this.nowMicros = nowMicros;
    }

    public long nowMicros() {
        return nowMicros;
    }

    /** The database's clock as read by a load in the attempt's transaction. */
    public void nowMicros(long micros) {
        nowMicros = micros;
    }

    /** The rows of these keys (a key absent from {@code rows} has none). */
    public void keys(Set<KeyName> asked, List<HoldFacts> rows) {
        keysLoaded.addAll(asked);
        for (HoldFacts h : rows) {
            keyRows.put(h.keyName(), h);
        }
    }

    /** Committed usage of these buyers (a buyer absent from {@code used} has used nothing). */
    public void usage(Set<BuyerName> asked, Map<BuyerName, Long> used) {
        for (BuyerName b : asked) {
            usage.put(b, used.getOrDefault(b, 0L));
        }
    }

    /** The rows of these holds (an id absent from {@code rows} has none). */
    public void holds(Set<UUID> asked, List<HoldFacts> rows) {
        holdsLoaded.addAll(asked);
        for (HoldFacts h : rows) {
            holds.put(h.holdId(), h);
        }
    }

    public void due(Slot slot, Due d) {
        due.put(slot, d);
    }

    public void borrowed(Slot slot, BorrowResult r) {
        borrows.put(slot, r);
    }

    /** Committed usage the decision counted on, for the write's compare-and-set. */
    public long usageOf(BuyerName b) {
        return usage.getOrDefault(b, 0L);
    }
}
