package io.lastunit.common.tls;

import io.lastunit.common.reload.ReloadingFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one PEM file (key, then certificate chain) that ZooKeeper's client reads as its key store,
 * kept equal to a {@link ZooKeeperTls}'s certificate and key files ({@link ReloadingFiles}): every
 * {@link #CHECK_INTERVAL} the two files are read again, and when they changed and still make a
 * valid pair ({@link ZooKeeperTls#checkPair}) the key store is replaced in one rename. ZooKeeper's
 * client builds its TLS context from the key store at every new connection, so a rotated
 * certificate is used from the next reconnect on, without a restart; the connection already open
 * keeps the certificate it was made with (a certificate is checked only at the handshake).
 *
 * <p>A pair that does not fit keeps the key store as it is, logged once per distinct content and
 * counted ({@link #refusals()}). A key store stops being kept, and is deleted, once its owner says
 * it is no longer wanted (its ZooKeeper client closed). One daemon thread for every key store of
 * the process. Thread-safe.
 */
public final class ZooKeeperKeyStore {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperKeyStore.class);
    /** How often the certificate and key files are read again. */
    public static final Duration CHECK_INTERVAL = Duration.ofSeconds(10);

    /** One key store kept: its file, the reader of its two source files, and whether it is still wanted. */
    private record Kept(Path file, ReloadingFiles<byte[][]> sources, BooleanSupplier wanted) {
    }

    private static final List<Kept> KEPT = new CopyOnWriteArrayList<>();
    private static ScheduledExecutorService checker;

    private ZooKeeperKeyStore() {
    }

    /**
     * Writes {@code tls}'s key and chain into a new owner-only file of the temporary directory, and
     * keeps it current while {@code wanted} says so; returns its path.
     *
     * @throws IllegalArgumentException when the files cannot be read or do not make a pair
     */
    public static Path keep(ZooKeeperTls tls, BooleanSupplier wanted) {
        Path file;
        try {
            file = Files.createTempFile("lastunit-zookeeper-tls-", ".pem");
        } catch (IOException e) {
            throw new UncheckedIOException("ZooKeeper TLS: cannot create the key store of " + tls.certificate(), e);
        }
        file.toFile().deleteOnExit();
        ReloadingFiles<byte[][]> sources = ReloadingFiles.readOnce("ZooKeeper TLS key store of " + tls.certificate(),
                List.of(tls.certificate().toPath(), tls.key().toPath()), TlsCredentials.FILE_BYTES_MAX,
                pair -> {
                    ZooKeeperTls.checkPair(tls.certificate(), pair[0], tls.key(), pair[1], Instant.now());
                    return pair;
                },
                pair -> replace(file, pair[0], pair[1]));
        KEPT.add(new Kept(file, sources, wanted));
        startChecker();
        return file;
    }

    /** Reads every kept pair again now (what the checker does each interval); drops those no longer wanted. */
    public static void checkAll() {
        for (Kept k : KEPT) {
            if (!k.wanted().getAsBoolean()) {
                KEPT.remove(k);
                try {
                    Files.deleteIfExists(k.file());
                } catch (IOException e) {
                    log.warn("ZooKeeper TLS: cannot delete the key store {}: {}", k.file(), e.toString());
                }
            } else {
                k.sources().reloadNow();
            }
        }
    }

    /** Distinct pairs refused among the key stores kept now (each kept the key store as it was). */
    public static long refusals() {
        return KEPT.stream().mapToLong(k -> k.sources().reloadFailures()).sum();
    }

    private static synchronized void startChecker() {
        if (checker == null) {
            checker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "zookeeper-tls-keystore");
                t.setDaemon(true);
                return t;
            });
            checker.scheduleWithFixedDelay(() -> {
                try {
                    checkAll();
                } catch (RuntimeException e) {
                    log.warn("ZooKeeper TLS: checking the key stores failed", e);
                }
            }, CHECK_INTERVAL.toMillis(), CHECK_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** The pair into a new file beside the key store, renamed over it; a failure refuses the pair (tried again next read). */
    private static void replace(Path file, byte[] cert, byte[] key) {
        try {
            Path next = Files.createTempFile(file.getParent(), "lastunit-zookeeper-tls-", ".next");
            try {
                writeOwnerOnly(next, cert, key);
                Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(next);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot write the key store " + file + ": " + e, e);
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
}
