package io.lastunit.common.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.lastunit.common.reload.ReloadingFiles;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLException;

/**
 * A service's mutual-TLS identity and trust, read from its {@link MutualTls} files and read again
 * every reload interval ({@link ReloadingFiles}), so a certificate, key or CA rotated on disk is
 * taken without a restart: new connections use it, connections already open keep theirs. The gRPC
 * contexts it builds ({@link #forServer}, {@link #forClient}) read the current key and trust on
 * every handshake (grpc-java's {@link AdvancedTlsX509KeyManager} and {@link AdvancedTlsX509TrustManager};
 * their own file watchers allow no period under a minute and do not check that a key matches).
 *
 * <p>Every read is checked whole before anything is swapped ({@link TlsFiles}): a chain whose key
 * does not match (a rotation caught between its two files), an expired or not-yet-valid
 * certificate, one without a lastunit identity, or an unreadable file keeps the credentials in use,
 * is logged once per distinct content, and counts in {@link #reloadFailures()}. The first read must
 * succeed. Thread-safe.
 *
 * <p>Hazard: the listener asks for client certificates without requiring them
 * ({@code ClientAuth.OPTIONAL}); {@link PeerAuthInterceptor} must guard every server built from
 * {@link #forServer}, or a caller without a certificate is served.
 */
public final class TlsCredentials implements AutoCloseable {
    /** Larger PEM files are refused: a chain and a CA bundle are a few KiB. */
    static final long FILE_BYTES_MAX = 1 << 20;

    private final AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
    private final AdvancedTlsX509TrustManager trust;
    private ReloadingFiles<TlsFiles> files;
    private SslContext server;
    private SslContext client;

    private TlsCredentials() {
        try {
            this.trust = AdvancedTlsX509TrustManager.newBuilder()
                    .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_AND_HOST_NAME_VERIFICATION)
                    .build();
        } catch (java.security.cert.CertificateException e) {
            throw new IllegalStateException("cannot build a trust manager", e);
        }
    }

    /**
     * Reads the files and starts reading them again every reload interval.
     *
     * @throws IllegalArgumentException naming the file and the problem when the first read fails
     */
    public static TlsCredentials load(MutualTls files) {
        return load(files, InstantSource.system());
    }

    /** @param clock judges whether a certificate is valid now */
    public static TlsCredentials load(MutualTls files, InstantSource clock) {
        TlsCredentials c = new TlsCredentials();
        c.files = ReloadingFiles.watch("TLS credentials", paths(files), FILE_BYTES_MAX, files.reloadInterval(),
                bytes -> TlsFiles.parse(files, bytes, clock.instant()), c::take);
        return c;
    }

    /**
     * Reads the files once, and again only when {@link #reloadNow} is called: for a command that
     * runs for seconds. Holds no thread.
     *
     * @throws IllegalArgumentException naming the file and the problem
     */
    public static TlsCredentials readOnce(MutualTls files, InstantSource clock) {
        TlsCredentials c = new TlsCredentials();
        c.files = ReloadingFiles.readOnce("TLS credentials", paths(files), FILE_BYTES_MAX,
                bytes -> TlsFiles.parse(files, bytes, clock.instant()), c::take);
        return c;
    }

    private static List<java.nio.file.Path> paths(MutualTls files) {
        return List.of(files.certificate().toPath(), files.key().toPath(), files.ca().toPath());
    }

    private void take(TlsFiles f) {
        try {
            trust.updateTrustCredentials(f.authorities());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot trust the CA certificates: " + e.getMessage(), e);
        }
        keys.updateIdentityCredentials(f.chain(), f.key());
    }

    /**
     * Reads the files now and takes them when they changed and are valid.
     *
     * @return true when new credentials were taken
     */
    public boolean reloadNow() {
        return files.reloadNow();
    }

    /** The identity the current certificate names. */
    public ServiceIdentity identity() {
        return files.current().identity();
    }

    /** When the current certificate expires. */
    public Instant notAfter() {
        return files.current().chain()[0].getNotAfter().toInstant();
    }

    /** How many times new credentials were taken since the first read. */
    public long reloads() {
        return files.reloads();
    }

    /** How many distinct contents of the files were refused on a reload. */
    public long reloadFailures() {
        return files.reloadFailures();
    }

    /** Why the latest reload failed, or empty when it did not. */
    public Optional<String> lastFailure() {
        return files.lastFailure();
    }

    /** A server context: TLS only, client certificates asked for (not required) and checked against the CA. */
    public synchronized SslContext forServer() {
        if (server == null) {
            try {
                server = GrpcSslContexts.configure(SslContextBuilder.forServer(keys)).trustManager(trust)
                        .clientAuth(ClientAuth.OPTIONAL).build();
            } catch (SSLException e) {
                throw new IllegalStateException("cannot build the server TLS context of " + identity(), e);
            }
        }
        return server;
    }

    /** A client context: presents this identity, trusts servers chained to the CA whose certificate names the host dialled. */
    public synchronized SslContext forClient() {
        if (client == null) {
            try {
                client = GrpcSslContexts.forClient().keyManager(keys).trustManager(trust).build();
            } catch (SSLException e) {
                throw new IllegalStateException("cannot build the client TLS context of " + identity(), e);
            }
        }
        return client;
    }

    @Override
    public void close() {
        files.close();
    }
}
