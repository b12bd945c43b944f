package io.lastunit.shard.lane;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.Failure;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.escrow.CachedRows;
import io.lastunit.shard.escrow.ItemLedger;
import io.lastunit.shard.escrow.ItemLedgers;
import io.lastunit.shard.fence.Fence;
import io.lastunit.shard.store.CommitWarnings;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.Transactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

/**
 * CreateItem and Restock, the item-level administrative calls, each in a transaction of its own
 * on bucket 0's lane, idempotent (by item and parameters, by restock id). Both refuse an item
 * fenced by a tenant move, and CreateItem any item of a tenant that has one here. One per lane;
 * lane-confined.
 *
 * <p>Hazard: a Restock whose commit failed has an unknown outcome: bucket 0 is dropped from the
 * lane's cache and the caller retries with the same restock id.
 */
final class ItemOperations {
    private final Transactions transactions;
    private final ItemStore items;
    private final ItemLedgers ledgers;
    private final CachedRows cache;
    private final LaneConfig config;
    private final Limits limits;
    private final Fence fence;

    ItemOperations(Transactions transactions, ItemStore items, ItemLedgers ledgers, CachedRows cache,
                   LaneConfig config, Limits limits, Fence fence) {
        this.fence = fence;
        this.transactions = transactions;
        this.items = items;
        this.ledgers = ledgers;
        this.cache = cache;
        this.config = config;
        this.limits = limits;
    }

    private Duration retryAfter() {
        return Duration.ofMillis(config.retryAfterMs());
    }

    void createItem(Op.CreateItem op) {
        CreateItemRequest r = op.request();
        long base = r.getTotal();
        List<String> regions = List.of(r.getHomeRegion());
        if (r.getRegionQuotasCount() > 0) {
            var quota = r.getRegionQuotasList().stream().filter(q -> q.getRegion().equals(op.region())).findFirst();
            if (quota.isEmpty()) {
                op.future().completeExceptionally(Failure.invalid("region_quotas", "has no quota for region "
                        + op.region() + ", the region this shard serves"));
                return;
            }
            base = quota.get().getQuantity();
            regions = r.getRegionQuotasList().stream().map(q -> q.getRegion()).toList();
        }
        int bucketCount = r.getBucketCount() != 0 ? r.getBucketCount() : config.defaultBuckets(base);
        ItemStore.ItemRow asked = new ItemStore.ItemRow(r.getHomeRegion(), r.getTotal(), base, r.getPerBuyerLimit(),
                op.holdTtlMs(), op.extendByMs(), bucketCount, regions);
        try {
            transactions.inTransaction(c -> {
                createItem(c, op, asked);
                return null;
            });
        } catch (SQLException e) {
            op.future().completeExceptionally(Failure.storeUnavailable("CreateItem failed; retry it as it is", e,
                    retryAfter(), op.request().getTenantId(), op.request().getItemId()));
        }
    }

    private void createItem(Connection c, Op.CreateItem op, ItemStore.ItemRow asked) throws SQLException {
        CreateItemRequest r = op.request();
        // Under the tenant's lock a move's freeze or import also takes: an item is created before
        // the move's statement (which then covers it) or is refused here.
        items.lockTenant(c, r.getTenantId(), true);
        ItemState moving = items.movingStateOfTenant(c, r.getTenantId());
        if (moving != null) {
            c.rollback();
            op.future().completeExceptionally(fence.refusal(moving, r.getTenantId(), r.getItemId()));
            return;
        }
        boolean created = items.createItem(c, r.getTenantId(), r.getItemId(), asked);
        if (!created) {
            ItemStore.ItemRow existing = items.readItem(c, r.getTenantId(), r.getItemId());
            c.rollback();
            if (!sameItem(r, asked, existing)) {
                op.future().completeExceptionally(Failure.of(Reason.ITEM_EXISTS, "item " + r.getTenantId()
                        + "/" + r.getItemId() + " exists with other parameters: existing=" + existing
                        + ", requested=" + asked));
                return;
            }
        }
        Stock stock = items.readStock(c, r.getTenantId(), r.getItemId());
        c.commit();
        CommitWarnings.requireReplicated(c);
        op.future().complete(CreateItemResponse.newBuilder().setStock(stock).setCreated(created).build());
    }

    /** A repeated CreateItem: the same parameters, where a default bucket count matches any count. */
    private static boolean sameItem(CreateItemRequest r, ItemStore.ItemRow asked, ItemStore.ItemRow existing) {
        return asked.equals(existing) || (r.getBucketCount() == 0 && existing != null
                && asked.equals(new ItemStore.ItemRow(existing.homeRegion(), existing.createdTotal(),
                existing.base(), existing.perBuyerLimit(), existing.holdTtlMs(), existing.extendByMs(),
                asked.bucketCount(), existing.regions())));
    }

    void restock(Op.Restock op) {
        try {
            transactions.inTransaction(c -> {
                restock(c, op);
                return null;
            });
        } catch (SQLException e) {
            BucketKey k = op.bucket();
            cache.forget(k.tenantId(), k.itemId(), k.bucketNo());
            op.future().completeExceptionally(Failure.storeUnavailable(
                    "Restock outcome unknown; retry with the same restock_id", e, retryAfter(), k.tenantId(), k.itemId()));
        }
    }

    private void restock(Connection c, Op.Restock op) throws SQLException {
        RestockRequest r = op.request();
        ItemState state = items.itemState(c, r.getTenantId(), r.getItemId());
        if (state != null && state.moving()) {
            c.rollback();
            op.future().completeExceptionally(fence.refusal(state, r.getTenantId(), r.getItemId()));
            return;
        }
        if (!items.recordRestock(c, r.getTenantId(), r.getRestockId(), r.getItemId(), r.getQuantity())) {
            answerRepeatedRestock(c, op);
            return;
        }
        LaneStore.BucketRow row = items.restock(c, r.getTenantId(), r.getItemId(), r.getQuantity(),
                limits.itemTotalMax());
        if (row == null) {
            boolean exists = items.readItem(c, r.getTenantId(), r.getItemId()) != null;
            c.rollback();
            op.future().completeExceptionally(exists
                    ? Failure.invalid("quantity", "is " + r.getQuantity() + ": the item's total would pass "
                            + limits.itemTotalMax())
                    : Failure.of(Reason.ITEM_NOT_FOUND, "no item " + r.getTenantId() + "/" + r.getItemId()));
            return;
        }
        Stock stock = items.readStock(c, r.getTenantId(), r.getItemId());
        ItemLedger known = ledgers.get(r.getTenantId(), r.getItemId());
        if (known != null) {
            known.raise(0, row.available());
        }
        c.commit();
        CommitWarnings.requireReplicated(c);
        if (known != null) { // a cached bucket always has its ledger: nothing to refresh otherwise
            known.publish(row.bucketNo(), row.available());
            cache.committed(row);
        }
        op.future().complete(RestockResponse.newBuilder().setStock(stock).setApplied(true).build());
    }

    /** The restock id was used before: the same restock is answered as not applied again. */
    private void answerRepeatedRestock(Connection c, Op.Restock op) throws SQLException {
        RestockRequest r = op.request();
        Object[] prev = items.readRestock(c, r.getTenantId(), r.getItemId(), r.getRestockId());
        Stock stock = items.readStock(c, r.getTenantId(), r.getItemId());
        c.rollback();
        if (prev == null || !prev[0].equals(r.getItemId()) || (long) prev[1] != r.getQuantity() || stock == null) {
            op.future().completeExceptionally(Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "restock_id "
                    + r.getRestockId() + " was used for item=" + (prev == null ? "?" : prev[0])
                    + " quantity=" + (prev == null ? "?" : prev[1])));
            return;
        }
        op.future().complete(RestockResponse.newBuilder().setStock(stock).setApplied(false).build());
    }
}
