package io.lastunit.common;

import io.grpc.Status;

/**
 * The stable reasons lastunit puts in {@code google.rpc.ErrorInfo.reason}, each bound to
 * exactly one gRPC status code. This enum is the one mapping from a failure to a status
 * (DESIGN §12): code that fails picks a reason, never a status. Callers branch on the code
 * and the reason; the names are API and never change.
 */
public enum Reason {
    /** A request field is empty, too long, out of bounds or names an unknown region. */
    INVALID_FIELD(Status.Code.INVALID_ARGUMENT),
    /** No record of this transfer on the shard (CompleteTransfer before TransferOut). */
    TRANSFER_NOT_FOUND(Status.Code.NOT_FOUND),
    /** The tenant has no such item (on this shard). */
    ITEM_NOT_FOUND(Status.Code.NOT_FOUND),
    /** No such hold. */
    HOLD_NOT_FOUND(Status.Code.NOT_FOUND),
    /** CreateItem for an item that exists with other parameters. */
    ITEM_EXISTS(Status.Code.ALREADY_EXISTS),
    /** An idempotency key (or restock id) seen before with other parameters. */
    IDEMPOTENCY_KEY_REUSED(Status.Code.ALREADY_EXISTS),
    /** The hold is no longer HELD (metadata {@code state}): released, expired or sold. */
    HOLD_NOT_HELD(Status.Code.FAILED_PRECONDITION),
    /** Extend was already applied to this hold; it works once. */
    HOLD_ALREADY_EXTENDED(Status.Code.FAILED_PRECONDITION),
    /** The hold was confirmed under another order reference. */
    ORDER_REF_MISMATCH(Status.Code.FAILED_PRECONDITION),
    /** The item is paused, frozen or moving: retry later; nothing was changed. */
    ITEM_NOT_ACTIVE(Status.Code.UNAVAILABLE),
    /** No credentials, or credentials the platform does not know. */
    UNAUTHENTICATED(Status.Code.UNAUTHENTICATED),
    /** The caller may not use this tenant (or this call needs the admin role); nothing was changed. */
    PERMISSION_DENIED(Status.Code.PERMISSION_DENIED),
    /** The buyer is over its request rate: back off and retry. */
    RATE_LIMITED(Status.Code.RESOURCE_EXHAUSTED),
    /** Too many requests for this item are in flight: back off and retry. */
    ITEM_BUSY(Status.Code.RESOURCE_EXHAUSTED),
    /** The lane's queue is full: back off and retry. */
    QUEUE_FULL(Status.Code.RESOURCE_EXHAUSTED),
    /** The store could not be reached or the outcome is unknown: retry with the same key. */
    STORE_UNAVAILABLE(Status.Code.UNAVAILABLE),
    /**
     * The shard's database has no synchronous standby connected, so no commit could be
     * acknowledged: writes pause until one connects; nothing was written; retry (same key).
     */
    STANDBY_MISSING(Status.Code.UNAVAILABLE),
    /** The tenant is being moved between cells: retry after the hint; nothing was changed. */
    TENANT_MOVING(Status.Code.UNAVAILABLE),
    /** The shard that owns the item is down or unreachable: retry (same key); never a SOLD_OUT. */
    SHARD_UNAVAILABLE(Status.Code.UNAVAILABLE),
    /** The topology (ZooKeeper) has been unreachable for longer than the staleness bound: retry later. */
    TOPOLOGY_UNAVAILABLE(Status.Code.UNAVAILABLE),
    /** The tenant or item is not placed here (stale routing): re-route with a fresh topology. */
    MOVED(Status.Code.ABORTED),
    /** The node is shutting down: retry (on another node). */
    SHUTTING_DOWN(Status.Code.UNAVAILABLE),
    /**
     * The item collapsed to its home region (metadata {@code home_region}): this region's shard
     * recorded the key as FORWARDED; the router re-sends the Reserve to the home region.
     */
    FORWARDED(Status.Code.ABORTED),
    /** This bucket-balancer is a standby: call the leader (its address is in ZooKeeper). */
    NOT_LEADER(Status.Code.UNAVAILABLE),
    /**
     * A region ran dry and no balancer leader answered a pull within the bounded wait: retry.
     * Never a SOLD_OUT while another region may still have stock.
     */
    BALANCER_UNAVAILABLE(Status.Code.UNAVAILABLE),
    /**
     * Internal (mover → shard): rows of a move would overwrite an item this shard serves or is
     * moving away (ACTIVE or FROZEN here); nothing was written.
     */
    TENANT_NOT_IMPORTABLE(Status.Code.FAILED_PRECONDITION),
    /**
     * Internal (mover → shard): a mover that took the move over has called this shard with a
     * higher fencing token ({@code mover_token}) than this call's; nothing was written. The caller
     * no longer owns the move: it stops acting on it, and never repeats the call.
     */
    MOVE_SUPERSEDED(Status.Code.FAILED_PRECONDITION),
    /** Admin: no cell of that name. */
    UNKNOWN_CELL(Status.Code.NOT_FOUND),
    /** Admin: the tenant has no items anywhere (nothing to move; {@code tenants assign} places it). */
    UNKNOWN_TENANT(Status.Code.NOT_FOUND),
    /** Admin: the tenant lives in that cell already. */
    TENANT_ALREADY_IN_CELL(Status.Code.FAILED_PRECONDITION),
    /** Admin: the target cell does not serve every region the tenant's items are sold in. */
    CELL_LACKS_REGIONS(Status.Code.FAILED_PRECONDITION),
    /** Admin: a move of this tenant is running (metadata {@code move_id}); nothing was changed. */
    MOVE_RUNNING(Status.Code.ALREADY_EXISTS),
    /** Admin: no move of that id. */
    UNKNOWN_MOVE(Status.Code.NOT_FOUND),
    /** Admin: the move has flipped (its commit point) and rolls forward; it cannot be aborted. */
    MOVE_PAST_COMMIT_POINT(Status.Code.FAILED_PRECONDITION),
    /** An invariant was found broken while applying a batch; the lane refused to go on. */
    INVARIANT_BROKEN(Status.Code.INTERNAL),
    /**
     * An unexpected failure (a bug). The client gets only an error id (metadata {@code error_id});
     * the detail is logged under it ({@link ErrorIds}).
     */
    INTERNAL_ERROR(Status.Code.INTERNAL),
    /** SetSeatsOnSale: seats to take off sale are held or sold (metadata {@code seats}, comma-separated); nothing changed. */
    SEATS_TAKEN(Status.Code.FAILED_PRECONDITION);

    /** The {@code ErrorInfo.domain} of every lastunit error. */
    public static final String DOMAIN = "lastunit.io";

    private final Status.Code code;

    Reason(Status.Code code) {
        this.code = code;
    }

    public Status.Code code() {
        return code;
    }
}
