package io.lastunit.router.route;

import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * A Reserve as the router answers it, resolving what one regional shard cannot (DESIGN §6): a
 * SOLD_OUT with {@code region_dry} set means only that region's shard is out, so the router asks
 * the balancer leader to pull stock into the region ({@link BalancerClient}, bounded wait) and
 * sends the same Reserve — same idempotency key, so never a second unit — again:
 *
 * <ul>
 *   <li>moved &gt; 0: send again; while it still answers region_dry, pull again, at most
 *       {@code pullAttemptsMax} pulls in all;
 *   <li>collapsed: send again with region = the pull's home_region (the hold then lives there);
 *       if the dry region was home itself, SOLD_OUT, final;
 *   <li>moved = 0, not collapsed: no region has stock: SOLD_OUT, final;
 *   <li>no leader, a failed or late pull: UNAVAILABLE, reason BALANCER_UNAVAILABLE, with a retry
 *       hint — never SOLD_OUT while another region may still have stock.
 * </ul>
 *
 * If every one of the {@code pullAttemptsMax} pulls moved stock and other buyers took it first,
 * the answer is RESOURCE_EXHAUSTED / ITEM_BUSY with a retry hint: another region may still have
 * stock, so it is not a SOLD_OUT.
 * {@code region_dry} never reaches the client. Shard failures pass through unchanged.
 *
 * <p>A RESERVED from a shard that is not the home of an item sold in several regions carries
 * {@code key_home_region}: the key's use is then claimed at the home region's shard
 * ({@link KeyClaims}) before the answer goes out, so that one key names one hold of the item in
 * every region. The claim is the key's: RESERVED. Another use claimed it first: the hold just
 * placed (or found) is given back and the answer is that use's IDEMPOTENCY_KEY_REUSED. The claim
 * could not be made: its failure (retryable; the retry finds the hold and claims again).
 * {@code key_home_region} never reaches the client either.
 *
 * <p>Stateless between calls, thread-safe; every step runs on the thread that completed the one
 * before it and never blocks. Bounds: {@code 1 + pullAttemptsMax} shard calls and
 * {@code pullAttemptsMax} pulls per Reserve, each pull waiting at most {@code pullWait} and never
 * past the caller's deadline.
 */
public final class ReserveFlow {

    /** Sends a Reserve to the shard of the region the request names, until {@code deadline}. */
    @FunctionalInterface
    public interface Shard {
        CompletableFuture<ReserveResponse> reserve(ReserveRequest request, Deadline deadline);
    }

    /**
     * Asks the balancer leader to pull stock into a region, until {@code deadline}. A failure that
     * is not a {@link Failure} of reason BALANCER_UNAVAILABLE is turned into one.
     */
    @FunctionalInterface
    public interface Balancer {
        CompletableFuture<PullResponse> pull(PullRequest request, Deadline deadline);
    }

    /**
     * Claims Reserve keys of items sold in several regions at the item's home region
     * (ShardService.ClaimKey), and gives back a hold whose key another use claimed first.
     */
    public interface KeyClaims {
        /**
         * Claims {@code placed}'s key at the shard of {@code homeRegion}, until {@code deadline}.
         * Completes normally when the key is this request's; fails with the shard's status
         * otherwise (ALREADY_EXISTS / IDEMPOTENCY_KEY_REUSED: another use has it).
         */
        CompletableFuture<Void> claim(ReserveRequest placed, String homeRegion, Deadline deadline);

        /** Gives back a hold whose key another use claimed first; best effort, it expires otherwise. */
        void giveBack(String holdId);
    }

    /** For items sold in one region only, or a router of a one-region platform: no claim is ever asked for. */
    public static final KeyClaims NO_CLAIMS = new KeyClaims() {
        @Override
        public CompletableFuture<Void> claim(ReserveRequest placed, String homeRegion, Deadline deadline) {
            return CompletableFuture.failedFuture(Failure.retryable(Reason.SHARD_UNAVAILABLE, "this router claims no"
                    + " keys, but shard of " + placed.getRegion() + " asked to claim " + placed.getIdempotencyKey()
                    + " at " + homeRegion, RETRY_AFTER));
        }

        @Override
        public void giveBack(String holdId) {
        }
    };

    /**
     * The reply for the client ({@code region_dry} cleared) and whether a SOLD_OUT in it is final:
     * no region had stock, so it may be cached.
     */
    public record Answer(ReserveResponse response, boolean soldOutFinal) {
    }

    /** The retry hint of a BALANCER_UNAVAILABLE that did not come with one. */
    static final Duration RETRY_AFTER = Duration.ofMillis(500);

    private final Balancer balancer;
    private final KeyClaims claims;
    private final Duration pullWait;
    private final int pullAttemptsMax;
    private volatile RouterObserver observer = RouterObserver.NONE;

    /** A flow that never claims keys ({@link #NO_CLAIMS}). */
    public ReserveFlow(Balancer balancer, Duration pullWait, int pullAttemptsMax) {
        this(balancer, NO_CLAIMS, pullWait, pullAttemptsMax);
    }

    /**
     * @param pullWait        the longest one pull may take (capped by the caller's deadline)
     * @param pullAttemptsMax pulls per Reserve, at least 1
     */
    public ReserveFlow(Balancer balancer, KeyClaims claims, Duration pullWait, int pullAttemptsMax) {
        if (pullWait == null || pullWait.isNegative() || pullWait.isZero()) {
            throw new IllegalArgumentException("pullWait must be positive, got " + pullWait);
        }
        if (pullAttemptsMax < 1) {
            throw new IllegalArgumentException("pullAttemptsMax must be >= 1, got " + pullAttemptsMax);
        }
        this.balancer = balancer;
        this.claims = claims;
        this.pullWait = pullWait;
        this.pullAttemptsMax = pullAttemptsMax;
    }

    /** Tells {@code o} how every pull ends from now on (the router's meters). */
    public void observe(RouterObserver o) {
        this.observer = java.util.Objects.requireNonNull(o, "observer");
    }

    /** Sends {@code r} through {@code shard}, pulling stock as the class comment says, until {@code deadline}. */
    public CompletableFuture<Answer> reserve(ReserveRequest r, Deadline deadline, Shard shard) {
        CompletableFuture<Answer> result = new CompletableFuture<>();
        send(r, deadline, shard, 0, result);
        return result;
    }

    private void send(ReserveRequest r, Deadline deadline, Shard shard, int pulls, CompletableFuture<Answer> result) {
        CompletableFuture<ReserveResponse> f;
        try {
            f = shard.reserve(r, deadline);
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
            return;
        }
        f.whenComplete((resp, err) -> {
            if (err != null) {
                result.completeExceptionally(unwrap(err));
            } else if (resp.getOutcome() == ReserveOutcome.RESERVED && !resp.getKeyHomeRegion().isEmpty()) {
                claim(r, resp, deadline, result);
            } else if (resp.getOutcome() != ReserveOutcome.SOLD_OUT || !resp.getRegionDry()) {
                result.complete(new Answer(cleared(resp), resp.getOutcome() == ReserveOutcome.SOLD_OUT));
            } else if (pulls >= pullAttemptsMax) {
                // Every pull moved stock in and other buyers took it first. Another region may still
                // have stock, so this is not a SOLD_OUT: the caller retries (same key) shortly.
                result.completeExceptionally(Failure.retryable(Reason.ITEM_BUSY, "region " + r.getRegion()
                        + " of " + r.getTenantId() + "/" + r.getItemId() + " stayed dry after " + pulls
                        + " pulls (other buyers took the stock moved in); retry with the same key", RETRY_AFTER));
            } else {
                pull(r, deadline, shard, pulls, result);
            }
        });
    }

    /** Claims the key of {@code placed}'s RESERVED {@code resp} at the item's home, then answers. */
    private void claim(ReserveRequest placed, ReserveResponse resp, Deadline deadline,
                       CompletableFuture<Answer> result) {
        CompletableFuture<Void> f;
        try {
            f = claims.claim(placed, resp.getKeyHomeRegion(), deadline);
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
            return;
        }
        f.whenComplete((ok, err) -> {
            if (err == null) {
                result.complete(new Answer(cleared(resp), false));
                return;
            }
            Throwable t = unwrap(err);
            try {
                if (hasReason(t, Reason.IDEMPOTENCY_KEY_REUSED)) {
                    claims.giveBack(resp.getHold().getHoldId()); // nobody was told of this hold: it goes back
                }
            } finally {
                result.completeExceptionally(t);
            }
        });
    }

    private void pull(ReserveRequest r, Deadline deadline, Shard shard, int pulls, CompletableFuture<Answer> result) {
        PullRequest p = PullRequest.newBuilder().setTenantId(r.getTenantId()).setItemId(r.getItemId())
                .setRegion(r.getRegion()).setQuantity(r.getQuantity()).build();
        CompletableFuture<PullResponse> f;
        try {
            f = balancer.pull(p, pullDeadline(deadline));
        } catch (RuntimeException e) {
            observer.pulled(RouterObserver.Pull.FAILED);
            result.completeExceptionally(unavailable(p, e));
            return;
        }
        f.whenComplete((moved, err) -> {
            observer.pulled(err != null ? RouterObserver.Pull.FAILED
                    : moved.getCollapsed() ? RouterObserver.Pull.COLLAPSED
                    : moved.getMoved() > 0 ? RouterObserver.Pull.MOVED : RouterObserver.Pull.NOTHING);
            if (err != null) {
                result.completeExceptionally(unavailable(p, unwrap(err)));
            } else if (moved.getCollapsed()) {
                if (moved.getHomeRegion().isEmpty()) {
                    result.completeExceptionally(Failure.retryable(Reason.BALANCER_UNAVAILABLE, "balancer answered "
                            + describe(p) + " with collapsed=true but no home_region", RETRY_AFTER));
                } else if (moved.getHomeRegion().equals(r.getRegion())) {
                    // Collapsed home and home itself is out: a final SOLD_OUT.
                    result.complete(new Answer(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT)
                            .build(), true));
                } else {
                    send(sentTo(r, moved.getHomeRegion()), deadline, shard, pulls + 1, result);
                }
            } else if (moved.getMoved() > 0) {
                send(r, deadline, shard, pulls + 1, result);
            } else {
                result.complete(new Answer(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).build(),
                        true));
            }
        });
    }

    /**
     * {@code r} as sent to {@code region}: with that region, and, when it differs from the region
     * the client named, {@code origin_region} set to the one the client named, so that the shard
     * there compares the key's use with the request the client sent.
     */
    public static ReserveRequest sentTo(ReserveRequest r, String region) {
        if (r.getRegion().equals(region)) {
            return r;
        }
        ReserveRequest.Builder b = r.toBuilder().setRegion(region);
        if (r.getOriginRegion().isEmpty()) {
            b.setOriginRegion(r.getRegion());
        }
        return b.build();
    }

    /** {@code pullWait} from now, or the caller's deadline when that comes first (on the caller's ticker). */
    Deadline pullDeadline(Deadline deadline) {
        long remaining = deadline.timeRemaining(TimeUnit.NANOSECONDS);
        long wait = pullWait.toNanos();
        return remaining <= wait ? deadline : deadline.offset(wait - remaining, TimeUnit.NANOSECONDS);
    }

    private static ReserveResponse cleared(ReserveResponse r) {
        return r.getRegionDry() || !r.getKeyHomeRegion().isEmpty()
                ? r.toBuilder().clearRegionDry().clearKeyHomeRegion().build() : r;
    }

    private static Failure unavailable(PullRequest p, Throwable t) {
        if (t instanceof Failure f && f.reason() == Reason.BALANCER_UNAVAILABLE && f.retryAfter() != null) {
            return f;
        }
        long hintMs = GrpcErrors.retryAfterMs(t);
        return Failure.retryable(Reason.BALANCER_UNAVAILABLE, "no balancer answer to " + describe(p) + ": " + why(t),
                hintMs > 0 ? Duration.ofMillis(hintMs) : RETRY_AFTER);
    }

    /** A failure in one line: its reason or status code and its message (never a stack trace). */
    static String why(Throwable t) {
        if (t instanceof Failure f) {
            return f.reason() + ": " + f.getMessage();
        }
        if (t instanceof StatusRuntimeException || t instanceof StatusException) {
            Status s = Status.fromThrowable(t);
            return s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription());
        }
        return String.valueOf(t);
    }

    static String describe(PullRequest p) {
        return "Pull(" + p.getTenantId() + "/" + p.getItemId() + " into " + p.getRegion() + ", quantity="
                + p.getQuantity() + ")";
    }

    /** Whether {@code t} is a {@link Failure} or a status with the ErrorInfo reason {@code r}. */
    static boolean hasReason(Throwable t, Reason r) {
        if (t instanceof Failure f) {
            return f.reason() == r;
        }
        return GrpcErrors.errorInfo(t).map(i -> i.getReason().equals(r.name())).orElse(false);
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }
}
