package io.lastunit.admin.move.plan;

import io.lastunit.api.shard.v1.BucketFigures;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.TenantSummary;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A shard's summary put together from its two parts at one cut (SummarizeTenant's SETTLED and
 * RECENT): the recent part's item and bucket rows, live holds, usage and restocks, plus the
 * settled part's holds by state, units by state, per-bucket sold units and transfers. Settled rows
 * never change, so a mover reads that part before the fence and only the recent part inside it.
 *
 * <p>Pure; stateless.
 */
public final class SummaryParts {
    private SummaryParts() {
    }

    /**
     * Each recent summary with the settled summary of the same shard added in; a shard with no
     * settled summary is taken as it is.
     *
     * @throws IllegalArgumentException when a settled summary names a shard, or an item, the recent ones lack
     */
    public static List<TenantSummary> combine(List<TenantSummary> settled, List<TenantSummary> recent) {
        Map<String, TenantSummary> settledByShard = new HashMap<>();
        for (TenantSummary s : settled) {
            if (settledByShard.put(s.getShardId(), s) != null) {
                throw new IllegalArgumentException("two settled summaries of shard " + s.getShardId());
            }
        }
        List<TenantSummary> out = new ArrayList<>(recent.size());
        for (TenantSummary r : recent) {
            TenantSummary s = settledByShard.remove(r.getShardId());
            out.add(s == null ? r : combine(s, r));
        }
        if (!settledByShard.isEmpty()) {
            throw new IllegalArgumentException("settled summaries of shards with no recent one: "
                    + settledByShard.keySet());
        }
        return out;
    }

    private static TenantSummary combine(TenantSummary settled, TenantSummary recent) {
        Map<String, ItemSummary> settledItems = new HashMap<>();
        settled.getItemsList().forEach(i -> settledItems.put(i.getItemId() + "\n" + i.getRegion(), i));
        TenantSummary.Builder out = recent.toBuilder().clearItems();
        for (ItemSummary r : recent.getItemsList()) {
            ItemSummary s = settledItems.remove(r.getItemId() + "\n" + r.getRegion());
            out.addItems(s == null ? r : combine(s, r));
        }
        if (!settledItems.isEmpty()) {
            throw new IllegalArgumentException("shard " + recent.getShardId() + ": settled items missing from the"
                    + " recent part: " + settledItems.keySet().stream().map(k -> k.replace('\n', '@')).sorted().toList());
        }
        return out.build();
    }

    private static ItemSummary combine(ItemSummary settled, ItemSummary recent) {
        ItemSummary.Builder b = recent.toBuilder();
        settled.getHoldsByStateMap().forEach((k, v) -> b.putHoldsByState(k, b.getHoldsByStateOrDefault(k, 0) + v));
        settled.getUnitsByStateMap().forEach((k, v) -> b.putUnitsByState(k, b.getUnitsByStateOrDefault(k, 0) + v));
        b.setTransferredIn(recent.getTransferredIn() + settled.getTransferredIn())
                .setTransferredOut(recent.getTransferredOut() + settled.getTransferredOut())
                .setTransfersPending(recent.getTransfersPending() + settled.getTransfersPending());
        Map<Integer, BucketFigures.Builder> buckets = new TreeMap<>();
        for (BucketFigures f : recent.getBucketsList()) {
            buckets.put(f.getBucketNo(), f.toBuilder());
        }
        for (BucketFigures f : settled.getBucketsList()) {
            BucketFigures.Builder into = buckets.computeIfAbsent(f.getBucketNo(),
                    n -> BucketFigures.newBuilder().setBucketNo(n));
            into.setHeldUnits(into.getHeldUnits() + f.getHeldUnits()).setSoldUnits(into.getSoldUnits() + f.getSoldUnits());
        }
        b.clearBuckets();
        buckets.values().forEach(b::addBuckets);
        return b.build();
    }
}
