package io.lastunit.common.invariant;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reports an item only once it has drifted in {@code consecutive} checks in a row (any amount;
 * the latest balance is reported). One check of {@link CrossShardChecker} is exact under its two
 * assumptions (snapshots less than a window apart, transfer steps shorter than the window; see
 * {@link TransferMatcher}); the streak guards against what those do not cover, such as a step's
 * transaction held open longer than the window.
 *
 * <p>State: a streak counter per item that drifted in the last check, and nothing else. An item
 * that balanced, or that was not part of a check at all (its shards could not be read), loses its
 * streak: memory is bounded by the items drifting in the latest check, and an unreadable shard
 * never turns a passing drift into an alert.
 *
 * <p>Thread-safe (synchronized); meant to be fed by one scheduled checker.
 */
public final class DriftTracker {
    /** Most consecutive checks a caller may require. */
    public static final int CONSECUTIVE_MAX = 100;

    /** An item that drifted in {@code checks} consecutive checks, with its latest balance. */
    public record PersistentDrift(ItemBalance balance, int checks) {
        /** True on the check that made the drift persistent (exactly {@code consecutive} in a row). */
        public boolean isNew(int consecutive) {
            return checks == consecutive;
        }
    }

    private final int consecutive;
    private Map<ItemKey, Integer> streaks = new HashMap<>();

    /** @param consecutive checks in a row an item must drift in before it is reported, 1..{@value #CONSECUTIVE_MAX} */
    public DriftTracker(int consecutive) {
        if (consecutive < 1 || consecutive > CONSECUTIVE_MAX) {
            throw new IllegalArgumentException("consecutive=" + consecutive + " is outside [1, " + CONSECUTIVE_MAX + "]");
        }
        this.consecutive = consecutive;
    }

    public int consecutive() {
        return consecutive;
    }

    /**
     * Feeds one check: the balances of every item it covered.
     *
     * @return the items that have now drifted in at least {@code consecutive} checks in a row,
     *     sorted by item; an item stays in the answer for as long as it keeps drifting
     */
    public synchronized List<PersistentDrift> observe(Collection<ItemBalance> checked) {
        Map<ItemKey, Integer> next = new HashMap<>();
        List<PersistentDrift> persistent = new ArrayList<>();
        for (ItemBalance b : checked) {
            if (b.ok()) {
                continue;
            }
            int streak = streaks.getOrDefault(b.item(), 0) + 1;
            next.put(b.item(), Math.min(streak, Integer.MAX_VALUE - 1));
            if (streak >= consecutive) {
                persistent.add(new PersistentDrift(b, streak));
            }
        }
        streaks = next;
        persistent.sort((a, b) -> a.balance().item().compareTo(b.balance().item()));
        return persistent;
    }

    /** Items drifting in the latest check (persistent or not yet). */
    public synchronized int drifting() {
        return streaks.size();
    }
}
