package io.lastunit.router.route;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
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
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

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
 * Thread-safe.
 */
public final class Router {

    /** A call to make on a channel, with the options (deadline) to use. */
    @FunctionalInterface
    public interface ShardCall<R> extends BiFunction<ManagedChannel, CallOptions, ListenableFuture<R>> {
    }

    private final TopologyCache topology;
    private final ShardChannels channels;
    private final ScheduledExecutorService scheduler;
    private final int attemptsMax;
    private final Duration backoffBase;
    private final Duration defaultDeadline;

    public Router(TopologyCache topology, ShardChannels channels, ScheduledExecutorService scheduler,
                  int attemptsMax, Duration backoffBase, Duration defaultDeadline) {
        if (attemptsMax < 1) {
            throw new IllegalArgumentException("attemptsMax must be >= 1, got " + attemptsMax);
        }
        this.topology = topology;
        this.channels = channels;
        this.scheduler = scheduler;
        this.attemptsMax = attemptsMax;
        this.backoffBase = backoffBase;
        this.defaultDeadline = defaultDeadline;
    }

    /** Which shard owns (tenant, item, region) now; fails with the reason a call would fail with. */
    public ShardInfo resolve(String tenant, String item, String region) {
        Topology t = topology.current();
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

    public <R> CompletableFuture<R> call(String tenant, String item, String region, boolean idempotent,
                                         ShardCall<R> call) {
        Context ctx = Context.current();
        Deadline deadline = ctx.getDeadline() != null ? ctx.getDeadline()
                : Deadline.after(defaultDeadline.toMillis(), TimeUnit.MILLISECONDS);
        CompletableFuture<R> result = new CompletableFuture<>();
        attempt(ctx, deadline, tenant, item, region, idempotent, call, 1, result);
        return result;
    }

    private <R> void attempt(Context ctx, Deadline deadline, String tenant, String item, String region,
                             boolean idempotent, ShardCall<R> call, int n, CompletableFuture<R> result) {
        if (ctx.isCancelled()) {
            result.completeExceptionally(Status.CANCELLED.withDescription("caller cancelled").asRuntimeException());
            return;
        }
        ShardInfo shard;
        try {
            shard = resolve(tenant, item, region);
        } catch (Failure f) {
            if ((f.reason() == Reason.SHARD_UNAVAILABLE || f.reason() == Reason.TOPOLOGY_UNAVAILABLE) && idempotent
                    && retry(ctx, deadline, n,
                    () -> attempt(ctx, deadline, tenant, item, region, idempotent, call, n + 1, result))) {
                return;
            }
            result.completeExceptionally(f);
            return;
        }
        ListenableFuture<R> f;
        Context previous = ctx.attach();
        try {
            f = call.apply(channels.get(shard.getAddress()), CallOptions.DEFAULT.withDeadline(deadline));
        } catch (RuntimeException e) {
            // e.g. the router is closing its channels: the caller gets an answer, never silence.
            result.completeExceptionally(Failure.retryable(Reason.SHUTTING_DOWN, "router could not call shard "
                    + shard.getShardId() + ": " + e.getMessage(), Duration.ofMillis(500)));
            return;
        } finally {
            ctx.detach(previous);
        }
        Futures.addCallback(f, new FutureCallback<>() {
            @Override
            public void onSuccess(R value) {
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                Status.Code code = Status.fromThrowable(t).getCode();
                boolean moved = code == Status.Code.ABORTED;
                boolean down = code == Status.Code.UNAVAILABLE
                        && !isReason(t, Reason.TENANT_MOVING) && !isReason(t, Reason.ITEM_NOT_ACTIVE);
                if ((moved || (down && idempotent)) && retry(ctx, deadline, n,
                        () -> attempt(ctx, deadline, tenant, item, region, idempotent, call, n + 1, result))) {
                    return;
                }
                if (down && GrpcErrors.errorInfo(t).isEmpty()) {
                    // No answer from the shard itself (connection refused, reset): say which shard.
                    // A shard's own UNAVAILABLE (with its reason) is passed on unchanged.
                    result.completeExceptionally(Failure.retryable(Reason.SHARD_UNAVAILABLE, "shard "
                            + shard.getShardId() + " did not answer after " + n + " attempt(s): "
                            + Status.fromThrowable(t), Duration.ofMillis(500)));
                    return;
                }
                result.completeExceptionally(t);
            }
        }, MoreExecutors.directExecutor());
    }

    private static boolean isReason(Throwable t, Reason r) {
        return GrpcErrors.errorInfo(t).map(i -> i.getReason().equals(r.name())).orElse(false);
    }

    private boolean retry(Context ctx, Deadline deadline, int n, Runnable again) {
        if (n >= attemptsMax) {
            return false;
        }
        long delayMs = backoffBase.toMillis() << Math.min(n - 1, 6);
        if (deadline.timeRemaining(TimeUnit.MILLISECONDS) <= delayMs) {
            return false;
        }
        scheduler.schedule(ctx.wrap(again), delayMs, TimeUnit.MILLISECONDS);
        return true;
    }

    /** For tests and metrics. */
    public Map<String, Integer> describe() {
        return Map.of("channels", channels.size());
    }
}
