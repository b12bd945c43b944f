package io.lastunit.shard.grpc;

import io.grpc.stub.StreamObserver;
import io.lastunit.common.GrpcErrors;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends a future's outcome to a unary call: the value, or the failure mapped through
 * {@link GrpcErrors}. Runs on whichever thread completes the future (a lane, a reader), so it
 * only hands the reply to the transport and never throws into that thread.
 */
final class Replies {
    private static final Logger log = LoggerFactory.getLogger(Replies.class);

    private Replies() {
    }

    static <T, R> void send(CompletableFuture<T> future, Function<T, R> toResponse, StreamObserver<R> out) {
        future.whenComplete((value, err) -> {
            try {
                if (err != null) {
                    out.onError(GrpcErrors.toStatus(err));
                    return;
                }
                R response;
                try {
                    response = toResponse.apply(value);
                } catch (RuntimeException e) {
                    out.onError(GrpcErrors.toStatus(e)); // the adapter refused the value (a Failure)
                    return;
                }
                out.onNext(response);
                out.onCompleted();
            } catch (RuntimeException e) {
                // The call was cancelled or its deadline passed: nobody is listening any more.
                log.debug("reply dropped: {}", e.toString());
            }
        });
    }

    static void fail(Throwable t, StreamObserver<?> out) {
        out.onError(GrpcErrors.toStatus(t));
    }
}
