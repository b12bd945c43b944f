package io.lastunit.bench.load;

import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.concurrent.CompletionException;

/**
 * What the load generator does with a failed call, and how it describes one. Pure code.
 *
 * <p>RESOURCE_EXHAUSTED (the router's rate limit, in-flight cap, a full lane queue) and UNAVAILABLE
 * (a shard or the topology briefly away) are retried with the same request, so with the same
 * idempotency key: a retry can never take a second unit. When the attempts are used up,
 * RESOURCE_EXHAUSTED counts as <em>limited</em> (the platform turned the buyer away on purpose)
 * and anything else as an <em>error</em>.
 */
final class Outcomes {
    /** What to do after a failed attempt. */
    enum Next {
        RETRY, LIMITED, ERROR
    }

    /** Backoff bounds when the server gives no RetryInfo. */
    static final long BACKOFF_BASE_MS = 10;
    static final long BACKOFF_MAX_MS = 1_000;

    private Outcomes() {
    }

    /**
     * @param attempt     the attempt that failed, 1-based
     * @param attemptsMax attempts allowed in all
     */
    static Next afterFailure(Status.Code code, int attempt, int attemptsMax) {
        boolean retryable = code == Status.Code.RESOURCE_EXHAUSTED || code == Status.Code.UNAVAILABLE;
        if (retryable && attempt < attemptsMax) {
            return Next.RETRY;
        }
        return code == Status.Code.RESOURCE_EXHAUSTED ? Next.LIMITED : Next.ERROR;
    }

    /** The wait before attempt {@code attempt + 1}: the server's RetryInfo, at least an exponential backoff. */
    static long retryDelayMs(long retryAfterMs, int attempt) {
        long backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS << Math.min(Math.max(attempt, 0), 7));
        return Math.max(Math.max(retryAfterMs, 0), backoff);
    }

    /** The server's RetryInfo delay in milliseconds, or 0. */
    static long retryAfterMs(Throwable t) {
        return io.lastunit.common.GrpcErrors.retryAfterMs(t);
    }

    /** A failure in one line: {@code CODE (REASON): description}, or the exception's message. */
    static String describe(Throwable t) {
        Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        Status st = Status.fromThrowable(c);
        if (st.getCode() == Status.Code.UNKNOWN && !(c instanceof StatusRuntimeException)) {
            return c.getClass().getSimpleName() + ": " + c.getMessage();
        }
        String reason = reason(c);
        return st.getCode() + (reason.isEmpty() || reason.equals(st.getCode().name()) ? "" : " (" + reason + ")")
                + (st.getDescription() == null ? "" : ": " + st.getDescription());
    }

    /** The ErrorInfo reason lastunit puts on its errors (e.g. RATE_LIMITED), or "". */
    static String reason(Throwable t) {
        com.google.rpc.Status st = StatusProto.fromThrowable(t);
        if (st == null) {
            return "";
        }
        for (com.google.protobuf.Any any : st.getDetailsList()) {
            if (any.is(ErrorInfo.class)) {
                try {
                    return any.unpack(ErrorInfo.class).getReason();
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    return "";
                }
            }
        }
        return "";
    }
}
