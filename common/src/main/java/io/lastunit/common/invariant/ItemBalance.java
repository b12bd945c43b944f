package io.lastunit.common.invariant;

import java.util.List;

/**
 * The ledger of one item summed over every shard that holds it, at one cut:
 * {@code Σ allotment + in flight = Σ base} (DESIGN §1), where the item's total is the sum of the
 * shards' bases (quota plus restocks) and in flight is the quantity of the PENDING OUT records
 * whose IN record the target does not hold yet. Immutable.
 *
 * @param shards       how many shards reported the item
 * @param base         Σ base over those shards: the item's total
 * @param allotment    Σ allotment of its buckets over those shards
 * @param inFlight     Σ quantity of its PENDING OUT records not yet credited at the target
 * @param pending      ids of its PENDING OUT records (credited at the target or not)
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
