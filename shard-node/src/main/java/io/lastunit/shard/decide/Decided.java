package io.lastunit.shard.decide;

import java.util.List;
import java.util.Map;

/**
 * A batch decided: one outcome per call (by index) and everything the writer writes — the
 * counter changes per bucket, the holds that expire, the transitions in the order they took
 * effect, buyer usage taken and given back — plus what the lane publishes after the commit
 * (each swept bucket's next due expiry, demand per item). Immutable once returned.
 *
 * @param usageTaken units each buyer takes by this batch's Reserves, with the usage the decision
 *                   counted on (the write's compare-and-set, after {@code usageGiven} is written)
 * @param usageGiven ended holds (released, expired) of items with a per-buyer limit: their
 *                   buyers' usage goes down by their units
 * @param demand     per item: {Reserves decided past routing, SOLD_OUT answers}
 */
public record Decided(
        Outcome[] outcomes,
        Map<Slot, BucketDelta> deltas,
        List<HoldFacts> expired,
        List<Step> steps,
        Map<BuyerName, UsageTake> usageTaken,
        List<HoldFacts> usageGiven,
        Map<Slot, Long> nextDue,
        Map<ItemName, long[]> demand) implements Decision {

    /**
     * One transition that took effect. {@code round} counts earlier steps on the same hold in
     * this batch: the writer writes round 0 of every hold, then round 1, so each statement
     * finds the row the step before it left.
     */
    public record Step(Call.Transition call, HoldFacts before, HoldFacts after, int round) {
    }

    /** A buyer's usage goes from {@code expected} (after this batch's ended holds) up by {@code add}. */
    public record UsageTake(long expected, long add) {
    }

    public Outcome outcome(int index) {
        return outcomes[index];
    }
}
