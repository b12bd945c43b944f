package io.lastunit.shard.lane;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.common.HoldId;
import java.util.concurrent.CompletableFuture;

/**
 * One operation waiting in a lane's queue. Each carries the bucket that decides which lane
 * runs it and the future completed after the batch that applied it committed (or failed).
 * Requests arrive validated.
 */
sealed interface Op {
    BucketKey bucket();

    CompletableFuture<?> future();

    /**
     * Reserve: place a hold or answer SOLD_OUT / LIMIT_EXCEEDED. With {@code claimHome} set, a
     * claim of the key instead (ShardService.ClaimKey, at the item's home region
     * {@code claimHome}): decided as a Reserve's key is, it records the key's use by the request's
     * region as a CLAIMED row and moves no units.
     */
    record Reserve(BucketKey bucket, ReserveRequest request, String fingerprint, long holdTtlMsRequested,
                   String claimHome, CompletableFuture<ReserveResponse> future) implements Op {
        boolean claim() {
            return claimHome != null;
        }

        /** What names this Reserve: its item's idempotency key. */
        io.lastunit.shard.store.KeyRef keyRef() {
            return new io.lastunit.shard.store.KeyRef(request.getTenantId(), request.getItemId(),
                    request.getIdempotencyKey());
        }
    }

    /** Confirm, Release or Extend of one hold. */
    record HoldAction(BucketKey bucket, HoldId holdId, Kind kind, String orderRef,
                      CompletableFuture<Hold> future) implements Op {
        enum Kind { CONFIRM, RELEASE, EXTEND }
    }

    /** Expire the bucket's due holds (from the sweeper); completes with the count expired. */
    record Sweep(BucketKey bucket, CompletableFuture<Integer> future) implements Op {
    }

    /** Create an item and its buckets; {@code region} is the region this shard serves it in. */
    record CreateItem(BucketKey bucket, CreateItemRequest request, String region, long holdTtlMs, long extendByMs,
                      CompletableFuture<CreateItemResponse> future) implements Op {
    }

    /** Collapse the item's open buckets into bucket 0 (run by bucket 0's lane). */
    record Collapse(BucketKey bucket, CompletableFuture<Boolean> future) implements Op {
    }

    /** Step 1 of a transfer (run by bucket 0's lane). */
    record TransferOut(BucketKey bucket, io.lastunit.api.shard.v1.TransferOutRequest request,
                       CompletableFuture<io.lastunit.api.shard.v1.Transfer> future) implements Op {
    }

    /** Step 2 of a transfer (run by bucket 0's lane). */
    record TransferIn(BucketKey bucket, io.lastunit.api.shard.v1.TransferInRequest request,
                      CompletableFuture<io.lastunit.api.shard.v1.Transfer> future) implements Op {
    }

    /**
     * Drop the lane's cached buckets of the tenant's items, after the operations the lane took
     * before this one; completes once the answers of those operations are handed to the replier.
     * Offered to every lane (a tenant move changed the items' rows or states), so it names no
     * bucket: {@link #bucket} is the tenant's, with no item.
     */
    record Forget(String tenantId, CompletableFuture<Void> future) implements Op {
        @Override
        public BucketKey bucket() {
            return new BucketKey(tenantId, "", 0);
        }
    }

    /** Take seats of a SEATED item off sale or put them back (run by bucket 0's lane). */
    record SetSeats(BucketKey bucket, io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest request,
                    CompletableFuture<io.lastunit.api.inventory.v1.SetSeatsOnSaleResponse> future) implements Op {
    }

    /** Add units to an item's bucket 0. */
    record Restock(BucketKey bucket, RestockRequest request, CompletableFuture<RestockResponse> future) implements Op {
    }
}
