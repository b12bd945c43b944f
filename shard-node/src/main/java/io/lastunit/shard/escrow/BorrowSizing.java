package io.lastunit.shard.escrow;

/**
 * How many units one borrow takes from a sibling bucket: what the Reserve still lacks
 * ({@code need}), or half of what the sibling can spare if that is more, or all it can spare if
 * that is less; never more than {@code cap}. What the sibling can spare is its available units
 * less what its own lane has promised to Reserves of a batch it is still writing. Why half: the
 * buckets even out, and a bucket that borrowed has stock for many more sales, so borrowing stays
 * rare. Pure; immutable.
 */
public record BorrowSizing(long need, long cap) {
    public BorrowSizing {
        if (need < 1 || cap < 1) {
            throw new IllegalArgumentException("borrow of " + need + " (at most " + cap + ")");
        }
    }

    /**
     * The units to move from a sibling with {@code lenderAvailable} units in its locked row, of
     * which its lane promised {@code promised}; 0 when it can spare nothing.
     */
    public long units(long lenderAvailable, long promised) {
        long spare = lenderAvailable - Math.max(0, promised);
        if (spare < 1) {
            return 0;
        }
        return Math.min(cap, Math.min(spare, Math.max(need, spare / 2)));
    }
}
