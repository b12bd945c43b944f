package io.lastunit.shard.transfer;

import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.common.Failure;
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
import java.util.ArrayList;
import java.util.List;

/**
 * The shard's side of the demarcation protocol (docs/demarcation.md): step 1 takes units out
 * of an item's buckets and records OUT PENDING, step 2 records IN DONE and credits bucket 0.
 * Each step is one transaction of its own, idempotent by transfer id, run by bucket 0's lane.
 * One per lane; lane-confined.
 *
 * <p>Hazard: a step whose commit failed has an unknown outcome; the lane's cached bucket 0 is
 * dropped and the caller retries with the same transfer id.
 */
public final class ShardTransfers {
    private final Transactions transactions;
    private final TransferStore transfers;
    private final ItemStore items;
    private final ItemLedgers ledgers;
    private final CachedRows cache;
    private final Duration retryAfter;
    private final Fence fence;

    public ShardTransfers(Transactions transactions, TransferStore transfers, ItemStore items, ItemLedgers ledgers,
                          CachedRows cache, Duration retryAfter, Fence fence) {
        this.fence = fence;
        this.transactions = transactions;
        this.transfers = transfers;
        this.items = items;
        this.ledgers = ledgers;
        this.cache = cache;
        this.retryAfter = retryAfter;
    }

    /** Step 1: the OUT record, new or as first recorded. Throws the {@link Failure} to answer otherwise. */
    public Transfer out(TransferOutRequest r) {
        try {
            return transactions.inTransaction(c -> out(c, r));
        } catch (SQLException e) {
            cache.forget(r.getTenantId(), r.getItemId(), 0);
            throw Failure.storeUnavailable("TransferOut outcome unknown; retry with the same transfer_id", e,
                    retryAfter);
        }
    }

    private Transfer out(Connection c, TransferOutRequest r) throws SQLException {
        refuseMoving(c, r.getTenantId(), r.getItemId());
        Transfer existing = transfers.read(c, r.getTransferId(), TransferDirection.OUT);
        if (existing != null) {
            c.rollback();
            return sameOut(existing, r);
        }
        ItemLedger ledger = ledgers.load(c, r.getTenantId(), r.getItemId());
        if (ledger == null) {
            c.rollback();
            throw noItem(r.getTenantId(), r.getItemId());
        }
        if (r.getCollapse()) {
            transfers.markCollapsed(c, r.getTenantId(), r.getItemId());
        }
        List<long[]> rows = items.lockBuckets(c, r.getTenantId(), r.getItemId());
        long available = 0;
        for (long[] row : rows) {
            available += row[1];
        }
        long take = Math.min(available, r.getMaxQuantity());
        if (take < Math.max(1, r.getMinQuantity())) {
            c.commit(); // the collapse mark, if asked for, stands on its own
            CommitWarnings.requireReplicated(c);
            if (r.getCollapse()) {
                ledger.markRegionCollapsed();
            }
            return nothingTaken(r);
        }
        List<LaneStore.BucketRow> after = takeOut(c, r, rows, take);
        Transfer recorded = transfers.recordOut(c, r.getTransferId(), r.getTenantId(), r.getItemId(),
                r.getPeerShardId(), take, r.getCollapse());
        c.commit();
        CommitWarnings.requireReplicated(c);
        if (r.getCollapse()) {
            ledger.markRegionCollapsed();
        }
        for (LaneStore.BucketRow row : after) {
            committed(ledger, row);
        }
        return recorded;
    }

    /** A retried step 1: the record it made, if it was made for the same item and peer. */
    private static Transfer sameOut(Transfer existing, TransferOutRequest r) {
        if (!existing.getTenantId().equals(r.getTenantId()) || !existing.getItemId().equals(r.getItemId())
                || !existing.getPeerShardId().equals(r.getPeerShardId())) {
            throw Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "transfer_id " + r.getTransferId() + " was used for "
                    + existing.getTenantId() + "/" + existing.getItemId() + " to " + existing.getPeerShardId());
        }
        return existing;
    }

    private static Transfer nothingTaken(TransferOutRequest r) {
        return Transfer.newBuilder().setTransferId(r.getTransferId()).setDirection(TransferDirection.OUT)
                .setTenantId(r.getTenantId()).setItemId(r.getItemId()).setPeerShardId(r.getPeerShardId())
                .setCollapse(r.getCollapse()).setQuantity(0).build();
    }

    /** Takes {@code take} units from the locked rows {bucket_no, available}, richest first. */
    private List<LaneStore.BucketRow> takeOut(Connection c, TransferOutRequest r, List<long[]> rows, long take)
            throws SQLException {
        rows.sort((a, b) -> Long.compare(b[1], a[1]));
        List<TransferStore.Take> takes = new ArrayList<>();
        long left = take;
        for (long[] row : rows) {
            if (left == 0) {
                break;
            }
            long t = Math.min(left, row[1]);
            if (t > 0) {
                takes.add(new TransferStore.Take((int) row[0], t));
                left -= t;
            }
        }
        List<LaneStore.BucketRow> after = transfers.takeOut(c, r.getTenantId(), r.getItemId(), takes);
        if (after.size() != takes.size()) {
            throw new SQLException("transfer out matched " + after.size() + " of " + takes.size()
                    + " locked buckets", "40001");
        }
        return after;
    }

    /** Step 2: the IN record, new or as first recorded. Throws the {@link Failure} to answer otherwise. */
    public Transfer in(TransferInRequest r) {
        try {
            return transactions.inTransaction(c -> in(c, r));
        } catch (SQLException e) {
            cache.forget(r.getTenantId(), r.getItemId(), 0);
            throw Failure.storeUnavailable("TransferIn outcome unknown; retry with the same transfer_id", e,
                    retryAfter);
        }
    }

    private Transfer in(Connection c, TransferInRequest r) throws SQLException {
        refuseMoving(c, r.getTenantId(), r.getItemId());
        ItemLedger ledger = ledgers.load(c, r.getTenantId(), r.getItemId());
        if (ledger == null) {
            c.rollback();
            throw noItem(r.getTenantId(), r.getItemId());
        }
        LaneStore.BucketRow row = transfers.recordInAndCredit(c, r.getTransferId(), r.getTenantId(), r.getItemId(),
                r.getPeerShardId(), r.getQuantity());
        Transfer recorded = transfers.read(c, r.getTransferId(), TransferDirection.IN);
        if (row != null) {
            ledger.raise(0, row.available());
        }
        c.commit();
        CommitWarnings.requireReplicated(c);
        if (recorded == null || !recorded.getTenantId().equals(r.getTenantId())
                || !recorded.getItemId().equals(r.getItemId()) || recorded.getQuantity() != r.getQuantity()
                || !recorded.getPeerShardId().equals(r.getPeerShardId())) {
            throw Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "transfer_id " + r.getTransferId() + " was credited as "
                    + recorded);
        }
        if (row != null) {
            committed(ledger, row);
        }
        return recorded;
    }

    /**
     * An item fenced by a tenant move takes no transfer step, not even a repeat: its records are
     * the move's to copy, and the item serves (and its steps resume) where the move leaves it.
     */
    private void refuseMoving(Connection c, String tenant, String item) throws SQLException {
        ItemState state = items.itemState(c, tenant, item);
        if (state != null && state.moving()) {
            c.rollback();
            throw fence.refusal(state, tenant, item);
        }
    }

    /** After a commit that wrote a bucket row: publish it and refresh the lane's cached copy. */
    private void committed(ItemLedger ledger, LaneStore.BucketRow row) {
        ledger.publish(row.bucketNo(), row.available());
        cache.committed(row);
    }

    private static Failure noItem(String tenant, String item) {
        return Failure.of(Reason.ITEM_NOT_FOUND, "no item " + tenant + "/" + item + " on this shard");
    }
}
