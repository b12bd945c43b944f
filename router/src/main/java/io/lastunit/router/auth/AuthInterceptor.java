package io.lastunit.router.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.StatusRuntimeException;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import java.util.Optional;

/**
 * Authenticates every call by its {@code authorization: Bearer <token>} metadata and puts the
 * {@link Authenticator.Principal} in the call's {@link Context}. A call without a known token
 * is closed with UNAUTHENTICATED before any handler runs. The health service is open.
 * Thread-safe.
 */
public final class AuthInterceptor implements ServerInterceptor {
    public static final Context.Key<Authenticator.Principal> PRINCIPAL = Context.key("lastunit-principal");
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final Authenticator authenticator;

    public AuthInterceptor(Authenticator authenticator) {
        this.authenticator = authenticator;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                       ServerCallHandler<Q, R> next) {
        if (call.getMethodDescriptor().getServiceName().equals("grpc.health.v1.Health")) {
            return next.startCall(call, headers);
        }
        String header = headers.get(AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return refuse(call, "no bearer token in the authorization metadata");
        }
        Optional<Authenticator.Principal> p = authenticator.authenticate(header.substring(7).trim());
        if (p.isEmpty()) {
            return refuse(call, "unknown bearer token");
        }
        Context ctx = Context.current().withValue(PRINCIPAL, p.get());
        return Contexts.interceptCall(ctx, call, headers, next);
    }

    private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, String why) {
        StatusRuntimeException e = GrpcErrors.toStatus(Failure.of(Reason.UNAUTHENTICATED, why));
        call.close(e.getStatus(), e.getTrailers() == null ? new Metadata() : e.getTrailers());
        return new ServerCall.Listener<>() {
        };
    }
}
