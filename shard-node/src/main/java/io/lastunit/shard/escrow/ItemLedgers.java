package io.lastunit.shard.escrow;

import io.lastunit.shard.store.LaneStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shard's item ledgers, one per item, filled as lanes load items. An item's buckets live as
 * long as the node, so a ledger is dropped only when a tenant move rewrites or retires the items'
 * rows ({@link #forget}), while no lane sells them. Thread-safe: the first ledger
 * registered for an item is the one every lane and the engine use, so two lanes loading the same
 * item at once share one.
 */
public final class ItemLedgers {
    private record Item(String tenantId, String itemId) {
    }

    private final ConcurrentHashMap<Item, ItemLedger> ledgers = new ConcurrentHashMap<>();
    private final LaneStore store;

    public ItemLedgers(LaneStore store) {
        this.store = store;
    }

    /** The item's ledger if this node knows the item, else null. */
    public ItemLedger get(String tenant, String item) {
        return ledgers.get(new Item(tenant, item));
    }

    /**
     * Drops the ledgers of the tenant's {@code items}: the next lane to load one of their buckets
     * reads the ledger again. Only for items no lane sells (fenced by a move): a batch deciding on
     * an item whose ledger vanished between two of its decisions would see another bucket count.
     */
    public void forget(String tenant, Collection<String> items) {
        for (String item : items) {
            ledgers.remove(new Item(tenant, item));
        }
    }

    /** Registers a ledger unless one is known; returns the one in use. */
    public ItemLedger register(ItemLedger ledger) {
        ItemLedger prev = ledgers.putIfAbsent(new Item(ledger.tenantId, ledger.itemId), ledger);
        return prev != null ? prev : ledger;
    }

    /** The item's ledger, loading it on {@code c} when unknown; null if the item has no buckets here. */
    public ItemLedger load(Connection c, String tenant, String item) throws SQLException {
        ItemLedger known = get(tenant, item);
        if (known != null) {
            return known;
        }
        LaneStore.LoadedLedger loaded = store.loadLedger(c, tenant, item);
        if (loaded == null) {
            return null;
        }
        int[] open = loaded.buckets().stream().filter(LaneStore.LedgerRow::open)
                .mapToInt(LaneStore.LedgerRow::bucketNo).toArray();
        if (open.length == 0) {
            open = new int[] {0};
        }
        List<String> regions = loaded.regions().isEmpty() ? List.of(loaded.homeRegion()) : loaded.regions();
        ItemLedger fresh = new ItemLedger(tenant, item, loaded.buckets().size(), loaded.homeRegion(), regions, open,
                loaded.collapsed());
        for (LaneStore.LedgerRow row : loaded.buckets()) {
            fresh.publish(row.bucketNo(), row.available());
            fresh.publishDue(row.bucketNo(), row.earliestDueMicros());
        }
        return register(fresh);
    }
}
