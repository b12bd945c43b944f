package io.lastunit.router.reserve;

import io.grpc.Context;
import io.grpc.Deadline;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.router.route.ReserveBatcher;
import io.lastunit.router.route.ReserveFlow;
import io.lastunit.router.route.Router;
import io.lastunit.router.route.RouterObserver;
import io.lastunit.router.shed.BuyerRateLimiter;
import io.lastunit.router.shed.InFlightLimiter;
import io.lastunit.router.shed.ItemKey;
import io.lastunit.router.shed.RecentKeys;
import io.lastunit.router.shed.SoldOutCache;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The router's Reserve after validation and authorization, as one object. In order:
 *
 * <ol>
 *   <li><b>shed</b>, answered here without a call: a recent final SOLD_OUT of the
 *       {@code (tenant, item, region)} ({@link SoldOutCache}), unless this router sent the key on
 *       lately ({@link RecentKeys}: it may have a hold); then the buyer's rate
 *       ({@link BuyerRateLimiter}, RATE_LIMITED); then the item's calls in flight
 *       ({@link InFlightLimiter}, ITEM_BUSY). A cached SOLD_OUT costs no token of the buyer's rate;
 *   <li><b>flow</b> ({@link ReserveFlow}): a dry region's pulls through the balancer, a key's
 *       claim at the item's home ({@code KeyClaimer});
 *   <li><b>routing</b> ({@link Router#callFollowingForward}): tenant → cell → region → shard,
 *       retries, one FORWARDED followed home;
 *   <li><b>batching</b> ({@link ReserveBatcher}): the Reserve travels in a
 *       {@code ShardService.ReserveBatch} call.
 * </ol>
 *
 * <p>The sold-out rule, applied to every answer before it is returned: a final SOLD_OUT (no region
 * has stock) to a one-unit Reserve is cached; only that proves nothing is left, since a larger
 * request can be refused while a smaller one would still succeed. A RESERVED, or a failure (the
 * outcome is unknown), remembers the key so that its retry skips the cache and gets its hold back.
 * The key's probe ({@link SoldOutCache.Verdict#PROBE}) that ends any other way, refusals before it
 * was sent included, forgets the entry. A Release or Restock puts units back on sale:
 * {@link #stockReturned}.
 *
 * <p>Never blocks and never throws: a refusal is a failed future (a {@link Failure}), a shard's
 * failure passes through as the flow and the router give it. Thread-safe. Hazard: the in-flight
 * slot taken in step 1 is given back only when the answer completes, so every path after it must
 * complete the future.
 */
public final class ReservePipeline {
    /** The retry hint of RATE_LIMITED. */
    static final Duration RATE_LIMITED_RETRY = Duration.ofMillis(100);
    /** The retry hint of ITEM_BUSY. */
    static final Duration ITEM_BUSY_RETRY = Duration.ofMillis(50);
    private static final ReserveResponse SOLD_OUT =
            ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).build();

    /** The load shedding of step 1, each check with its own bound and clock. */
    public record Shedding(SoldOutCache soldOut, BuyerRateLimiter buyers, InFlightLimiter inFlight,
                           RecentKeys recentKeys) {
    }

    private final SoldOutCache soldOut;
    private final BuyerRateLimiter buyers;
    private final InFlightLimiter inFlight;
    private final RecentKeys recentKeys;
    private final ReserveFlow flow;
    private final Router router;
    private final ReserveBatcher batcher;
    /** Reserves answered by step 1 (sold-out cache, rate limit, in-flight cap). */
    private final AtomicLong shed = new AtomicLong();
    private volatile RouterObserver observer = RouterObserver.NONE;

    public ReservePipeline(Shedding shedding, ReserveFlow flow, Router router, ReserveBatcher batcher) {
        this.soldOut = shedding.soldOut();
        this.buyers = shedding.buyers();
        this.inFlight = shedding.inFlight();
        this.recentKeys = shedding.recentKeys();
        this.flow = flow;
        this.router = router;
        this.batcher = batcher;
    }

    /** Tells {@code o} of every answer and every shed from now on (the router's meters). */
    public void observe(RouterObserver o) {
        this.observer = java.util.Objects.requireNonNull(o, "observer");
    }

    /**
     * Answers {@code r} (valid, authorized, its region filled in) for the caller of {@code ctx},
     * under the caller's deadline or the router's default one.
     */
    public CompletableFuture<ReserveResponse> reserve(ReserveRequest r, Context ctx) {
        ItemKey key = SoldOutCache.key(r.getTenantId(), r.getItemId(), r.getRegion());
        // A seat request naming its seats is answered SEATS_TAKEN, never from the cache (docs/seats.md).
        SoldOutCache.Verdict cached = specificSeats(r) ? SoldOutCache.Verdict.ASK_SHARD : soldOut.check(key);
        if (cached == SoldOutCache.Verdict.SOLD_OUT
                && !recentKeys.seen(r.getTenantId(), r.getItemId(), r.getIdempotencyKey())) {
            shed.incrementAndGet();
            RouterObserver o = observer;
            if (o != RouterObserver.NONE) {
                String cell = router.cellOf(r.getTenantId());
                o.shed(cell, RouterObserver.Shed.SOLD_OUT_CACHE);
                o.reserveAnswered(cell, SOLD_OUT, null);
            }
            return CompletableFuture.completedFuture(SOLD_OUT);
        }
        boolean probe = cached == SoldOutCache.Verdict.PROBE;
        Failure refused = admit(r, key);
        if (refused != null) {
            if (probe) {
                soldOut.forget(key); // the probe was not sent: the next Reserve asks the shard
            }
            answered(r, null, refused);
            return CompletableFuture.failedFuture(refused);
        }
        Deadline deadline = router.deadline(ctx);
        // The bookkeeping runs before the answer is returned (the caller's next Reserve depends on it).
        return flow.reserve(r, deadline, (request, until) -> toShard(ctx, request, until))
                .whenComplete((answer, err) -> {
                    settle(r, key, probe, answer);
                    answered(r, answer == null ? null : answer.response(), err);
                })
                .thenApply(ReserveFlow.Answer::response);
    }

    /** Tells the observer of an answer to {@code r}, labelled with its tenant's cell. */
    private void answered(ReserveRequest r, ReserveResponse response, Throwable error) {
        RouterObserver o = observer;
        if (o != RouterObserver.NONE) {
            o.reserveAnswered(router.cellOf(r.getTenantId()), response, error);
        }
    }

    private void shedFor(ReserveRequest r, RouterObserver.Shed cause) {
        RouterObserver o = observer;
        if (o != RouterObserver.NONE) {
            o.shed(router.cellOf(r.getTenantId()), cause);
        }
    }

    /** Refuses {@code r} by the buyer's rate, then by the item's calls in flight; null takes a slot. */
    private Failure admit(ReserveRequest r, ItemKey key) {
        if (!buyers.tryAcquire(r.getTenantId(), r.getBuyerId())) {
            shed.incrementAndGet();
            shedFor(r, RouterObserver.Shed.RATE_LIMIT);
            return Failure.retryable(Reason.RATE_LIMITED, "buyer " + r.getBuyerId() + " of tenant "
                    + r.getTenantId() + " is over its request rate", RATE_LIMITED_RETRY);
        }
        if (!inFlight.tryAcquire(key)) {
            shed.incrementAndGet();
            shedFor(r, RouterObserver.Shed.IN_FLIGHT);
            return Failure.retryable(Reason.ITEM_BUSY, "too many requests in flight for item " + r.getItemId(),
                    ITEM_BUSY_RETRY);
        }
        return null;
    }

    /**
     * Routing and batching: the hop {@link ReserveFlow} sends a Reserve through, the first time
     * and after each pull, in the caller's context (its cancellation stops the retries).
     */
    private CompletableFuture<ReserveResponse> toShard(Context ctx, ReserveRequest request, Deadline deadline) {
        return router.callFollowingForward(ctx, deadline, request.getTenantId(), request.getItemId(),
                request.getRegion(), (region, channel, options) ->
                        batcher.reserve(channel, ReserveFlow.sentTo(request, region), options.getDeadline()));
    }

    /** The sold-out rule of the class comment, on {@code answer} (null: the Reserve failed). */
    private void settle(ReserveRequest r, ItemKey key, boolean probe, ReserveFlow.Answer answer) {
        inFlight.release(key);
        ReserveResponse response = answer == null ? null : answer.response();
        if (response == null || response.getOutcome() == ReserveOutcome.RESERVED) {
            recentKeys.remember(r.getTenantId(), r.getItemId(), r.getIdempotencyKey()); // placed, or unknown
        } else if (answer.soldOutFinal() && r.getQuantity() == 1 && anySeat(r)) {
            // Not a SOLD_OUT of a region that stayed dry while another may still have stock either:
            // ReserveFlow answers that one ITEM_BUSY.
            soldOut.markSoldOut(key);
            return;
        }
        if (probe) {
            soldOut.forget(key); // the probe did not prove the item still sold out
        }
    }

    /** A seat request naming its seats (SPECIFIC). */
    private static boolean specificSeats(ReserveRequest r) {
        return r.hasSeats() && r.getSeats().getMode() == io.lastunit.api.inventory.v1.SeatMode.SPECIFIC;
    }

    /**
     * Whether a SOLD_OUT of {@code r} (of quantity 1) says the whole item is out: a counted Reserve,
     * or a seat request for any one seat anywhere. One for a section, a category or a specific seat
     * does not.
     */
    private static boolean anySeat(ReserveRequest r) {
        if (!r.hasSeats()) {
            return true;
        }
        var s = r.getSeats();
        return s.getMode() != io.lastunit.api.inventory.v1.SeatMode.SPECIFIC && s.getSectionId().isEmpty()
                && s.getCategory().isEmpty();
    }

    /**
     * Units of {@code (tenant, item, region)} are on sale again (a Release or a Restock through
     * this router): its cached SOLD_OUT is forgotten at once.
     */
    public void stockReturned(String tenant, String item, String region) {
        soldOut.forget(SoldOutCache.key(tenant, item, region));
    }

    /** Reserves answered by the shedding itself (sold-out cache, rate limit, in-flight cap). */
    public long shedCount() {
        return shed.get();
    }
}
