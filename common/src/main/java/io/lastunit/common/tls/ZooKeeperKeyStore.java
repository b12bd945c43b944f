package io.lastunit.common.tls;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one PEM file (key, then certificate chain) that ZooKeeper's client reads as its key store,
 * kept equal to a {@link ZooKeeperTls}'s certificate and key files: every {@link #CHECK_INTERVAL}
 * the two files are read again, and when they changed and still make a valid pair
 * ({@link ZooKeeperTls}'s own checks) the key store is replaced in one rename. ZooKeeper's client
 * builds its TLS context from the key store at every new connection, so a rotated certificate is
 * used from the next reconnect on, without a restart; the connection already open keeps the
 * certificate it was made with (a certificate is checked only at the handshake).
 *
 * <p>A pair that does not parse, or whose key is not the certificate's, keeps the key store as it
 * is, is logged once per distinct content and counted ({@link #refusals()}). A key store stops
 * being kept, and is deleted, once its owner says it is no longer wanted (its ZooKeeper client
 * closed). One daemon thread for every key store of the process. Thread-safe.
 */
public final class ZooKeeperKeyStore {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperKeyStore.class);
    /** How often the certificate and key files are read again. */
    public static final Duration CHECK_INTERVAL = Duration.ofSeconds(10);

    private static final List<ZooKeeperKeyStore> KEPT = new CopyOnWriteArrayList<>();
    private static final AtomicLong REFUSALS = new AtomicLong();
    private static ScheduledExecutorService checker;

    private final ZooKeeperTls tls;
    private final Path file;
    private final BooleanSupplier wanted;
    private byte[] certificate;
    private byte[] key;
    private String lastRefusal;

    private ZooKeeperKeyStore(ZooKeeperTls tls, Path file, BooleanSupplier wanted, byte[] certificate, byte[] key) {
        this.tls = tls;
        this.file = file;
        this.wanted = wanted;
        this.certificate = certificate;
        this.key = key;
    }

    /**
     * Writes {@code tls}'s key and chain into a new owner-only file of the temporary directory, and
     * keeps it current while {@code wanted} says so; returns its path.
     */
    public static Path keep(ZooKeeperTls tls, BooleanSupplier wanted) {
        byte[] cert = read(tls.certificate().toPath());
        byte[] key = read(tls.key().toPath());
        Path file;
        try {
            file = Files.createTempFile("lastunit-zookeeper-tls-", ".pem");
        } catch (IOException e) {
            throw new UncheckedIOException("ZooKeeper TLS: cannot create the key store of " + tls.certificate(), e);
        }
        file.toFile().deleteOnExit();
        ZooKeeperKeyStore k = new ZooKeeperKeyStore(tls, file, wanted, cert, key);
        k.write(cert, key);
        KEPT.add(k);
        startChecker();
        return file;
    }

    /** Reads every kept pair again now (what the checker does each interval). */
    public static void checkAll() {
        for (ZooKeeperKeyStore k : KEPT) {
            k.check();
        }
    }

    /** Pairs refused since the process started (they kept the key store as it was). */
    public static long refusals() {
        return REFUSALS.get();
    }

    private static synchronized void startChecker() {
        if (checker == null) {
            checker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "zookeeper-tls-keystore");
                t.setDaemon(true);
                return t;
            });
            checker.scheduleWithFixedDelay(ZooKeeperKeyStore::checkAll, CHECK_INTERVAL.toMillis(),
                    CHECK_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private synchronized void check() {
        if (!wanted.getAsBoolean()) {
            KEPT.remove(this);
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                log.warn("ZooKeeper TLS: cannot delete the key store {}: {}", file, e.toString());
            }
            return;
        }
        byte[] cert;
        byte[] k;
        try {
            cert = read(tls.certificate().toPath());
            k = read(tls.key().toPath());
        } catch (UncheckedIOException e) {
            refuse("cannot read: " + e.getMessage());
            return;
        }
        if (Arrays.equals(cert, certificate) && Arrays.equals(k, key)) {
            return;
        }
        try {
            new ZooKeeperTls(tls.certificate(), tls.key(), tls.ca());
        } catch (IllegalArgumentException e) {
            refuse(e.getMessage());
            return;
        }
        if (!Arrays.equals(cert, read(tls.certificate().toPath())) || !Arrays.equals(k, read(tls.key().toPath()))) {
            return; // changed again while it was checked: the next round takes it
        }
        write(cert, k);
        certificate = cert;
        key = k;
        lastRefusal = null;
        log.info("ZooKeeper TLS: {} changed; its key store {} is rewritten and used from the next connection",
                tls.certificate(), file);
    }

    private void refuse(String why) {
        REFUSALS.incrementAndGet();
        if (!why.equals(lastRefusal)) {
            lastRefusal = why;
            log.warn("ZooKeeper TLS: {} refused, the key store in use is kept: {}", tls.certificate(), why);
        }
    }

    /** The key, a newline, the chain: into a new file beside the key store, then renamed over it. */
    private void write(byte[] cert, byte[] k) {
        try {
            Path next = Files.createTempFile(file.getParent(), "lastunit-zookeeper-tls-", ".next");
            try {
                writeOwnerOnly(next, cert, k);
                Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(next);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("ZooKeeper TLS: cannot write the key store of " + tls.certificate(), e);
        }
    }

    /** Makes {@code file} readable by its owner only, then writes the key, a newline and the chain into it. */
    static void writeOwnerOnly(Path file, byte[] cert, byte[] key) throws IOException {
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException notPosix) {
            // the file system has no POSIX permissions: the temporary directory's own protect it
        }
        byte[] both = new byte[key.length + 1 + cert.length];
        System.arraycopy(key, 0, both, 0, key.length);
        both[key.length] = '\n';
        System.arraycopy(cert, 0, both, key.length + 1, cert.length);
        Files.write(file, both);
    }

    private static byte[] read(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new UncheckedIOException(p + ": " + e.getMessage(), e);
        }
    }
}
