package io.lastunit.common.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.File;
import javax.net.ssl.SSLException;

/**
 * How a service dials another: plaintext; TLS trusting a CA (the server proves itself, the caller
 * does not); or mutual TLS with the caller's {@link TlsCredentials}, which the servers' allow-lists
 * need. The TLS context is built once and shared by every channel. Thread-safe.
 */
public final class ClientTls {
    public static final ClientTls PLAINTEXT = new ClientTls(null, null);

    private final File trustCertificate;
    private final TlsCredentials credentials;
    private SslContext context;

    private ClientTls(File trustCertificate, TlsCredentials credentials) {
        this.trustCertificate = trustCertificate;
        this.credentials = credentials;
    }

    /** TLS trusting {@code ca} (PEM), without a client certificate; null: plaintext. */
    public static ClientTls trusting(File ca) {
        return ca == null ? PLAINTEXT : new ClientTls(ca, null);
    }

    /** Mutual TLS: this service's identity, trusting its CA. */
    public static ClientTls mutual(TlsCredentials credentials) {
        return new ClientTls(null, java.util.Objects.requireNonNull(credentials, "credentials"));
    }

    /** Mutual TLS with {@code credentials} when given, else TLS trusting {@code ca}, else plaintext. */
    public static ClientTls of(TlsCredentials credentials, File ca) {
        return credentials != null ? mutual(credentials) : trusting(ca);
    }

    public boolean plaintext() {
        return trustCertificate == null && credentials == null;
    }

    public boolean mutual() {
        return credentials != null;
    }

    /** Makes {@code b} dial this way. */
    public NettyChannelBuilder applyTo(NettyChannelBuilder b) {
        return plaintext() ? b.usePlaintext() : b.sslContext(context());
    }

    private synchronized SslContext context() {
        if (context == null) {
            if (credentials != null) {
                context = credentials.forClient();
            } else {
                try {
                    context = GrpcSslContexts.forClient().trustManager(trustCertificate).build();
                } catch (SSLException | IllegalArgumentException e) {
                    throw new IllegalStateException("cannot build a TLS context trusting " + trustCertificate + ": "
                            + e.getMessage(), e);
                }
            }
        }
        return context;
    }

    @Override
    public String toString() {
        return credentials != null ? "mutual TLS as " + credentials.identity()
                : trustCertificate != null ? "TLS trusting " + trustCertificate : "plaintext";
    }
}
