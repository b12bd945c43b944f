package io.lastunit.router.route;

import io.grpc.Context;
import io.grpc.Deadline;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReleaseResponse;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.shard.v1.ClaimKeyRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's side of key claims ({@link ReserveFlow.KeyClaims}): a ClaimKey to the shard that
 * owns the item in its home region, and the Release of a hold whose key another use claimed
 * first. Both go through {@link Router}, so they are routed, retried and re-routed as any call
 * of the item, and both run in the root context: a caller that went away neither cancels a
 * claim half made nor keeps a hold from going back.
 *
 * <p>Why the give-back is safe: a hold's id reaches a client only in a RESERVED, and a RESERVED
 * of such a hold goes out only after its claim succeeded; a claim never changes once recorded.
 * So a hold whose claim lost was never told to anyone, and nobody can confirm it. If the
 * Release fails, the hold expires at its TTL. Thread-safe.
 */
public final class KeyClaimer implements ReserveFlow.KeyClaims {
    private static final Logger log = LoggerFactory.getLogger(KeyClaimer.class);
    /** How long a give-back may take; it runs after the caller has its answer. */
    static final Duration GIVE_BACK_DEADLINE = Duration.ofSeconds(5);

    private final Router router;
    private final AtomicLong claims = new AtomicLong();
    private final AtomicLong givenBack = new AtomicLong();

    public KeyClaimer(Router router) {
        this.router = router;
    }

    @Override
    public CompletableFuture<Void> claim(ReserveRequest placed, String homeRegion, Deadline deadline) {
        claims.incrementAndGet();
        ClaimKeyRequest request = ClaimKeyRequest.newBuilder().setRequest(placed).setHomeRegion(homeRegion).build();
        return router.call(Context.ROOT, deadline, placed.getTenantId(), placed.getItemId(), homeRegion, true,
                (ch, o) -> ShardServiceGrpc.newFutureStub(ch).withDeadline(o.getDeadline()).claimKey(request))
                .thenApply(claimed -> null);
    }

    @Override
    public void giveBack(String holdId) {
        givenBack.incrementAndGet();
        HoldId id;
        try {
            id = HoldId.decode(holdId, "hold_id");
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("hold", holdId).log("cannot give back the hold: {}", e.toString());
            return;
        }
        ReleaseRequest release = ReleaseRequest.newBuilder().setHoldId(holdId).build();
        CompletableFuture<ReleaseResponse> f = router.call(Context.ROOT,
                Deadline.after(GIVE_BACK_DEADLINE.toMillis(), TimeUnit.MILLISECONDS), id.tenantId(), id.itemId(),
                id.region(), true, (ch, o) -> InventoryServiceGrpc.newFutureStub(ch).withDeadline(o.getDeadline())
                        .release(release));
        f.whenComplete((released, err) -> {
            if (err == null) {
                return;
            }
            Throwable t = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
                    ? err.getCause() : err;
            if (ReserveFlow.hasReason(t, Reason.HOLD_NOT_HELD)) {
                log.debug("hold {} lost its key's claim and had ended already: {}", holdId, ReserveFlow.why(t));
            } else {
                log.atInfo().addKeyValue("hold", holdId).log("the hold lost its key's claim and could not be given"
                        + " back ({}); it expires at its TTL", ReserveFlow.why(t));
            }
        });
    }

    /** ClaimKey calls made, and holds given back because another use had claimed their key. */
    public long[] stats() {
        return new long[] {claims.get(), givenBack.get()};
    }
}
