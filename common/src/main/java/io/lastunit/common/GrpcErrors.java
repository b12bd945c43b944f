package io.lastunit.common;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.Optional;

/**
 * Converts between {@link Failure} and gRPC statuses carrying {@code google.rpc.Status}
 * with {@code ErrorInfo} (always), {@code BadRequest} (for INVALID_FIELD) and
 * {@code RetryInfo} (when the failure has a retry hint). Stateless and thread-safe.
 */
public final class GrpcErrors {
    private GrpcErrors() {
    }

    public static StatusRuntimeException toStatus(Failure failure) {
        ErrorInfo info = ErrorInfo.newBuilder()
                .setReason(failure.reason().name())
                .setDomain(Reason.DOMAIN)
                .putAllMetadata(failure.metadata())
                .build();
        com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder()
                .setCode(failure.reason().code().value())
                .setMessage(String.valueOf(failure.getMessage()))
                .addDetails(Any.pack(info));
        String field = failure.metadata().get("field");
        if (field != null) {
            status.addDetails(Any.pack(BadRequest.newBuilder()
                    .addFieldViolations(BadRequest.FieldViolation.newBuilder()
                            .setField(field)
                            .setDescription(failure.getMessage()))
                    .build()));
        }
        if (failure.retryAfter() != null) {
            long millis = failure.retryAfter().toMillis();
            status.addDetails(Any.pack(RetryInfo.newBuilder()
                    .setRetryDelay(com.google.protobuf.Duration.newBuilder()
                            .setSeconds(millis / 1000)
                            .setNanos((int) (millis % 1000) * 1_000_000))
                    .build()));
        }
        return StatusProto.toStatusRuntimeException(status.build());
    }

    /**
     * Any throwable as a status: a {@link Failure} by its reason, a status (either kind) as it
     * is, anything else INTERNAL / INTERNAL_ERROR with an error id and none of its text, which is
     * logged under that id at ERROR, with its stack ({@link ErrorIds}). The returned status keeps the cause for
     * callers in this process; gRPC never sends a cause.
     */
    public static StatusRuntimeException toStatus(Throwable t) {
        Throwable cause = unwrap(t);
        if (cause instanceof Failure f) {
            return toStatus(f);
        }
        if (cause instanceof StatusRuntimeException sre) {
            return sre;
        }
        if (cause instanceof io.grpc.StatusException se) {
            return se.getStatus().asRuntimeException(se.getTrailers());
        }
        StatusRuntimeException internal = toStatus(ErrorIds.internalError(cause));
        return internal.getStatus().withCause(cause).asRuntimeException(internal.getTrailers());
    }

    /** The ErrorInfo of a status, if it carries one. */
    public static Optional<ErrorInfo> errorInfo(Throwable t) {
        com.google.rpc.Status status = StatusProto.fromThrowable(t);
        if (status == null) {
            return Optional.empty();
        }
        for (Any detail : status.getDetailsList()) {
            if (detail.is(ErrorInfo.class)) {
                try {
                    return Optional.of(detail.unpack(ErrorInfo.class));
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** The RetryInfo delay a status carries, in milliseconds, or 0 when it carries none. */
    public static long retryAfterMs(Throwable t) {
        com.google.rpc.Status status = StatusProto.fromThrowable(t);
        if (status == null) {
            return 0;
        }
        for (Any detail : status.getDetailsList()) {
            if (detail.is(RetryInfo.class)) {
                try {
                    com.google.protobuf.Duration d = detail.unpack(RetryInfo.class).getRetryDelay();
                    return d.getSeconds() * 1_000 + d.getNanos() / 1_000_000;
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    return 0;
                }
            }
        }
        return 0;
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof java.util.concurrent.CompletionException
                || c instanceof java.util.concurrent.ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }
}
