package io.lastunit.balancer.transfer;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.shard.v1.CompleteTransferRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.api.shard.v1.TransferState;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.balancer.BalancerMetrics;
import io.lastunit.balancer.transfer.TransferResult.Stage;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.invariant.ItemKey;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the two-step transfer of DESIGN §7 over the internal shard API: a new transfer id,
 * step 1 {@code TransferOut} at the source (takes up to the asked units and records OUT PENDING),
 * step 2 {@code TransferIn} at the target with exactly the quantity step 1 recorded (records IN
 * DONE and credits once), step 3 {@code CompleteTransfer} at the source. Every step is idempotent
 * by transfer id, so each is retried on UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED, at
 * most {@code stepAttemptsMax} times with doubling backoff, and a step whose reply was lost is
 * simply repeated.
 *
 * <p>A transfer that stops short (a step's attempts ran out, the fence closed, the process died)
 * is left PENDING at the source, its units counted in flight by the invariant check; whoever leads
 * next completes it with {@link #resume}. Units are never lost or created: the target credits only
 * the quantity the source recorded, and only once.
 *
 * <p>One structured log line per transfer ({@code transfer transfer_id=… tenant=… item=… from=…
 * to=… qty=… reason=… ms=… outcome=…}); {@link BalancerMetrics} counts the ones driven to DONE.
 *
 * <p>Thread-safe (no state of its own); blocking: run it off gRPC transport threads.
 */
public final class TransferExecutor {
    private static final Logger log = LoggerFactory.getLogger(TransferExecutor.class);
    /** Longest wait between two attempts of a step. */
    static final Duration BACKOFF_MAX = Duration.ofSeconds(1);

    private final ShardChannels channels;
    private final TransferFaults faults;
    private final BalancerMetrics metrics;
    private final int stepAttemptsMax;
    private final Duration stepTimeout;
    private final Duration backoffBase;

    /**
     * @param stepAttemptsMax attempts per step, first included, 1..20
     * @param stepTimeout     deadline of each attempt's call
     * @param backoffBase     wait before the second attempt; doubles, at most {@link #BACKOFF_MAX}
     */
    public TransferExecutor(ShardChannels channels, TransferFaults faults, BalancerMetrics metrics, int stepAttemptsMax,
            Duration stepTimeout, Duration backoffBase) {
        if (stepAttemptsMax < 1 || stepAttemptsMax > 20) {
            throw new IllegalArgumentException("stepAttemptsMax=" + stepAttemptsMax + " is outside [1, 20]");
        }
        this.channels = channels;
        this.faults = faults;
        this.metrics = metrics;
        this.stepAttemptsMax = stepAttemptsMax;
        this.stepTimeout = stepTimeout;
        this.backoffBase = backoffBase;
    }

    /**
     * Makes one transfer, steps 1 to 3, under a new transfer id.
     *
     * @throws Failure NOT_LEADER when the fence closed before a step (what committed stays, PENDING)
     */
    public TransferResult move(Fence fence, MoveOrder order) {
        metrics.transferBegun();
        try {
            return moveNow(fence, order);
        } finally {
            metrics.transferFinished();
        }
    }

    private TransferResult moveNow(Fence fence, MoveOrder order) {
        String id = UUID.randomUUID().toString();
        long started = System.nanoTime();
        ItemKey item = order.item();
        TransferOutRequest out = TransferOutRequest.newBuilder().setTransferId(id).setTenantId(item.tenant())
                .setItemId(item.item()).setPeerShardId(order.to().getShardId()).setMaxQuantity(order.maxQuantity())
                .setMinQuantity(order.minQuantity()).setCollapse(order.collapse()).build();
        Transfer taken;
        try {
            taken = step(fence, TransferStep.OUT, id, () -> stub(order.from()).transferOut(out));
        } catch (StepFailed e) {
            // Refused outright: nothing was recorded. Attempts ran out: the call may have committed
            // before its reply was lost, and then a PENDING record exists for recovery.
            return finish(order.reason(), id, item, order.from(), order.to(), 0,
                    e.refused ? Stage.NOTHING : Stage.UNKNOWN, e.getMessage(), started);
        } catch (Failure f) {
            logFenced(order.reason(), id, item, order.from(), order.to(), 0, Stage.UNKNOWN, f, started);
            throw f;
        }
        long qty = taken.getQuantity();
        if (qty == 0) {
            return finish(order.reason(), id, item, order.from(), order.to(), 0, Stage.NOTHING, null, started);
        }
        if (qty < 0 || qty > order.maxQuantity() || !taken.getTransferId().equals(id)
                || taken.getDirection() != TransferDirection.OUT) {
            // The source broke the contract. The record it holds is what recovery will complete.
            log.error("transfer_id={} source {} answered step 1 with {} for max_quantity={}: not completing it here",
                    id, order.from().getShardId(), taken, order.maxQuantity());
            return finish(order.reason(), id, item, order.from(), order.to(), 0, Stage.UNKNOWN,
                    "step 1 reply breaks the contract", started);
        }
        return creditAndComplete(fence, order.reason(), id, item, order.from(), order.to(), qty, started);
    }

    /**
     * Completes a PENDING OUT record found at {@code source}: step 2 at its peer with the recorded
     * quantity, then step 3. Safe to run while its first driver still runs it (both idempotent).
     *
     * @throws Failure NOT_LEADER when the fence closed before a step
     */
    public TransferResult resume(Fence fence, ShardInfo source, ShardInfo target, Transfer pendingOut) {
        if (pendingOut.getDirection() != TransferDirection.OUT || pendingOut.getQuantity() < 1
                || !pendingOut.getPeerShardId().equals(target.getShardId())) {
            throw new IllegalArgumentException("not a PENDING OUT record to " + target.getShardId() + ": " + pendingOut);
        }
        metrics.transferBegun();
        try {
            return creditAndComplete(fence, TransferReason.RECOVERY, pendingOut.getTransferId(),
                    new ItemKey(pendingOut.getTenantId(), pendingOut.getItemId()), source, target,
                    pendingOut.getQuantity(), System.nanoTime());
        } finally {
            metrics.transferFinished();
        }
    }

    private TransferResult creditAndComplete(Fence fence, TransferReason reason, String id, ItemKey item,
            ShardInfo from, ShardInfo to, long qty, long started) {
        TransferInRequest in = TransferInRequest.newBuilder().setTransferId(id).setTenantId(item.tenant())
                .setItemId(item.item()).setPeerShardId(from.getShardId()).setQuantity(qty).build();
        Stage stage = Stage.TAKEN;
        try {
            step(fence, TransferStep.IN, id, () -> stub(to).transferIn(in));
            stage = Stage.CREDITED;
            Transfer done = step(fence, TransferStep.COMPLETE, id,
                    () -> stub(from).completeTransfer(CompleteTransferRequest.newBuilder().setTransferId(id).build()));
            if (done.getState() != TransferState.DONE) {
                return finish(reason, id, item, from, to, qty, stage, "step 3 answered state " + done.getState(),
                        started);
            }
            return finish(reason, id, item, from, to, qty, Stage.DONE, null, started);
        } catch (StepFailed e) {
            return finish(reason, id, item, from, to, qty, stage, e.getMessage(), started);
        } catch (Failure f) {
            logFenced(reason, id, item, from, to, qty, stage, f, started);
            throw f;
        }
    }

    /** One step: up to stepAttemptsMax attempts; the fence is checked before each. */
    private Transfer step(Fence fence, TransferStep step, String id, Supplier<Transfer> call) {
        StatusRuntimeException last = null;
        for (int attempt = 1; attempt <= stepAttemptsMax; attempt++) {
            fence.check();
            try {
                faults.before(step, id);
                Transfer reply = call.get();
                faults.after(step, id);
                return reply;
            } catch (StatusRuntimeException e) {
                last = e;
                if (!retryable(e.getStatus().getCode()) || attempt == stepAttemptsMax) {
                    break;
                }
                sleep(backoff(attempt));
            }
        }
        Status st = last.getStatus();
        throw new StepFailed("step " + step + " failed: " + st.getCode()
                + (st.getDescription() == null ? "" : " " + st.getDescription()), !retryable(st.getCode()));
    }

    private static boolean retryable(Status.Code code) {
        return code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED
                || code == Status.Code.RESOURCE_EXHAUSTED;
    }

    private Duration backoff(int attempt) {
        Duration d = backoffBase.multipliedBy(1L << Math.min(attempt - 1, 20));
        return d.compareTo(BACKOFF_MAX) > 0 ? BACKOFF_MAX : d;
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failure.of(Reason.SHUTTING_DOWN, "interrupted between transfer step attempts");
        }
    }

    private ShardServiceGrpc.ShardServiceBlockingStub stub(ShardInfo shard) {
        return ShardServiceGrpc.newBlockingStub(channels.get(shard.getAddress()))
                .withDeadlineAfter(stepTimeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private TransferResult finish(TransferReason reason, String id, ItemKey item, ShardInfo from, ShardInfo to,
            long qty, Stage stage, String problem, long started) {
        long ms = (System.nanoTime() - started) / 1_000_000;
        String line = line(reason, id, item, from, to, qty, ms, stage);
        if (stage == Stage.DONE) {
            metrics.transferDone(reason, qty);
            metrics.transferEnded(reason, BalancerMetrics.TransferOutcome.DONE);
            log.info(line);
        } else if (stage == Stage.NOTHING && problem == null) {
            metrics.transferEnded(reason, BalancerMetrics.TransferOutcome.NOTHING);
            log.debug(line);
        } else if (stage == Stage.NOTHING) {
            metrics.transferEnded(reason, BalancerMetrics.TransferOutcome.REFUSED);
            log.warn("{} problem=\"{}\" (refused; nothing moved)", line, problem);
        } else {
            metrics.transferEnded(reason, BalancerMetrics.TransferOutcome.INCOMPLETE);
            metrics.transferIncomplete();
            log.warn("{} problem=\"{}\" (left for recovery)", line, problem);
        }
        return new TransferResult(id, qty, stage, problem);
    }

    private void logFenced(TransferReason reason, String id, ItemKey item, ShardInfo from, ShardInfo to,
            long qty, Stage stage, Failure why, long started) {
        long ms = (System.nanoTime() - started) / 1_000_000;
        metrics.transferEnded(reason, BalancerMetrics.TransferOutcome.FENCED);
        log.warn("{} problem=\"{}: {}\" (stopped; left for the next leader)",
                line(reason, id, item, from, to, qty, ms, stage), why.reason(), why.getMessage());
    }

    private static String line(TransferReason reason, String id, ItemKey item, ShardInfo from, ShardInfo to, long qty,
            long ms, Stage stage) {
        return "transfer transfer_id=" + id + " tenant=" + item.tenant() + " item=" + item.item() + " from="
                + from.getShardId() + " to=" + to.getShardId() + " qty=" + qty + " reason=" + reason.label() + " ms="
                + ms + " outcome=" + stage.name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * A step that failed for good: {@code refused} when the shard answered with a definite refusal
     * (nothing committed), otherwise its attempts ran out and its outcome is unknown.
     */
    private static final class StepFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final boolean refused;

        StepFailed(String message, boolean refused) {
            super(message, null, false, false);
            this.refused = refused;
        }
    }
}
