package io.lastunit.common.invariant;

import java.util.List;

/**
 * The ledger of one item summed over every shard that holds it, at one cut:
 * {@code Σ allotment + in flight = Σ base} (DESIGN §1), where the item's total is the sum of the
 * shards' bases (quota plus restocks) and in flight is the quantity of the transfers whose OUT
 * record the snapshots saw without the IN record, less that of those whose IN record they saw
 * without the OUT record (see {@link PendingTransfer}). Immutable.
 *
 * @param shards       how many shards reported the item
 * @param base         Σ base over those shards: the item's total
 * @param allotment    Σ allotment of its buckets over those shards
 * @param inFlight     Σ {@link PendingTransfer#inFlight()} of its transfers (may be negative)
 * @param pending      ids of the transfers counted in {@code inFlight} ({@link CrossShardChecker} counts only
 *                     those in flight between its snapshots)
 */
public record ItemBalance(ItemKey item, int shards, long base, long allotment, long inFlight, List<String> pending) {

    public ItemBalance {
        pending = List.copyOf(pending);
    }

    /** {@code allotment + inFlight - base}: units created (&gt; 0) or lost (&lt; 0); 0 when the item balances. */
    public long drift() {
        return allotment + inFlight - base;
    }

    public boolean ok() {
        return drift() == 0;
    }

    /** One line for logs: {@code tenant/item base=… allotment=… in_flight=… drift=…}. */
    public String describe() {
        return item + " shards=" + shards + " base=" + base + " allotment=" + allotment + " in_flight=" + inFlight
                + " drift=" + drift() + (pending.isEmpty() ? "" : " pending=" + pending);
    }
}
