package io.lastunit.admin.grpc;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.stub.StreamObserver;
import io.lastunit.admin.move.MoveStarter;
import io.lastunit.admin.move.Moves;
import io.lastunit.api.admin.v1.AbortMoveRequest;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.GetMoveRequest;
import io.lastunit.api.admin.v1.ListMovesRequest;
import io.lastunit.api.admin.v1.ListMovesResponse;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.router.auth.AuthInterceptor;
import io.lastunit.router.auth.Authenticator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * AdminService over gRPC, an adapter only: validates each request on the transport thread
 * (INVALID_ARGUMENT naming the field), checks that the caller has the admin role and may use the
 * tenant (the principal {@link AuthInterceptor} put on the call; PERMISSION_DENIED otherwise), and
 * hands the call to a bounded executor, because every call reads ZooKeeper and StartMove asks the
 * shards (a full executor: RESOURCE_EXHAUSTED / QUEUE_FULL). The moves themselves are {@link Moves}'.
 * Thread-safe.
 */
public final class AdminGrpcService extends AdminServiceGrpc.AdminServiceImplBase {
    private static final Logger log = LoggerFactory.getLogger(AdminGrpcService.class);
    /** Longest an AbortMove waits for the move to be ABORTING, within the caller's deadline. */
    static final Duration ABORT_WAIT_MAX = Duration.ofSeconds(5);
    static final Duration RETRY_AFTER = Duration.ofMillis(500);

    private final Moves moves;
    private final ExecutorService calls;

    /** @param calls runs the calls (bounded: a full queue refuses at once); the caller's to stop */
    public AdminGrpcService(Moves moves, ExecutorService calls) {
        this.moves = moves;
        this.calls = calls;
    }

    @Override
    public void startMove(StartMoveRequest r, StreamObserver<Move> out) {
        try {
            MoveStarter.validate(r.getTenantId(), r.getToCell(), r.getMaxPauseMs(), r.getMoveId());
            Authenticator.Principal p = authorize(r.getTenantId());
            hand(out, () -> {
                Move m = moves.start(r.getTenantId(), r.getToCell(), r.getMaxPauseMs(), r.getMoveId());
                log.info("StartMove tenant={} to_cell={} by {}: move {} {}", r.getTenantId(), r.getToCell(),
                        p.name(), m.getMoveId(), m.getStep());
                return m;
            });
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void getMove(GetMoveRequest r, StreamObserver<Move> out) {
        try {
            requireMoveId(r.getMoveId());
            Authenticator.Principal p = admin();
            hand(out, () -> visible(p, moves.get(r.getMoveId())));
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void listMoves(ListMovesRequest r, StreamObserver<ListMovesResponse> out) {
        try {
            if (!r.getTenantId().isEmpty() && !TopologyStore.isName(r.getTenantId())) {
                throw Failure.invalid("tenant_id", "'" + r.getTenantId() + "' is not 1..64 printable ASCII characters"
                        + " without '/' (empty: every tenant)");
            }
            Authenticator.Principal p = r.getTenantId().isEmpty() ? admin() : authorize(r.getTenantId());
            hand(out, () -> {
                List<Move> list = moves.list(r.getTenantId()).stream().filter(m -> p.mayUse(m.getTenantId())).toList();
                return ListMovesResponse.newBuilder().addAllMoves(list).build();
            });
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @Override
    public void abortMove(AbortMoveRequest r, StreamObserver<Move> out) {
        try {
            requireMoveId(r.getMoveId());
            if (r.getReason().length() > Moves.REASON_LENGTH_MAX || (!r.getReason().isEmpty()
                    && !Limits.isId(r.getReason().replace(' ', '_'), Moves.REASON_LENGTH_MAX))) {
                throw Failure.invalid("reason", "must be at most " + Moves.REASON_LENGTH_MAX
                        + " printable ASCII characters (spaces allowed)");
            }
            Authenticator.Principal p = admin();
            Deadline deadline = Context.current().getDeadline();
            long waitMs = Math.min(ABORT_WAIT_MAX.toMillis(),
                    deadline == null ? Long.MAX_VALUE : Math.max(0, deadline.timeRemaining(TimeUnit.MILLISECONDS) - 200));
            hand(out, () -> {
                visible(p, moves.get(r.getMoveId()));
                Move m = moves.abort(r.getMoveId(), r.getReason(), Duration.ofMillis(waitMs));
                log.info("AbortMove {} by {}: {}", r.getMoveId(), p.name(), m.getStep());
                return m;
            });
        } catch (Failure f) {
            out.onError(GrpcErrors.toStatus(f));
        }
    }

    @FunctionalInterface
    private interface Call<T> {
        T call() throws Exception;
    }

    /** Runs {@code call} on the executor and answers with its value or its failure. */
    private <T> void hand(StreamObserver<T> out, Call<T> call) {
        try {
            calls.execute(() -> {
                try {
                    T value = call.call();
                    out.onNext(value);
                    out.onCompleted();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    reply(out, Failure.retryable(Reason.SHUTTING_DOWN, "admin server is stopping", RETRY_AFTER));
                } catch (Exception e) {
                    reply(out, e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw Failure.retryable(Reason.QUEUE_FULL, "too many admin calls waiting", RETRY_AFTER);
        }
    }

    private static <T> void reply(StreamObserver<T> out, Throwable t) {
        try {
            out.onError(GrpcErrors.toStatus(t));
        } catch (RuntimeException e) {
            // The caller is gone: cancelled, or its deadline passed.
        }
    }

    private static void requireMoveId(String moveId) {
        if (!TopologyStore.isName(moveId)) {
            throw Failure.invalid("move_id", "'" + moveId + "' is not 1..64 printable ASCII characters without '/'");
        }
    }

    /** The caller, who must have the admin role. */
    private static Authenticator.Principal admin() {
        Authenticator.Principal p = AuthInterceptor.PRINCIPAL.get();
        if (p == null) {
            throw Failure.of(Reason.UNAUTHENTICATED, "no principal on the call");
        }
        if (!p.admin()) {
            throw Failure.of(Reason.PERMISSION_DENIED, "caller " + p.name() + " lacks the admin role");
        }
        return p;
    }

    /** The caller, who must have the admin role and may use {@code tenant}. */
    private static Authenticator.Principal authorize(String tenant) {
        Authenticator.Principal p = admin();
        if (!p.mayUse(tenant)) {
            throw Failure.of(Reason.PERMISSION_DENIED, "caller " + p.name() + " may not use tenant " + tenant);
        }
        return p;
    }

    /** The move, if the caller may use its tenant. */
    private static Move visible(Authenticator.Principal p, Move m) {
        if (!p.mayUse(m.getTenantId())) {
            throw Failure.of(Reason.PERMISSION_DENIED, "caller " + p.name() + " may not use tenant " + m.getTenantId());
        }
        return m;
    }
}
