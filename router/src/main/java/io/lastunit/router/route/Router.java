package io.lastunit.router.route;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.rpc.ErrorInfo;
import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.topology.Topology;
import java.io.File;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Sends one call to the shard that owns (tenant, item, region): tenant → cell (from the
 * tenant's placement) → the cell's shards in that region → rendezvous hash. Asynchronous end to
 * end: nothing waits on a thread.
 *
 * <p>Within the caller's deadline (or {@code defaultDeadline}): UNAVAILABLE is retried for
 * idempotent calls — the request is sent again unchanged, so a Reserve keeps its idempotency key
 * and can never take a second unit — with exponential backoff, at most {@code attemptsMax}
 * attempts; ABORTED (a shard saying MOVED: stale routing) re-routes with the current topology.
 * A shard that is not registered as live is answered UNAVAILABLE (SHARD_UNAVAILABLE) without a
 * call: its items pause, they never look sold out. The caller's cancellation reaches the shard.
 *
 * <p>ABORTED with reason FORWARDED (the item collapsed to its home region; the shard recorded the
 * key as FORWARDED) is followed only by {@link #callFollowingForward}: the call is sent once more,
 * at once, to the shard of the {@code home_region} the shard named, with the request's region set
 * to it; that attempt counts within {@code attemptsMax}. Every other call passes FORWARDED on.
 *
 * <p>TENANT_MOVING (the tenant's placement is MOVING here, or a shard answered it for a frozen or
 * not yet activated item) holds the call in the router for at most {@code movingHoldMax} in all
 * (never past its deadline; nothing was changed by the refused attempt): while this router's
 * topology shows the tenant MOVING the call is parked ({@link MoveHold}) until a snapshot shows it
 * placed again, then sent to the owner that snapshot names; otherwise (the router already sees the
 * flip, the target is activating) it is sent again after a short backoff. When the hold runs out,
 * the caller gets the TENANT_MOVING with its retry hint. {@code movingHoldMax} zero answers it at
 * once. Thread-safe.
 */
public final class Router {

    /** A call to make on a channel, with the options (deadline) to use. */
    @FunctionalInterface
    public interface ShardCall<R> extends BiFunction<ManagedChannel, CallOptions, ListenableFuture<R>> {
    }

    /** A call whose request names the region it is sent to, so that it can be sent to another region. */
    @FunctionalInterface
    public interface RegionalCall<R> {
        ListenableFuture<R> apply(String region, ManagedChannel channel, CallOptions options);
    }

    /** ErrorInfo metadata of FORWARDED: the region the item collapsed to. */
    public static final String HOME_REGION = "home_region";
    /** Largest reply the router accepts from a shard node or the balancer. */
    static final int REPLY_BYTES_MAX = 4 << 20;

    private final Supplier<Topology> topology;
    private final ShardChannels channels;
    private final ScheduledExecutorService scheduler;
    private final int attemptsMax;
    private final Duration backoffBase;
    private final Duration defaultDeadline;
    private final long movingHoldMaxNanos;
    private final MoveHold moveHold;
    private volatile RouterObserver observer = RouterObserver.NONE;

    /** As the full constructor, answering TENANT_MOVING at once (no hold). */
    public Router(Supplier<Topology> topology, ShardChannels channels, ScheduledExecutorService scheduler,
                  int attemptsMax, Duration backoffBase, Duration defaultDeadline) {
        this(topology, channels, scheduler, attemptsMax, backoffBase, defaultDeadline, Duration.ZERO);
    }

    /**
     * @param topology      the current topology ({@code TopologyCache::current}); may throw {@link Failure}
     * @param movingHoldMax the longest a call of a MOVING tenant is held in the router, in all (zero: not held);
     *                      the owner must feed {@link #onTopology} every new snapshot
     */
    public Router(Supplier<Topology> topology, ShardChannels channels, ScheduledExecutorService scheduler,
                  int attemptsMax, Duration backoffBase, Duration defaultDeadline, Duration movingHoldMax) {
        if (attemptsMax < 1) {
            throw new IllegalArgumentException("attemptsMax must be >= 1, got " + attemptsMax);
        }
        if (movingHoldMax.isNegative()) {
            throw new IllegalArgumentException("movingHoldMax must be >= 0, got " + movingHoldMax);
        }
        this.topology = topology;
        this.channels = channels;
        this.scheduler = scheduler;
        this.attemptsMax = attemptsMax;
        this.backoffBase = backoffBase;
        this.defaultDeadline = defaultDeadline;
        this.movingHoldMaxNanos = movingHoldMax.toNanos();
        this.moveHold = new MoveHold(PARKED_MAX, topology);
    }

    /** Most calls parked for moving tenants at once; past it TENANT_MOVING is answered at once. */
    static final int PARKED_MAX = 100_000;
    /** Longest pause between two sends of a held call whose tenant this router no longer sees MOVING. */
    static final long MOVING_RETRY_MAX_MS = 100;

    /** Tells {@code o} of every retry and re-route from now on (the router's meters). */
    public void observe(RouterObserver o) {
        this.observer = java.util.Objects.requireNonNull(o, "observer");
    }

    /** Every new topology snapshot: wakes the held calls of tenants no longer MOVING. */
    public void onTopology(Topology t) {
        moveHold.onTopology(t);
    }

    /** Calls held now for tenants that are moving. */
    public int heldForMoves() {
        return moveHold.parked();
    }

    /**
     * How the router dials shard nodes and the balancer leader ({@code tls}: plaintext, TLS trusting
     * {@code shard-trust-certificate}, or mutual TLS with the router's own certificate). Replies are handled without blocking
     * (completing futures, answering the caller), so they run on the transport thread that read
     * them: no hand-off per call. The router retries with its own bounds ({@code attempts-max}), so
     * gRPC's transparent retry is off: it would wrap every call in a buffering RetriableStream for
     * nothing.
     */
    public static ShardChannels.Dial dial(io.lastunit.common.tls.ClientTls tls) {
        return new ShardChannels.Dial(tls, REPLY_BYTES_MAX, true, false);
    }

    /**
     * The tenant's cell in the current topology, for labelling its answers
     * ({@link RouterObserver}); {@value #CELL_UNKNOWN} while the topology is unavailable. Never throws.
     */
    public String cellOf(String tenant) {
        try {
            return topology.get().cellOf(tenant);
        } catch (RuntimeException e) {
            return CELL_UNKNOWN;
        }
    }

    /** The cell label of an answer given while the router had no current topology. */
    public static final String CELL_UNKNOWN = "unknown";

    /** Which shard owns (tenant, item, region) now; fails with the reason a call would fail with. */
    public ShardInfo resolve(String tenant, String item, String region) {
        Topology t = topology.get();
        if (t.stateOf(tenant) == TenantState.MOVING) {
            throw Failure.retryable(Reason.TENANT_MOVING, "tenant " + tenant + " is moving between cells",
                    Duration.ofSeconds(1));
        }
        String cell = t.cellOf(tenant);
        ShardInfo shard = t.shardFor(tenant, item, region).orElseThrow(() -> {
            boolean served = t.cell(cell).map(c -> c.getRegionsList().contains(region)).orElse(false);
            return served
                    // The cell serves the region but its shards are not all known yet: transient.
                    ? Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE, "cell " + cell + " serves region '" + region
                            + "' but its shards are not all known to this router yet", Duration.ofMillis(500))
                    : Failure.invalid("region", "cell " + cell + " of tenant " + tenant + " does not serve region '"
                            + region + "'");
        });
        if (!t.isLive(shard.getShardId())) {
            throw Failure.retryable(Reason.SHARD_UNAVAILABLE, "shard " + shard.getShardId() + " (" + shard.getAddress()
                    + ") owning " + tenant + "/" + item + " in " + region + " is not live", Duration.ofMillis(500));
        }
        return shard;
    }

    /** The deadline of a call made in {@code ctx}: the caller's, or {@code defaultDeadline} from now. */
    public Deadline deadline(Context ctx) {
        return ctx.getDeadline() != null ? ctx.getDeadline()
                : Deadline.after(defaultDeadline.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** {@link #call(Context, Deadline, String, String, String, boolean, ShardCall)} in the current context. */
    public <R> CompletableFuture<R> call(String tenant, String item, String region, boolean idempotent,
                                         ShardCall<R> call) {
        Context ctx = Context.current();
        return call(ctx, deadline(ctx), tenant, item, region, idempotent, call);
    }

    /**
     * Sends {@code call} to the owner of (tenant, item, region) until {@code deadline}, for the
     * caller of {@code ctx} (its cancellation stops the retries). For a caller that makes several
     * calls, from callbacks too, under one deadline.
     */
    public <R> CompletableFuture<R> call(Context ctx, Deadline deadline, String tenant, String item, String region,
                                         boolean idempotent, ShardCall<R> call) {
        CompletableFuture<R> result = new CompletableFuture<>();
        attempt(new Call<>(ctx, deadline, tenant, item, idempotent, false, (r, ch, o) -> call.apply(ch, o), result),
                region, 1);
        return result;
    }

    /**
     * An idempotent call (a Reserve) that follows one FORWARDED answer to the home region: see the
     * class comment. {@code call} builds its request for the region it is given.
     */
    public <R> CompletableFuture<R> callFollowingForward(Context ctx, Deadline deadline, String tenant, String item,
                                                         String region, RegionalCall<R> call) {
        CompletableFuture<R> result = new CompletableFuture<>();
        attempt(new Call<>(ctx, deadline, tenant, item, true, true, call, result), region, 1);
        return result;
    }

    /** What stays the same across the attempts of one call. */
    private record Call<R>(Context ctx, Deadline deadline, String tenant, String item, boolean idempotent,
                           boolean followForward, RegionalCall<R> call, CompletableFuture<R> result,
                           long holdStartNanos) {
        Call(Context ctx, Deadline deadline, String tenant, String item, boolean idempotent, boolean followForward,
             RegionalCall<R> call, CompletableFuture<R> result) {
            this(ctx, deadline, tenant, item, idempotent, followForward, call, result, 0);
        }

        /** The same call, which may not follow another FORWARDED. */
        Call<R> forwarded() {
            return new Call<>(ctx, deadline, tenant, item, idempotent, false, call, result, holdStartNanos);
        }

        /** The same call, held for a move since {@code now} unless it was held before. */
        Call<R> held(long now) {
            return holdStartNanos != 0 ? this
                    : new Call<>(ctx, deadline, tenant, item, idempotent, followForward, call, result, now);
        }
    }

    private <R> void attempt(Call<R> c, String region, int n) {
        if (c.ctx.isCancelled()) {
            c.result.completeExceptionally(Status.CANCELLED.withDescription("caller cancelled").asRuntimeException());
            return;
        }
        ShardInfo shard;
        try {
            shard = resolve(c.tenant, c.item, region);
        } catch (Failure f) {
            if ((f.reason() == Reason.SHARD_UNAVAILABLE || f.reason() == Reason.TOPOLOGY_UNAVAILABLE) && c.idempotent
                    && retry(c, n, () -> attempt(c, region, n + 1))) {
                observer.retried();
                return;
            }
            if (f.reason() == Reason.TENANT_MOVING && holdForMove(c, region, n, f)) {
                observer.rerouted(RouterObserver.Reroute.TENANT_MOVING);
                return;
            }
            c.result.completeExceptionally(f);
            return;
        }
        ListenableFuture<R> f;
        Context previous = c.ctx.attach();
        try {
            f = c.call.apply(region, channels.get(shard.getAddress()), CallOptions.DEFAULT.withDeadline(c.deadline));
        } catch (RuntimeException e) {
            // e.g. the router is closing its channels: the caller gets an answer, never silence.
            c.result.completeExceptionally(Failure.retryable(Reason.SHUTTING_DOWN, "router could not call shard "
                    + shard.getShardId() + ": " + e.getMessage(), Duration.ofMillis(500)));
            return;
        } finally {
            c.ctx.detach(previous);
        }
        Futures.addCallback(f, new FutureCallback<>() {
            @Override
            public void onSuccess(R value) {
                c.result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                Status.Code code = Status.fromThrowable(t).getCode();
                if (code == Status.Code.ABORTED && isReason(t, Reason.FORWARDED)) {
                    String home = forwardTarget(c, t, region, n);
                    if (home != null) {
                        // A redirect, not a failure: no backoff.
                        observer.rerouted(RouterObserver.Reroute.FORWARDED);
                        attempt(c.forwarded(), home, n + 1);
                    } else {
                        c.result.completeExceptionally(t);
                    }
                    return;
                }
                if (code == Status.Code.UNAVAILABLE && isReason(t, Reason.TENANT_MOVING)
                        && holdForMove(c, region, n, t)) {
                    observer.rerouted(RouterObserver.Reroute.TENANT_MOVING);
                    return;
                }
                boolean moved = code == Status.Code.ABORTED;
                boolean down = code == Status.Code.UNAVAILABLE
                        && !isReason(t, Reason.TENANT_MOVING) && !isReason(t, Reason.ITEM_NOT_ACTIVE);
                if ((moved || (down && c.idempotent)) && retry(c, n, () -> attempt(c, region, n + 1))) {
                    if (moved) {
                        observer.rerouted(RouterObserver.Reroute.MOVED);
                    } else {
                        observer.retried();
                    }
                    return;
                }
                if (down && GrpcErrors.errorInfo(t).isEmpty()) {
                    // No answer from the shard itself (connection refused, reset): say which shard.
                    // A shard's own UNAVAILABLE (with its reason) is passed on unchanged.
                    c.result.completeExceptionally(Failure.retryable(Reason.SHARD_UNAVAILABLE, "shard "
                            + shard.getShardId() + " did not answer after " + n + " attempt(s): "
                            + Status.fromThrowable(t), Duration.ofMillis(500)));
                    return;
                }
                c.result.completeExceptionally(t);
            }
        }, MoreExecutors.directExecutor());
    }

    /** The home region to forward to, or null when this FORWARDED is passed on to the caller. */
    private String forwardTarget(Call<?> c, Throwable t, String region, int n) {
        if (!c.followForward || n >= attemptsMax || c.ctx.isCancelled()) {
            return null;
        }
        String home = GrpcErrors.errorInfo(t).map(ErrorInfo::getMetadataMap)
                .map(m -> m.get(HOME_REGION)).orElse(null);
        // A FORWARDED that names no region, or the region that answered it, would loop.
        return home == null || home.isEmpty() || home.equals(region) ? null : home;
    }

    private static boolean isReason(Throwable t, Reason r) {
        return GrpcErrors.errorInfo(t).map(i -> i.getReason().equals(r.name())).orElse(false);
    }

    /**
     * Holds a call refused with TENANT_MOVING ({@code refusal}) and sends it again later: parked
     * while this router sees the tenant MOVING, else after a short backoff. False (the caller answers
     * the refusal) when holding is off, the hold ran out, the deadline is too near, or too many calls
     * are parked. The attempt count stays as it is: the hold's own bound limits the resends.
     */
    private <R> boolean holdForMove(Call<R> c, String region, int n, Throwable refusal) {
        if (movingHoldMaxNanos == 0 || c.ctx.isCancelled()) {
            return false;
        }
        long now = System.nanoTime();
        Call<R> held = c.held(now);
        long leftNanos = Math.min(held.holdStartNanos + movingHoldMaxNanos - now,
                c.deadline.timeRemaining(TimeUnit.NANOSECONDS) - TimeUnit.MILLISECONDS.toNanos(MOVING_RETRY_MAX_MS));
        if (leftNanos <= 0) {
            return false;
        }
        boolean movingHere;
        try {
            movingHere = topology.get().stateOf(c.tenant) == TenantState.MOVING;
        } catch (RuntimeException e) {
            movingHere = false;
        }
        if (!movingHere) {
            long delayMs = Math.min(MOVING_RETRY_MAX_MS, backoffBase.toMillis() << Math.min(n - 1, 6));
            if (TimeUnit.MILLISECONDS.toNanos(delayMs) >= leftNanos) {
                return false;
            }
            scheduler.schedule(c.ctx.wrap(() -> attempt(held, region, n)), delayMs, TimeUnit.MILLISECONDS);
            return true;
        }
        // Woken on the topology cache's event thread: the resend goes to the scheduler, so a flip that
        // wakes thousands of calls never holds up the cache's other listeners.
        Runnable resend = c.ctx.wrap(() -> attempt(held, region, n));
        MoveHold.Parked p = new MoveHold.Parked(() -> scheduler.execute(resend));
        if (!moveHold.park(c.tenant, p)) {
            return false;
        }
        scheduler.schedule(() -> {
            if (p.claim()) {
                moveHold.forget(c.tenant, p);
                c.result.completeExceptionally(refusal);
            }
        }, leftNanos, TimeUnit.NANOSECONDS);
        return true;
    }

    private boolean retry(Call<?> c, int n, Runnable again) {
        if (n >= attemptsMax) {
            return false;
        }
        long delayMs = backoffBase.toMillis() << Math.min(n - 1, 6);
        if (c.deadline.timeRemaining(TimeUnit.MILLISECONDS) <= delayMs) {
            return false;
        }
        scheduler.schedule(c.ctx.wrap(again), delayMs, TimeUnit.MILLISECONDS);
        return true;
    }

    /** For tests and metrics. */
    public Map<String, Integer> describe() {
        return Map.of("channels", channels.size());
    }
}
