package io.lastunit.shard.fence;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.shard.decide.ItemState;
import java.time.Duration;
import java.util.Map;

/**
 * What a call that would change an item fenced by a tenant move is answered
 * ({@link ItemState#moving}), wherever it is refused (a lane's batch, CreateItem, Restock, a
 * transfer step). FROZEN or IMPORTING: {@code UNAVAILABLE} / {@code TENANT_MOVING} with a
 * {@code RetryInfo}, because the move either rolls back (the item sells here again) or flips (it
 * sells on the target, where the router sends the retry). MOVED: {@code ABORTED} / {@code MOVED}
 * with the tenant's epoch in this node's view, so a router with a stale topology routes again.
 * Nothing was changed in either case. Immutable and thread-safe.
 */
public final class Fence {
    private final TenantEpochs epochs;
    private final Duration retryAfter;

    public Fence(TenantEpochs epochs, Duration retryAfter) {
        this.epochs = epochs;
        this.retryAfter = retryAfter;
    }

    /** The refusal of a call on {@code tenant/item}, which is in {@code state} (a moving one). */
    public Failure refusal(ItemState state, String tenant, String item) {
        String what = "item " + tenant + "/" + item;
        return switch (state) {
            case FROZEN, IMPORTING -> Failure.retryable(Reason.TENANT_MOVING, what + " is " + state
                    + ": its tenant is being moved between cells; retry after the hint with the same key", retryAfter);
            case MOVED -> moved(tenant, what);
            case ACTIVE, PAUSED -> throw new IllegalArgumentException(what + " is " + state + ", not fenced by a move");
        };
    }

    private Failure moved(String tenant, String what) {
        int epoch;
        try {
            epoch = epochs.epochOf(tenant);
        } catch (Failure unavailable) {
            return unavailable; // this node cannot tell where the tenant went: the router retries
        }
        return Failure.of(Reason.MOVED, what + " moved to another cell (tenant epoch " + epoch
                + " here); route it again", Map.of("epoch", String.valueOf(epoch)));
    }
}
