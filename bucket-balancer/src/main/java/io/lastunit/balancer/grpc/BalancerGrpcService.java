package io.lastunit.balancer.grpc;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.balancer.v1.BalancerServiceGrpc;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.balancer.BalancerMetrics;
import io.lastunit.balancer.move.ItemMover;
import io.lastunit.balancer.transfer.Fence;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.common.invariant.ItemKey;
import io.lastunit.common.topology.TopologyCache;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * BalancerService over gRPC, an adapter only: validates a Pull on the transport thread, answers
 * a standby's NOT_LEADER at once, and hands the pull to a bounded executor (a pull blocks on the
 * item's lock and on transfers; transport threads never do). The caller's deadline bounds the
 * wait for the item and the start of transfers; the pull runs outside the call's context, so a
 * caller that gives up never cuts a transfer in half. Thread-safe.
 */
public final class BalancerGrpcService extends BalancerServiceGrpc.BalancerServiceImplBase {
    private static final Logger log = LoggerFactory.getLogger(BalancerGrpcService.class);
    /** Request bounds (DESIGN §12; the platform's defaults). */
    static final int TENANT_LENGTH_MAX = 64;
    static final int ITEM_LENGTH_MAX = 128;
    static final int REGION_LENGTH_MAX = 32;
    static final long QUANTITY_MAX = 1_000_000_000L;
    static final Duration RETRY_AFTER = Duration.ofMillis(200);

    private final Supplier<Optional<Fence>> fences;
    private final TopologyCache topology;
    private final ItemMover mover;
    private final ExecutorService pulls;
    private final BalancerMetrics metrics;
    private final PullGroups groups = new PullGroups();

    public BalancerGrpcService(Supplier<Optional<Fence>> fences, TopologyCache topology, ItemMover mover,
            ExecutorService pulls, BalancerMetrics metrics) {
        this.fences = fences;
        this.topology = topology;
        this.mover = mover;
        this.pulls = pulls;
        this.metrics = metrics;
    }

    @Override
    public void pull(PullRequest request, StreamObserver<PullResponse> out) {
        try {
            validate(request);
            Fence fence = fences.get().orElseThrow(() -> Failure.retryable(Reason.NOT_LEADER,
                    "this balancer is a standby: call the leader at the address in ZooKeeper", RETRY_AFTER));
            Deadline deadline = Context.current().getDeadline();
            long deadlineNanos = System.nanoTime() + (deadline == null ? ItemMover.PULL_WAIT_DEFAULT.toNanos()
                    : Math.max(0, deadline.timeRemaining(TimeUnit.NANOSECONDS)));
            PullGroups.Join join = groups.join(new ItemKey(request.getTenantId(), request.getItemId()),
                    request.getRegion(), request.getQuantity(), deadlineNanos);
            join.group().answer.whenComplete((answer, err) -> answer(answer, err, out));
            if (!join.opened()) {
                metrics.pullJoined();
                return;
            }
            try {
                pulls.execute(() -> run(fence, join.group()));
            } catch (RejectedExecutionException e) {
                join.group().close();
                join.group().answer.completeExceptionally(
                        Failure.retryable(Reason.QUEUE_FULL, "too many pulls waiting", RETRY_AFTER));
            }
        } catch (Failure f) {
            refuse(f, out);
        }
    }

    /** One run of the mover for a group of pulls; every member gets its answer. */
    private void run(Fence fence, PullGroups.Group g) {
        PullGroups.Key k = g.key;
        long started = System.nanoTime();
        try {
            PullResponse answer = mover.pull(fence, topology.current(), k.item(), k.region(), g);
            metrics.pull(answer.getCollapsed(), answer.getMoved());
            log.debug("pull tenant={} item={} region={} callers={} moved={} collapsed={}", k.item().tenant(),
                    k.item().item(), k.region(), g.members(), answer.getMoved(), answer.getCollapsed());
            g.answer.complete(answer);
        } catch (Failure f) {
            g.answer.completeExceptionally(f);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            g.answer.completeExceptionally(Failure.retryable(Reason.SHUTTING_DOWN, "balancer is stopping", RETRY_AFTER));
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("tenant", k.item().tenant()).addKeyValue("item", k.item().item())
                    .addKeyValue("region", k.region()).setCause(e).log("pull failed");
            g.answer.completeExceptionally(e);
        } finally {
            metrics.pullTook(System.nanoTime() - started); // every run, answered or failed
            g.close(); // a run that failed before it held the item takes no more members
        }
    }

    private void answer(PullResponse answer, Throwable err, StreamObserver<PullResponse> out) {
        try {
            if (err == null) {
                out.onNext(answer);
                out.onCompleted();
            } else if (err instanceof Failure f) {
                refuse(f, out);
            } else {
                metrics.pullRefused();
                out.onError(GrpcErrors.toStatus(err));
            }
        } catch (RuntimeException e) {
            // The caller cancelled, or its deadline passed: nobody is listening.
            log.debug("pull reply dropped: {}", e.toString());
        }
    }

    private void refuse(Failure f, StreamObserver<PullResponse> out) {
        metrics.pullRefused();
        out.onError(GrpcErrors.toStatus(f));
    }

    static void validate(PullRequest r) {
        if (!Limits.isId(r.getTenantId(), TENANT_LENGTH_MAX)) {
            throw Failure.invalid("tenant_id", "must be 1.." + TENANT_LENGTH_MAX + " printable ASCII characters");
        }
        if (!Limits.isId(r.getItemId(), ITEM_LENGTH_MAX)) {
            throw Failure.invalid("item_id", "must be 1.." + ITEM_LENGTH_MAX + " printable ASCII characters");
        }
        if (!Limits.isId(r.getRegion(), REGION_LENGTH_MAX)) {
            throw Failure.invalid("region", "must be 1.." + REGION_LENGTH_MAX + " printable ASCII characters");
        }
        if (r.getQuantity() < 1 || r.getQuantity() > QUANTITY_MAX) {
            throw Failure.invalid("quantity", "is " + r.getQuantity() + ", must be within [1, " + QUANTITY_MAX + "]");
        }
    }
}
