package io.lastunit.admin.move.plan;

import io.lastunit.api.shard.v1.BucketFigures;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.SeatFigures;
import io.lastunit.api.shard.v1.TenantSummary;
import java.util.ArrayList;
import java.util.List;

/**
 * The invariants of DESIGN §1 recomputed from summaries (whole ones, or put together by
 * {@link SummaryParts}), per bucket and item of every shard of one side of a move:
 * <ul>
 *   <li>per bucket: no counter below zero, {@code available + held + sold = allotment},
 *       {@code held = Σ qty of its HELD holds}, {@code sold = Σ qty of its SOLD holds};</li>
 *   <li>per item and shard: its base plus the units transferred in, less those transferred out,
 *       is the sum of its buckets' allotment;</li>
 *   <li>per SEATED item: its allotment is its seats on sale, and its seats in a hold are the
 *       units of its HELD and SOLD holds.</li>
 * </ul>
 * A bucket that has holds but no row is a drift too. Pure; stateless. Each drift is a sentence
 * naming the side, shard, item, bucket and both values; at most {@value #DRIFTS_MAX} and a count.
 */
public final class SummaryInvariants {
    static final int DRIFTS_MAX = 20;

    private SummaryInvariants() {
    }

    /** @param side "source" or "target", for the sentences */
    public static List<String> drifts(String side, List<TenantSummary> summaries) {
        List<String> out = new ArrayList<>();
        for (TenantSummary s : summaries) {
            for (ItemSummary i : s.getItemsList()) {
                String at = side + " shard " + s.getShardId() + ", item " + i.getItemId() + " in " + i.getRegion();
                long allotment = 0;
                for (BucketFigures b : i.getBucketsList()) {
                    String bucket = at + ", bucket " + b.getBucketNo() + ": ";
                    if (!b.getRow()) {
                        out.add(bucket + "holds of " + (b.getHeldUnits() + b.getSoldUnits()) + " units but no bucket row");
                        continue;
                    }
                    allotment += b.getAllotment();
                    if (b.getAvailable() < 0 || b.getHeld() < 0 || b.getSold() < 0) {
                        out.add(bucket + "a counter below zero (available " + b.getAvailable() + ", held "
                                + b.getHeld() + ", sold " + b.getSold() + ")");
                    }
                    if (b.getAvailable() + b.getHeld() + b.getSold() != b.getAllotment()) {
                        out.add(bucket + "available " + b.getAvailable() + " + held " + b.getHeld() + " + sold "
                                + b.getSold() + " is not its allotment " + b.getAllotment());
                    }
                    if (b.getHeld() != b.getHeldUnits()) {
                        out.add(bucket + "held " + b.getHeld() + " but its HELD holds sum to " + b.getHeldUnits());
                    }
                    if (b.getSold() != b.getSoldUnits()) {
                        out.add(bucket + "sold " + b.getSold() + " but its SOLD holds sum to " + b.getSoldUnits());
                    }
                }
                if (i.hasSeats()) {
                    seats(out, at, i, allotment);
                }
                long ledger = i.getTotal() + i.getTransferredIn() - i.getTransferredOut();
                if (ledger != allotment) {
                    out.add(at + ": base " + i.getTotal() + " + transferred in " + i.getTransferredIn() + " - out "
                            + i.getTransferredOut() + " = " + ledger + " but its buckets' allotment sums to " + allotment);
                }
            }
        }
        return capped(out);
    }

    /**
     * A SEATED item: its allotment is its seats on sale (SEAT_COUNT), and the seats in a hold are
     * as many as the units of its HELD and SOLD holds (SEAT_CLAIM, counted: which seat names which
     * hold is compared between the sides by the seats' digest).
     */
    private static void seats(List<String> out, String at, ItemSummary i, long allotment) {
        SeatFigures f = i.getSeats();
        if (f.getOnSale() != allotment) {
            out.add(at + ": " + f.getOnSale() + " seats on sale but its buckets' allotment is " + allotment);
        }
        long holding = i.getUnitsByStateOrDefault("HELD", 0) + i.getUnitsByStateOrDefault("SOLD", 0);
        if (f.getClaimed() != holding) {
            out.add(at + ": " + f.getClaimed() + " seats in holds but its HELD and SOLD holds are of " + holding
                    + " seats");
        }
    }

    private static List<String> capped(List<String> out) {
        if (out.size() > DRIFTS_MAX) {
            int more = out.size() - DRIFTS_MAX;
            List<String> first = new ArrayList<>(out.subList(0, DRIFTS_MAX));
            first.add("and " + more + " more");
            return first;
        }
        return out;
    }
}
