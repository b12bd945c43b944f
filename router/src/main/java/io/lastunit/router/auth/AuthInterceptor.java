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
import java.util.Set;

/**
 * Authenticates every call by its {@code authorization: Bearer <token>} metadata and puts the
 * {@link Authenticator.Principal} in the call's {@link Context}. A call without a known token
 * is closed with UNAUTHENTICATED before any handler runs. Only the services in
 * {@link #OPEN_SERVICES} are open: health, for load balancers and probes, and server reflection,
 * which describes the API (the same text as the published proto files) and reads or changes no
 * stock. Thread-safe.
 *
 * <p>Hazard: the router installs this interceptor for its whole server, so a service added later
 * is closed until it is named here. Match whole service names only: a service whose name merely
 * starts like an open one is not open.
 */
public final class AuthInterceptor implements ServerInterceptor {
    public static final Context.Key<Authenticator.Principal> PRINCIPAL = Context.key("lastunit-principal");
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    /** The services any caller may use without a token. */
    public static final Set<String> OPEN_SERVICES = Set.of(
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection");

    private final java.util.function.Supplier<Authenticator> authenticator;

    public AuthInterceptor(Authenticator authenticator) {
        this(() -> authenticator);
    }

    /** Asks {@code authenticator} on every call: the grants in force now ({@link GrantsFile#current}). */
    public AuthInterceptor(java.util.function.Supplier<Authenticator> authenticator) {
        this.authenticator = authenticator;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                       ServerCallHandler<Q, R> next) {
        String service = call.getMethodDescriptor().getServiceName();
        if (service != null && OPEN_SERVICES.contains(service)) {
            return next.startCall(call, headers);
        }
        String header = headers.get(AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return refuse(call, "no bearer token in the authorization metadata");
        }
        Optional<Authenticator.Principal> p = authenticator.get().authenticate(header.substring(7).trim());
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
