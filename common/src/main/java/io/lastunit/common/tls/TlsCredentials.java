package io.lastunit.common.tls;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A service's mutual-TLS identity and trust, read from its {@link MutualTls} files and read again
 * every reload interval, so a certificate, key or CA rotated on disk is taken without a restart:
 * new connections use it, connections already open keep theirs. The gRPC contexts it builds
 * ({@link #forServer}, {@link #forClient}) read the current key and trust on every handshake
 * (grpc-java's {@link AdvancedTlsX509KeyManager} and {@link AdvancedTlsX509TrustManager}).
 *
 * <p>Every read is checked whole before anything is swapped ({@link TlsFiles}): a chain whose key
 * does not match (a rotation caught between its two files), an expired or not-yet-valid
 * certificate, one without a lastunit identity, or an unreadable file keeps the credentials in use,
 * is logged once per distinct content, and counts in {@link #reloadFailures()}; the next read tries
 * again. The first read at {@link #load} must succeed. Thread-safe.
 *
 * <p>Hazard: the listener asks for client certificates without requiring them
 * ({@code ClientAuth.OPTIONAL}); {@link PeerAuthInterceptor} must guard every server built from
 * {@link #forServer}, or a caller without a certificate is served.
 */
public final class TlsCredentials implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TlsCredentials.class);

    private final MutualTls files;
    private final InstantSource clock;
    private final AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
    private final AdvancedTlsX509TrustManager trust;
    /** Null for credentials read once ({@link #readOnce}). */
    private ScheduledExecutorService reloader;
    private final AtomicLong reloads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile TlsFiles current;
    private volatile String lastFailure;
    /** The bytes of the last read that failed, so one bad file is logged once, not every interval. */
    private byte[][] lastFailedBytes;
    private SslContext server;
    private SslContext client;

    private TlsCredentials(MutualTls files, InstantSource clock) {
        this.files = files;
        this.clock = clock;
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
        TlsCredentials c = readOnce(files, clock);
        c.reloader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tls-reload");
            t.setDaemon(true);
            return t;
        });
        long ms = files.reloadInterval().toMillis();
        c.reloader.scheduleWithFixedDelay(c::reloadQuietly, ms, ms, TimeUnit.MILLISECONDS);
        return c;
    }

    /**
     * Reads the files once, and never again unless {@link #reloadNow} is called: for a command that
     * runs for seconds. Holds no thread.
     *
     * @throws IllegalArgumentException naming the file and the problem
     */
    public static TlsCredentials readOnce(MutualTls files, InstantSource clock) {
        TlsCredentials c = new TlsCredentials(files, clock);
        c.take(TlsFiles.read(files, clock.instant()));
        return c;
    }

    private void take(TlsFiles f) {
        keys.updateIdentityCredentials(f.chain(), f.key());
        try {
            trust.updateTrustCredentials(f.authorities());
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot trust the CA certificates of " + files.ca() + ": " + e.getMessage(), e);
        }
        current = f;
    }

    private void reloadQuietly() {
        try {
            reloadNow();
        } catch (RuntimeException e) {
            log.warn("TLS credentials reload failed", e);
        }
    }

    /**
     * Reads the files now and takes them when they changed and are valid.
     *
     * @return true when new credentials were taken
     */
    public synchronized boolean reloadNow() {
        byte[][] bytes;
        try {
            bytes = new byte[][] {Files.readAllBytes(files.certificate().toPath()), Files.readAllBytes(files.key().toPath()),
                Files.readAllBytes(files.ca().toPath())};
        } catch (IOException e) {
            fail(null, "cannot read the TLS files (" + e + ")");
            return false;
        }
        if (current.sameBytes(bytes)) {
            return false;
        }
        Instant now = clock.instant();
        try {
            TlsFiles next = TlsFiles.parse(files, bytes, now);
            take(next);
        } catch (IllegalArgumentException e) {
            fail(bytes, e.getMessage());
            return false;
        }
        reloads.incrementAndGet();
        lastFailure = null;
        lastFailedBytes = null;
        log.info("TLS credentials reloaded: {} (certificate {}, expires {})", current.identity().uri(),
                files.certificate(), current.chain()[0].getNotAfter().toInstant());
        return true;
    }

    private void fail(byte[][] bytes, String why) {
        boolean repeat = bytes != null && lastFailedBytes != null && Arrays.deepEquals(bytes, lastFailedBytes);
        lastFailedBytes = bytes;
        lastFailure = why;
        if (!repeat) {
            failures.incrementAndGet();
            log.warn("TLS credentials not reloaded, still using {}: {}", current.identity().uri(), why);
        }
    }

    /** The identity the current certificate names. */
    public ServiceIdentity identity() {
        return current.identity();
    }

    /** When the current certificate expires. */
    public Instant notAfter() {
        return current.chain()[0].getNotAfter().toInstant();
    }

    /** How many times new credentials were taken since the first read. */
    public long reloads() {
        return reloads.get();
    }

    /** How many distinct contents of the files were refused on a reload. */
    public long reloadFailures() {
        return failures.get();
    }

    /** Why the latest reload failed, or empty when it did not. */
    public Optional<String> lastFailure() {
        return Optional.ofNullable(lastFailure);
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
        if (reloader != null) {
            reloader.shutdownNow();
        }
    }
}
