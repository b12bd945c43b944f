package io.lastunit.router.route;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.SettableFuture;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.shard.v1.ReserveBatchRequest;
import io.lastunit.api.shard.v1.ReserveBatchResponse;
import io.lastunit.api.shard.v1.ReserveResult;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends the router's Reserves to a shard in batches: one {@code ShardService.ReserveBatch} call
 * carries many Reserves, each answered in its own slot as if it had been its own call. One call
 * per batch instead of one per Reserve saves the HTTP/2 stream, the headers and gRPC's per-call
 * work on both sides. Batches form naturally, as a lane's do: a Reserve goes out at once, on
 * the caller's thread, while the shard has fewer than {@code inFlightMax} calls or fewer than
 * {@code holdAbove} Reserves from this router to answer; beyond that it waits in the shard's
 * outbox, and the thread that receives the next answer sends everything waiting (up to
 * {@code batchMax}) as one call. A lightly loaded router
 * sends each Reserve alone with no added wait; the busier it is, the bigger its batches. No
 * thread of its own, so no hand-off to wait for.
 *
 * <p>Hazard: a shard answers a call when the lane batch holding its Reserves commits, and that
 * lane starts its next batch at that moment. A Reserve that waited here for the answer therefore
 * reaches the lane just after that batch was taken and waits a whole batch more; with slow
 * commits that is milliseconds per Reserve, and at moderate load the lane's batches half fill.
 * So a Reserve waits only while the shard also has at least {@code holdAbove} Reserves from this
 * router to answer: enough that its lanes' batches fill without it (docs/routing.md).
 *
 * <p>Each Reserve's future completes exactly as a unary call's would: with the shard's response,
 * or with a {@code StatusRuntimeException} carrying the shard's status and details (ErrorInfo,
 * RetryInfo), so {@link Router} retries, re-routes and follows FORWARDED per Reserve as before.
 * When the batch call fails as a whole (the shard is unreachable, the deadline passed), every
 * entry fails with that status. A shard that does not know ReserveBatch (UNIMPLEMENTED: an older
 * node during a rolling upgrade) gets unary Reserves on that channel from then on.
 *
 * <p>Bounds: at most {@code batchMax} Reserves per call and {@code inFlightMax} calls in flight
 * per shard while {@code holdAbove} or more of its Reserves are in flight (below that, up to
 * {@code holdAbove} calls of one); at most {@code queueMax} Reserves waiting
 * in the router (beyond, RESOURCE_EXHAUSTED / QUEUE_FULL at once, nothing sent). A batch's
 * deadline is the latest of its entries'; an entry whose deadline passed while it waited fails
 * with DEADLINE_EXCEEDED and is not sent. Calls are made in the root context: the caller's
 * cancellation does not reach the shard (it never stopped a Reserve a lane had taken either;
 * the key makes a retry safe), and one caller's end cannot cancel a batch it shares.
 * {@code batchMax = 1} turns batching off: each Reserve is its own unary call, sent on the
 * caller's thread. Thread-safe.
 */
public final class ReserveBatcher implements AutoCloseable {

    /** The retry hint of a QUEUE_FULL answered here. */
    static final Duration RETRY_AFTER = Duration.ofMillis(50);

    private final int batchMax;
    private final int queueMax;
    private final int inFlightMax;
    private final int holdAbove;
    private final ConcurrentHashMap<ManagedChannel, Outbox> outboxes = new ConcurrentHashMap<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private volatile boolean closed;

    /** A Reserve waiting to be sent. */
    private record Pending(ReserveRequest request, Deadline deadline, SettableFuture<ReserveResponse> future) {
    }

    /** The Reserves waiting for one shard channel, and its calls in flight. */
    private static final class Outbox {
        final ManagedChannel channel;
        final ConcurrentLinkedQueue<Pending> entries = new ConcurrentLinkedQueue<>();
        /** ReserveBatch calls sent and not answered yet; a slot is taken before draining. */
        final AtomicInteger inFlight = new AtomicInteger();
        /** The Reserves of those calls. */
        final AtomicInteger reservesInFlight = new AtomicInteger();
        /** Set once the shard answered UNIMPLEMENTED: it gets unary Reserves. */
        volatile boolean unaryOnly;

        Outbox(ManagedChannel channel) {
            this.channel = channel;
        }
    }

    /**
     * @param batchMax    most Reserves per call, within [1, {@link Limits#RESERVE_BATCH_MAX}]; 1 sends each alone
     * @param queueMax    most Reserves waiting in the router for all shards together, at least 1
     * @param inFlightMax most ReserveBatch calls in flight per shard channel, at least 1; while that
     *                    many are unanswered, new Reserves for the shard wait for the next call
     */
    public ReserveBatcher(int batchMax, int queueMax, int inFlightMax) {
        this(batchMax, queueMax, inFlightMax, 0);
    }

    /**
     * As {@link #ReserveBatcher(int, int, int)}, but a Reserve waits for a free call only while
     * the shard also has at least {@code holdAbove} Reserves from this router in flight; below
     * that it goes out at once. 0 holds whenever {@code inFlightMax} calls are in flight.
     */
    public ReserveBatcher(int batchMax, int queueMax, int inFlightMax, int holdAbove) {
        if (batchMax < 1 || batchMax > Limits.RESERVE_BATCH_MAX) {
            throw new IllegalArgumentException("batchMax must be within [1, " + Limits.RESERVE_BATCH_MAX + "], got "
                    + batchMax);
        }
        if (queueMax < 1) {
            throw new IllegalArgumentException("queueMax must be >= 1, got " + queueMax);
        }
        if (inFlightMax < 1) {
            throw new IllegalArgumentException("inFlightMax must be >= 1, got " + inFlightMax);
        }
        if (holdAbove < 0) {
            throw new IllegalArgumentException("holdAbove must be >= 0, got " + holdAbove);
        }
        this.batchMax = batchMax;
        this.queueMax = queueMax;
        this.inFlightMax = inFlightMax;
        this.holdAbove = holdAbove;
    }

    /** Sends {@code r} to the shard behind {@code channel}, in a batch, until {@code deadline}. */
    public ListenableFuture<ReserveResponse> reserve(ManagedChannel channel, ReserveRequest r, Deadline deadline) {
        if (batchMax == 1) {
            return unary(channel, r, deadline);
        }
        if (closed) {
            return Futures.immediateFailedFuture(shuttingDown());
        }
        if (queued.incrementAndGet() > queueMax) {
            queued.decrementAndGet();
            return Futures.immediateFailedFuture(GrpcErrors.toStatus(Failure.retryable(Reason.QUEUE_FULL,
                    queueMax + " Reserves are already waiting in this router for their shards", RETRY_AFTER)));
        }
        Outbox o = outboxes.computeIfAbsent(channel, Outbox::new);
        SettableFuture<ReserveResponse> f = SettableFuture.create();
        o.entries.add(new Pending(r, deadline, f));
        if (closed) {
            // close() may have swept the outboxes before this entry arrived.
            failAll(o, shuttingDown());
            return f;
        }
        drain(o);
        return f;
    }

    /** Forgets a channel the router closed (its waiting Reserves fail UNAVAILABLE, so they are retried). */
    public void forget(ManagedChannel channel) {
        Outbox o = outboxes.remove(channel);
        if (o != null) {
            failAll(o, Status.UNAVAILABLE.withDescription("channel to the shard was closed").asRuntimeException());
        }
    }

    /** Calls made and Reserves sent in them since start: {batches, entries}. */
    public long[] stats() {
        return new long[] {batches.get(), entries.get()};
    }

    /**
     * Sends what waits in {@code o} while it has a free call slot. Runs on the thread of a new
     * Reserve or of an answered call; never blocks. Whoever adds an entry or frees a slot calls it
     * afterwards, so an entry never waits while a slot is free.
     */
    private void drain(Outbox o) {
        while (true) {
            int n = o.inFlight.get();
            if (n >= inFlightMax && o.reservesInFlight.get() >= holdAbove) {
                return; // the answer to a call in flight drains again
            }
            if (!o.inFlight.compareAndSet(n, n + 1)) {
                continue;
            }
            List<Pending> batch = new ArrayList<>(Math.min(batchMax, 16));
            Pending p;
            while (batch.size() < batchMax && (p = o.entries.poll()) != null) {
                batch.add(p);
            }
            if (batch.isEmpty()) {
                o.inFlight.decrementAndGet();
                if (o.entries.isEmpty()) {
                    return;
                }
                continue; // an entry arrived after the poll; its thread may have seen no free slot
            }
            queued.addAndGet(-batch.size());
            o.reservesInFlight.addAndGet(batch.size());
            // A batch belongs to no caller: started in the root context, so the end or the
            // cancellation of the call that happens to send it (a router server call) cannot
            // cancel the others' Reserves.
            Context previous = Context.ROOT.attach();
            try {
                send(o, batch);
            } catch (RuntimeException e) {
                // Never silence: each Reserve gets an answer, and the slot is freed.
                Status s = Status.UNAVAILABLE.withDescription("could not send to the shard: " + e).withCause(e);
                for (Pending each : batch) {
                    each.future.setException(s.asRuntimeException());
                }
                release(o, batch.size());
            } finally {
                Context.ROOT.detach(previous);
            }
            if (o.entries.isEmpty()) {
                return;
            }
        }
    }

    /** Sends {@code batch} in one call that holds a slot of {@code o}; the slot is freed when it is answered. */
    private void send(Outbox o, List<Pending> batch) {
        List<Pending> live = new ArrayList<>(batch.size());
        Deadline latest = null;
        for (Pending p : batch) {
            if (p.deadline.isExpired()) {
                p.future.setException(Status.DEADLINE_EXCEEDED
                        .withDescription("deadline passed while the Reserve waited to be sent").asRuntimeException());
            } else {
                live.add(p);
                if (latest == null || latest.isBefore(p.deadline)) {
                    latest = p.deadline;
                }
            }
        }
        int counted = batch.size();
        if (live.isEmpty()) {
            release(o, counted); // nothing sent; the caller's loop goes on
            return;
        }
        if (o.unaryOnly) {
            sendUnary(o, live, counted);
            return;
        }
        ReserveBatchRequest.Builder b = ReserveBatchRequest.newBuilder();
        for (Pending p : live) {
            b.addRequests(p.request);
        }
        batches.incrementAndGet();
        entries.addAndGet(live.size());
        ListenableFuture<ReserveBatchResponse> call = ShardServiceGrpc.newFutureStub(o.channel)
                .withDeadline(latest).reserveBatch(b.build());
        Futures.addCallback(call, new FutureCallback<>() {
            @Override
            public void onSuccess(ReserveBatchResponse response) {
                if (response.getResultsCount() != live.size()) {
                    Status s = Status.INTERNAL.withDescription("shard answered " + response.getResultsCount()
                            + " results to a batch of " + live.size());
                    for (Pending p : live) {
                        p.future.setException(s.asRuntimeException());
                    }
                } else {
                    for (int i = 0; i < live.size(); i++) {
                        ReserveResult result = response.getResults(i);
                        SettableFuture<ReserveResponse> f = live.get(i).future;
                        if (result.hasResponse()) {
                            f.set(result.getResponse());
                        } else if (result.hasError()) {
                            f.setException(StatusProto.toStatusRuntimeException(result.getError()));
                        } else {
                            f.setException(Status.INTERNAL.withDescription("shard answered an empty result")
                                    .asRuntimeException());
                        }
                    }
                }
                answered(o, counted);
            }

            @Override
            public void onFailure(Throwable t) {
                if (Status.fromThrowable(t).getCode() == Status.Code.UNIMPLEMENTED) {
                    o.unaryOnly = true;
                    sendUnary(o, live, counted);
                    return;
                }
                for (Pending p : live) {
                    p.future.setException(t);
                }
                answered(o, counted);
            }
        }, MoreExecutors.directExecutor());
    }

    /** Each entry as its own Reserve; the slot is freed when the last is answered. */
    private void sendUnary(Outbox o, List<Pending> live, int counted) {
        AtomicInteger left = new AtomicInteger(live.size());
        for (Pending p : live) {
            ListenableFuture<ReserveResponse> f = unary(o.channel, p.request, p.deadline);
            p.future.setFuture(f);
            f.addListener(() -> {
                if (left.decrementAndGet() == 0) {
                    answered(o, counted);
                }
            }, MoreExecutors.directExecutor());
        }
    }

    /** A call of {@code o} was answered: its slot is free, and what waited for one goes next. */
    private void answered(Outbox o, int counted) {
        release(o, counted);
        if (!o.entries.isEmpty() && !closed) {
            drain(o);
        }
    }

    /** Frees the slot of a call that carried {@code counted} Reserves (as counted when it took the slot). */
    private static void release(Outbox o, int counted) {
        o.reservesInFlight.addAndGet(-counted);
        o.inFlight.decrementAndGet();
    }

    private static ListenableFuture<ReserveResponse> unary(ManagedChannel channel, ReserveRequest r,
                                                           Deadline deadline) {
        return InventoryServiceGrpc.newFutureStub(channel).withDeadline(deadline).reserve(r);
    }

    private static StatusRuntimeException shuttingDown() {
        return GrpcErrors.toStatus(Failure.retryable(Reason.SHUTTING_DOWN, "router is shutting down",
                Duration.ofMillis(500)));
    }

    private void failAll(Outbox o, StatusRuntimeException e) {
        Pending p;
        while ((p = o.entries.poll()) != null) {
            queued.decrementAndGet();
            p.future.setException(e);
        }
    }

    /** Refuses new Reserves; those still waiting fail UNAVAILABLE / SHUTTING_DOWN (the router is going away). */
    @Override
    public void close() {
        closed = true;
        for (Outbox o : outboxes.values()) {
            failAll(o, shuttingDown());
        }
    }
}
