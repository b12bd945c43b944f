package io.lastunit.common.tls;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.StatusRuntimeException;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Admits a call by the client certificate of its TLS connection and the server's {@link AllowList}:
 * no TLS session or no client certificate → UNAUTHENTICATED; a certificate without a lastunit
 * identity, or whose role the list does not allow for the method → PERMISSION_DENIED. Either way
 * the call is closed before its request is read, so nothing changes. Open methods (health,
 * reflection) pass without a certificate. The caller's identity is in {@link #PEER} for the
 * handlers. Thread-safe.
 *
 * <p>The listener asks for client certificates without requiring them ({@link TlsCredentials}), so
 * that probes reach health and a caller without one gets this answer instead of a failed
 * handshake. A certificate that is presented must chain to the trusted CA, or the handshake fails.
 *
 * <p>Hazard: the identity is parsed once per connection and kept in its {@link SSLSession}; a
 * certificate rotated on the client takes effect on its next connection.
 */
public final class PeerAuthInterceptor implements ServerInterceptor {
    /** The calling service, for handlers behind this interceptor. */
    public static final Context.Key<ServiceIdentity> PEER = Context.key("lastunit-peer");
    private static final String SESSION_KEY = "lastunit.peer-identity";

    private final AllowList allowList;

    public PeerAuthInterceptor(AllowList allowList) {
        this.allowList = allowList;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                       ServerCallHandler<Q, R> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        if (allowList.isOpen(method)) {
            return next.startCall(call, headers);
        }
        SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
        if (session == null) {
            return refuse(call, Reason.UNAUTHENTICATED, method + " needs mutual TLS; this call came without TLS");
        }
        Object cached = session.getValue(SESSION_KEY);
        ServiceIdentity caller;
        if (cached instanceof ServiceIdentity id) {
            caller = id;
        } else {
            X509Certificate leaf = leaf(session);
            if (leaf == null) {
                return refuse(call, Reason.UNAUTHENTICATED, method + " needs a client certificate; none was presented");
            }
            Optional<ServiceIdentity> id;
            try {
                id = ServiceIdentity.of(leaf);
            } catch (IllegalArgumentException e) {
                return refuse(call, Reason.PERMISSION_DENIED, e.getMessage());
            }
            if (id.isEmpty()) {
                return refuse(call, Reason.PERMISSION_DENIED, "client certificate " + leaf.getSubjectX500Principal()
                        + " names no lastunit identity (a URI subject alternative name spiffe://lastunit/<role>/<name>)");
            }
            caller = id.get();
            session.putValue(SESSION_KEY, caller);
        }
        Optional<String> refusal = allowList.refusal(method, caller);
        if (refusal.isPresent()) {
            return refuse(call, Reason.PERMISSION_DENIED, refusal.get());
        }
        return Contexts.interceptCall(Context.current().withValue(PEER, caller), call, headers, next);
    }

    private static X509Certificate leaf(SSLSession session) {
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x ? x : null;
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }

    private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, Reason reason, String why) {
        StatusRuntimeException e = GrpcErrors.toStatus(Failure.of(reason, why));
        call.close(e.getStatus(), e.getTrailers() == null ? new Metadata() : e.getTrailers());
        return new ServerCall.Listener<>() {
        };
    }
}
