package io.lastunit.admin.move.plan;

import io.lastunit.api.shard.v1.BucketFigures;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.SeatFigures;
import io.lastunit.api.shard.v1.TenantSummary;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The verification of a fenced move: the tenant's items as the source cell's shards summarize
 * them against the same items on the target's, per item and region ({@code SummarizeTenant}).
 * Every figure the invariants of DESIGN §1 are computed from must be equal: the item's base
 * (total), its buckets' allotment, available, held and sold, its holds and their units by state,
 * its buyer usage, its transfers and restocks, and each bucket's counters and holds' units. Only the item's state differs by design (FROZEN
 * at the source, IMPORTING at the target) and is not compared. A transfer still PENDING at the
 * source is a difference too: the fence would cut it in half.
 *
 * <p>Pure; stateless. Each difference is a sentence naming the item, the region and both values.
 */
public final class SummaryComparison {
    /** Most differences listed; more are counted in the last line. */
    static final int DIFFERENCES_MAX = 20;

    private SummaryComparison() {
    }

    /** The differences between {@code source} and {@code target} (empty: equal), at most {@value #DIFFERENCES_MAX} and a count. */
    public static List<String> differences(List<TenantSummary> source, List<TenantSummary> target) {
        List<String> out = new ArrayList<>();
        Map<String, ItemSummary> from = byItemRegion(source, "source", out);
        Map<String, ItemSummary> to = byItemRegion(target, "target", out);
        for (Map.Entry<String, ItemSummary> e : from.entrySet()) {
            ItemSummary s = e.getValue();
            ItemSummary t = to.get(e.getKey());
            if (s.getTransfersPending() > 0) {
                out.add(e.getKey() + ": " + s.getTransfersPending() + " transfer(s) PENDING at the source");
            }
            if (t == null) {
                out.add(e.getKey() + ": missing at the target");
                continue;
            }
            compare(out, e.getKey(), "total", s.getTotal(), t.getTotal());
            compare(out, e.getKey(), "bucket_count", s.getBucketCount(), t.getBucketCount());
            compare(out, e.getKey(), "collapsed", s.getCollapsed(), t.getCollapsed());
            compare(out, e.getKey(), "allotment", s.getAllotment(), t.getAllotment());
            compare(out, e.getKey(), "available", s.getAvailable(), t.getAvailable());
            compare(out, e.getKey(), "held", s.getHeld(), t.getHeld());
            compare(out, e.getKey(), "sold", s.getSold(), t.getSold());
            compare(out, e.getKey(), "holds_by_state", new TreeMap<>(s.getHoldsByStateMap()),
                    new TreeMap<>(t.getHoldsByStateMap()));
            compare(out, e.getKey(), "units_by_state", new TreeMap<>(s.getUnitsByStateMap()),
                    new TreeMap<>(t.getUnitsByStateMap()));
            compare(out, e.getKey(), "usage_units", s.getUsageUnits(), t.getUsageUnits());
            compare(out, e.getKey(), "usage_buyers", s.getUsageBuyers(), t.getUsageBuyers());
            compare(out, e.getKey(), "transferred_in", s.getTransferredIn(), t.getTransferredIn());
            compare(out, e.getKey(), "transferred_out", s.getTransferredOut(), t.getTransferredOut());
            compare(out, e.getKey(), "transfers_pending", s.getTransfersPending(), t.getTransfersPending());
            compare(out, e.getKey(), "restocks", s.getRestocks(), t.getRestocks());
            compare(out, e.getKey(), "restocked_units", s.getRestockedUnits(), t.getRestockedUnits());
            compareBuckets(out, e.getKey(), s.getBucketsList(), t.getBucketsList());
            if (!s.getSeats().equals(t.getSeats())) {
                out.add(e.getKey() + ": seats " + brief(s.getSeats()) + " at the source, " + brief(t.getSeats())
                        + " at the target");
            }
        }
        for (String key : to.keySet()) {
            if (!from.containsKey(key)) {
                out.add(key + ": at the target but not at the source");
            }
        }
        if (out.size() > DIFFERENCES_MAX) {
            int more = out.size() - DIFFERENCES_MAX;
            List<String> first = new ArrayList<>(out.subList(0, DIFFERENCES_MAX));
            first.add("and " + more + " more");
            return first;
        }
        return out;
    }

    /** Items by "item in region"; an item twice in one region (two shards) is a difference. */
    private static Map<String, ItemSummary> byItemRegion(List<TenantSummary> summaries, String side, List<String> out) {
        Map<String, ItemSummary> m = new TreeMap<>();
        for (TenantSummary ts : summaries) {
            for (ItemSummary i : ts.getItemsList()) {
                String key = "item " + i.getItemId() + " in " + i.getRegion();
                if (m.put(key, i) != null) {
                    out.add(key + ": on two shards of the " + side + " (one is " + ts.getShardId() + ")");
                }
            }
        }
        return m;
    }

    /** The first bucket whose figures differ, if any (buckets come sorted by number). */
    private static void compareBuckets(List<String> out, String key, List<BucketFigures> source,
                                       List<BucketFigures> target) {
        for (int i = 0; i < Math.max(source.size(), target.size()); i++) {
            BucketFigures s = i < source.size() ? source.get(i) : null;
            BucketFigures t = i < target.size() ? target.get(i) : null;
            if (!Objects.equals(s, t)) {
                out.add(key + ": bucket figures " + brief(s) + " at the source, " + brief(t) + " at the target");
                return;
            }
        }
    }

    private static String brief(BucketFigures b) {
        return b == null ? "(none)" : "{bucket " + b.getBucketNo() + ": allotment " + b.getAllotment() + ", available "
                + b.getAvailable() + ", held " + b.getHeld() + ", sold " + b.getSold() + ", HELD units "
                + b.getHeldUnits() + ", SOLD units " + b.getSoldUnits() + (b.getRow() ? "" : ", no row") + "}";
    }

    private static String brief(SeatFigures f) {
        return "{" + f.getSeats() + " seats, " + f.getOnSale() + " on sale, " + f.getClaimed() + " in holds, digest "
                + f.getDigest() + "}";
    }

    private static void compare(List<String> out, String key, String field, Object source, Object target) {
        if (!Objects.equals(source, target)) {
            out.add(key + ": " + field + " " + source + " at the source, " + target + " at the target");
        }
    }
}
