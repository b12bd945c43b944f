package io.lastunit.common.invariant;

import io.lastunit.api.shard.v1.ItemLevel;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The item invariant across shards and regions (DESIGN §1), as pure arithmetic over what the
 * shards reported: for each item, {@code Σ allotment + Σ quantity of transfers in flight = Σ base}.
 * No I/O; {@link CrossShardChecker} gathers the input over gRPC.
 *
 * <p>The shards are not read in one atomic cut: the in-flight transfers given must say, per
 * transfer, which side the shards' reads saw ({@link PendingTransfer}, as {@link TransferMatcher}
 * works it out); then a step committed between two reads balances too. The input must hold each
 * item's level once per shard (the shards of the item's cell only).
 *
 * <p>Stateless and thread-safe.
 */
public final class CrossShardInvariant {
    private CrossShardInvariant() {
    }

    /**
     * The balance of every item that appears in {@code levels} or in {@code pending}, sorted by
     * item. An item that only appears in a pending record (its shards did not report it) has
     * base 0 and so drifts by the units in flight: they belong to nothing known.
     *
     * @param levels  the items' levels from every shard that holds them
     * @param pending the PENDING OUT records of those shards
     */
    public static List<ItemBalance> balances(Collection<ItemLevel> levels, Collection<PendingTransfer> pending) {
        Map<ItemKey, Sum> sums = new TreeMap<>();
        for (ItemLevel l : levels) {
            Sum s = sums.computeIfAbsent(new ItemKey(l.getTenantId(), l.getItemId()), k -> new Sum());
            s.shards++;
            s.base = Math.addExact(s.base, l.getBase());
            s.allotment = Math.addExact(s.allotment, l.getAllotment());
        }
        for (PendingTransfer p : pending) {
            Sum s = sums.computeIfAbsent(p.item(), k -> new Sum());
            s.inFlight = Math.addExact(s.inFlight, p.inFlight());
            s.pending.add(p.transferId());
        }
        List<ItemBalance> out = new ArrayList<>(sums.size());
        sums.forEach((k, s) -> out.add(new ItemBalance(k, s.shards, s.base, s.allotment, s.inFlight, s.pending)));
        return out;
    }

    /** The balance of one item from its levels and pending records (others in the input are ignored). */
    public static ItemBalance balance(ItemKey item, Collection<ItemLevel> levels, Collection<PendingTransfer> pending) {
        List<ItemLevel> mine = levels.stream()
                .filter(l -> l.getTenantId().equals(item.tenant()) && l.getItemId().equals(item.item())).toList();
        List<PendingTransfer> minePending = pending.stream().filter(p -> p.item().equals(item)).toList();
        List<ItemBalance> b = balances(mine, minePending);
        return b.isEmpty() ? new ItemBalance(item, 0, 0, 0, 0, List.of()) : b.get(0);
    }

    private static final class Sum {
        int shards;
        long base;
        long allotment;
        long inFlight;
        final List<String> pending = new ArrayList<>();
    }
}
