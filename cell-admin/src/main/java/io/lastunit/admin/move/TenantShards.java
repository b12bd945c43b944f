package io.lastunit.admin.move;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.DropTenantRequest;
import io.lastunit.api.shard.v1.ExportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantResponse;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.SummarizeTenantRequest;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.api.shard.v1.TenantMoveRequest;
import io.lastunit.api.shard.v1.TenantMoveResponse;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.channel.ShardChannels;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;

/**
 * The shard calls of a tenant move (the move RPCs of {@code ShardService}, and CountItems,
 * SummarizeTenant, CheckInvariants), each made on every shard of a list in parallel, under a
 * deadline, with bounded retries: a call that fails with UNAVAILABLE, DEADLINE_EXCEEDED,
 * RESOURCE_EXHAUSTED or ABORTED is made again (after {@code backoff}, doubling) up to
 * {@code attemptsMax} attempts; {@code MOVE_SUPERSEDED} is {@link Superseded} at once; anything
 * else, or the last attempt's failure, is {@link StepFailed}. Every call a move makes is
 * idempotent, so repeating one whose reply was lost is safe. The calls that write carry the
 * mover's token, in the request the caller gives. Before every attempt the caller's {@link Guard}
 * runs (the mover's lease check).
 *
 * <p>Thread-safe (stateless but for the shared channels). Blocking: every method waits for its
 * answers; none waits past its deadline plus a second.
 */
final class TenantShards {
    /** A shard call failed for good; the message names the call, the shard and the status. */
    static final class StepFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        StepFailed(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * A shard refused a call for good with {@code MOVE_SUPERSEDED}: a mover that adopted the move
     * after this one (a higher token) has called it. This mover no longer owns the move: it stops
     * at once, repeats nothing and rolls nothing back. Not a {@link StepFailed}, so no step's
     * failure handling (an abort, a halt) ever sees it.
     */
    static final class Superseded extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Superseded(String message) {
            super(message, null, false, false);
        }
    }

    /** Runs before every attempt of a call; what it throws stops the call. */
    @FunctionalInterface
    interface Guard {
        void check();
    }

    /** Takes an export's chunks in order; what it throws stops (and cancels) the export. */
    @FunctionalInterface
    interface ChunkSink {
        void accept(TenantChunk chunk) throws InterruptedException;
    }

    /**
     * An export read through: the snapshot it read and its cut (the next export's since; the cut 0
     * when the shard gave none), and its rows.
     */
    record Exported(String snapshot, long cutMicros, long rows) {
    }

    /** No deadline of the caller's own: each attempt has its call timeout. */
    static final long NO_DEADLINE = Long.MAX_VALUE;

    private static final Set<Status.Code> RETRYABLE = Set.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED,
            Status.Code.RESOURCE_EXHAUSTED, Status.Code.ABORTED);

    private final ShardChannels channels;
    private final MoverSettings settings;

    TenantShards(ShardChannels channels, MoverSettings settings) {
        this.channels = channels;
        this.settings = settings;
    }

    List<Long> countItems(List<ShardInfo> shards, String tenant, Guard guard) throws InterruptedException {
        CountItemsRequest req = CountItemsRequest.newBuilder().setTenantId(tenant).build();
        return each("CountItems", shards, guard, NO_DEADLINE, (stub, s) -> stub.countItems(req))
                .stream().map(r -> r.getItems()).toList();
    }

    List<TenantSummary> summarize(List<ShardInfo> shards, String tenant, Guard guard, long deadlineNanos)
            throws InterruptedException {
        return summarize(shards, tenant, SummaryPart.SUMMARY_PART_ALL, 0, guard, deadlineNanos);
    }

    /** One part of the tenant's rows on each shard, split at {@code cutMicros} (0 for ALL). */
    List<TenantSummary> summarize(List<ShardInfo> shards, String tenant, SummaryPart part, long cutMicros, Guard guard,
            long deadlineNanos) throws InterruptedException {
        SummarizeTenantRequest req = SummarizeTenantRequest.newBuilder().setTenantId(tenant).setPart(part)
                .setEndedBeforeMicros(cutMicros).build();
        return each("SummarizeTenant", shards, guard, deadlineNanos, (stub, s) -> stub.summarizeTenant(req));
    }

    List<InvariantReport> checkInvariants(List<ShardInfo> shards, String tenant, Guard guard, long deadlineNanos)
            throws InterruptedException {
        CheckInvariantsRequest req = CheckInvariantsRequest.newBuilder().setTenantId(tenant).build();
        return each("CheckInvariants", shards, guard, deadlineNanos, (stub, s) -> stub.checkInvariants(req));
    }

    List<TenantMoveResponse> freeze(List<ShardInfo> shards, TenantMoveRequest req, Guard guard, long deadlineNanos)
            throws InterruptedException {
        return each("FreezeTenant", shards, guard, deadlineNanos, (stub, s) -> stub.freezeTenant(req));
    }

    List<TenantMoveResponse> unfreeze(List<ShardInfo> shards, TenantMoveRequest req, Guard guard)
            throws InterruptedException {
        return each("UnfreezeTenant", shards, guard, NO_DEADLINE, (stub, s) -> stub.unfreezeTenant(req));
    }

    List<TenantMoveResponse> activate(List<ShardInfo> shards, TenantMoveRequest req, Guard guard)
            throws InterruptedException {
        return each("ActivateTenant", shards, guard, NO_DEADLINE, (stub, s) -> stub.activateTenant(req));
    }

    List<TenantMoveResponse> retire(List<ShardInfo> shards, TenantMoveRequest req, Guard guard)
            throws InterruptedException {
        return each("RetireTenant", shards, guard, NO_DEADLINE, (stub, s) -> stub.retireTenant(req));
    }

    List<TenantMoveResponse> drop(List<ShardInfo> shards, TenantMoveRequest req, DropState state, Guard guard)
            throws InterruptedException {
        DropTenantRequest drop = DropTenantRequest.newBuilder().setTenantId(req.getTenantId())
                .setMoveId(req.getMoveId()).setMoverToken(req.getMoverToken()).setState(state).build();
        return each("DropTenant " + state, shards, guard, NO_DEADLINE, (stub, s) -> stub.dropTenant(drop));
    }

    ImportTenantResponse importRows(ShardInfo target, ImportTenantRequest req, Guard guard, long deadlineNanos)
            throws InterruptedException {
        return each("ImportTenant", List.of(target), guard, deadlineNanos, (stub, s) -> stub.importTenant(req)).get(0);
    }

    /**
     * Streams one source shard's export into {@code sink}, chunk by chunk, until its last chunk. A
     * stream that fails retryably is started again from the same {@code since} (the sink's
     * imports are upserts: rows sent twice land once).
     */
    Exported export(ShardInfo source, ExportTenantRequest req, Guard guard, long deadlineNanos, ChunkSink sink)
            throws InterruptedException {
        StatusRuntimeException last = null;
        long busyUntil = System.nanoTime() + settings.exportTimeout().toNanos();
        int busy = 0;
        for (int attempt = 1; attempt <= settings.attemptsMax(); attempt++) {
            guard.check();
            long timeoutMs = timeoutMs(deadlineNanos, settings.exportTimeout().toMillis(), "ExportTenant", source);
            Context.CancellableContext ctx = Context.current().withCancellation();
            try {
                return ctx.call(() -> readExport(source, req, timeoutMs, sink));
            } catch (StatusRuntimeException e) {
                stopIfInterrupted(e);
                if (!RETRYABLE.contains(e.getStatus().getCode())) {
                    throw failed("ExportTenant", source, e, attempt);
                }
                last = e;
                if (e.getStatus().getCode() == Status.Code.RESOURCE_EXHAUSTED && System.nanoTime() - busyUntil < 0
                        && (deadlineNanos == NO_DEADLINE || System.nanoTime() - deadlineNanos < 0)) {
                    // The shard runs another export (one at a time): wait for it, not an attempt.
                    attempt--;
                    Thread.sleep(Math.min(1_000, settings.backoff().toMillis() << Math.min(busy++, 10)));
                    continue;
                }
            } catch (InterruptedException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("ExportTenant from " + source.getShardId() + ": " + e, e);
            } finally {
                ctx.cancel(null);
            }
            backoff(attempt, deadlineNanos);
        }
        throw failed("ExportTenant", source, last, settings.attemptsMax());
    }

    private Exported readExport(ShardInfo source, ExportTenantRequest req, long timeoutMs, ChunkSink sink)
            throws InterruptedException {
        Iterator<TenantChunk> chunks = ShardServiceGrpc.newBlockingStub(channel(source))
                .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS).exportTenant(req);
        long rows = 0;
        while (chunks.hasNext()) {
            TenantChunk c = chunks.next();
            for (var t : c.getTablesList()) {
                rows += t.getRowsCount();
            }
            sink.accept(c);
            if (c.getLast()) {
                if (c.getSnapshot().isEmpty()) {
                    throw new StepFailed("ExportTenant from " + source.getShardId() + " ended without a snapshot");
                }
                return new Exported(c.getSnapshot(), Math.max(0, c.getCutMicros()), rows);
            }
        }
        throw new StepFailed("ExportTenant from " + source.getShardId() + " (" + source.getAddress()
                + ") ended without its last chunk after " + rows + " rows");
    }

    /**
     * Makes one call on every shard of {@code shards} in parallel; answers in the order of the list.
     *
     * @throws StepFailed when a shard refused it for good, or its attempts ran out, or the deadline passed
     */
    <T> List<T> each(String what, List<ShardInfo> shards, Guard guard, long deadlineNanos,
            BiFunction<ShardServiceGrpc.ShardServiceFutureStub, ShardInfo, ListenableFuture<T>> call)
            throws InterruptedException {
        List<T> answers = new ArrayList<>(Collections.nCopies(shards.size(), null));
        List<Integer> todo = new ArrayList<>();
        for (int i = 0; i < shards.size(); i++) {
            todo.add(i);
        }
        StatusRuntimeException last = null;
        ShardInfo lastShard = null;
        for (int attempt = 1; attempt <= settings.attemptsMax() && !todo.isEmpty(); attempt++) {
            guard.check();
            long timeoutMs = timeoutMs(deadlineNanos, settings.callTimeout().toMillis(), what, shards.get(todo.get(0)));
            List<ListenableFuture<T>> futures = new ArrayList<>();
            for (int i : todo) {
                ShardInfo s = shards.get(i);
                futures.add(call.apply(ShardServiceGrpc.newFutureStub(channel(s))
                        .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS), s));
            }
            List<Integer> again = new ArrayList<>();
            try {
                for (int k = 0; k < futures.size(); k++) {
                    int i = todo.get(k);
                    try {
                        answers.set(i, futures.get(k).get(timeoutMs + 1_000, TimeUnit.MILLISECONDS));
                    } catch (ExecutionException e) {
                        StatusRuntimeException st = GrpcErrors.toStatus(e.getCause());
                        stopIfInterrupted(st);
                        stopIfSuperseded(what, shards.get(i), st);
                        if (!RETRYABLE.contains(st.getStatus().getCode())) {
                            throw failed(what, shards.get(i), st, attempt);
                        }
                        last = st;
                        lastShard = shards.get(i);
                        again.add(i);
                    } catch (TimeoutException e) {
                        last = Status.DEADLINE_EXCEEDED.withDescription("no answer within " + timeoutMs + " ms")
                                .asRuntimeException();
                        lastShard = shards.get(i);
                        again.add(i);
                    }
                }
            } finally {
                futures.forEach(f -> f.cancel(true));
            }
            todo = again;
            if (!todo.isEmpty() && attempt < settings.attemptsMax()) {
                backoff(attempt, deadlineNanos);
            }
        }
        if (!todo.isEmpty()) {
            throw failed(what, lastShard, last, settings.attemptsMax());
        }
        return answers;
    }

    /**
     * A call cut because this thread was interrupted (the mover is stopping) is no failure of the
     * step: the move must stay as recorded, to be resumed, not roll back.
     */
    private static void stopIfInterrupted(StatusRuntimeException e) throws InterruptedException {
        if (Thread.currentThread().isInterrupted() || (e.getStatus().getCode() == Status.Code.CANCELLED
                && e.getCause() instanceof InterruptedException)) {
            Thread.interrupted();
            throw new InterruptedException("shard call cut: the mover is stopping");
        }
    }

    private static void stopIfSuperseded(String what, ShardInfo shard, StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION && GrpcErrors.errorInfo(e)
                .map(i -> i.getReason().equals(Reason.MOVE_SUPERSEDED.name())).orElse(false)) {
            throw new Superseded(what + " on shard " + shard.getShardId() + " (" + shard.getAddress()
                    + ") refused: MOVE_SUPERSEDED: " + e.getStatus().getDescription()
                    + "; another mover owns the move now");
        }
    }

    private ManagedChannel channel(ShardInfo s) {
        return channels.get(s.getAddress());
    }

    /** This attempt's timeout: the call's own, cut to the caller's deadline; refused when that has passed. */
    private static long timeoutMs(long deadlineNanos, long callMs, String what, ShardInfo shard) {
        if (deadlineNanos == NO_DEADLINE) {
            return callMs;
        }
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (remainingMs <= 0) {
            throw new StepFailed(what + " on " + shard.getShardId() + ": the move's pause budget ran out before the"
                    + " call could be made");
        }
        return Math.min(callMs, remainingMs);
    }

    private void backoff(int attempt, long deadlineNanos) throws InterruptedException {
        long ms = settings.backoff().toMillis() << Math.min(attempt - 1, 10);
        if (deadlineNanos != NO_DEADLINE) {
            ms = Math.min(ms, Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
        }
        Thread.sleep(ms);
    }

    private static StepFailed failed(String what, ShardInfo shard, StatusRuntimeException e, int attempts) {
        String reason = e == null ? "" : GrpcErrors.errorInfo(e).map(i -> " / " + i.getReason()).orElse("");
        String status = e == null ? "no answer" : e.getStatus().getCode() + reason
                + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription());
        return new StepFailed(what + " on shard " + (shard == null ? "?" : shard.getShardId() + " ("
                + shard.getAddress() + ")") + " failed: " + status + " (attempt " + attempts + ")");
    }
}
