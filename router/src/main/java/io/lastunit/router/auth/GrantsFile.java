package io.lastunit.router.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The router's token grants read from a file, one grant a line ({@code <sha256-hex>:<name>:<tenants>[:admin]};
 * blank lines and lines starting with {@code #} are skipped), and read again every interval: a
 * grant added or removed takes effect without a restart. A new content is taken only whole and
 * valid — at most {@value #BYTES_MAX} bytes and {@value #GRANTS_MAX} grants, every line a grant
 * (named by line number when not), no repeated digest, at least one grant; otherwise the grants in
 * force stay, the problem is logged once per distinct content and counted
 * ({@link #reloadFailures()}). The first read must succeed. Thread-safe.
 *
 * <p>Hazard: a removed grant stops admitting new calls at the next read; calls already admitted
 * run to their end.
 */
public final class GrantsFile implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(GrantsFile.class);
    /** A larger file is refused: 10,000 grants of about 100 bytes fit four times over. */
    public static final int BYTES_MAX = 4 << 20;
    public static final int GRANTS_MAX = 10_000;

    private final Path file;
    private final ScheduledExecutorService reader;
    private final AtomicLong reloads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile Authenticator current;
    private volatile int grantCount;
    private volatile String lastFailure;
    private byte[] currentBytes;
    private byte[] lastFailedBytes;

    private GrantsFile(Path file) {
        this.file = file;
        this.reader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "grants-reload");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Reads {@code file} and reads it again every {@code interval}.
     *
     * @throws IllegalArgumentException naming the file and the problem when the first read fails
     */
    public static GrantsFile watch(Path file, Duration interval) {
        GrantsFile g = new GrantsFile(file);
        try {
            byte[] bytes = read(file);
            g.take(bytes, parse(file, bytes));
        } catch (IllegalArgumentException e) {
            g.reader.shutdownNow();
            throw e;
        }
        g.reader.scheduleWithFixedDelay(g::reloadQuietly, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return g;
    }

    /** The grants in force. */
    public Authenticator current() {
        return current;
    }

    public int grantCount() {
        return grantCount;
    }

    /** New grants taken since the first read. */
    public long reloads() {
        return reloads.get();
    }

    /** Distinct contents of the file refused. */
    public long reloadFailures() {
        return failures.get();
    }

    /** Why the latest read was refused, or empty when it was not. */
    public Optional<String> lastFailure() {
        return Optional.ofNullable(lastFailure);
    }

    /**
     * Reads the file now and takes its grants when they changed and are valid.
     *
     * @return true when new grants were taken
     */
    public synchronized boolean reloadNow() {
        byte[] bytes;
        try {
            bytes = read(file);
        } catch (IllegalArgumentException e) {
            fail(null, e.getMessage());
            return false;
        }
        if (Arrays.equals(bytes, currentBytes)) {
            return false;
        }
        List<String> grants;
        Authenticator next;
        try {
            grants = parse(file, bytes);
            next = Authenticator.fromGrants(grants);
        } catch (IllegalArgumentException e) {
            fail(bytes, e.getMessage().startsWith(file.toString()) ? e.getMessage() : file + ": " + e.getMessage());
            return false;
        }
        current = next;
        grantCount = grants.size();
        currentBytes = bytes;
        lastFailure = null;
        lastFailedBytes = null;
        reloads.incrementAndGet();
        log.info("token grants reloaded from {}: {} grants", file, grants.size());
        return true;
    }

    private void take(byte[] bytes, List<String> grants) {
        try {
            current = Authenticator.fromGrants(grants);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
        grantCount = grants.size();
        currentBytes = bytes;
    }

    private void fail(byte[] bytes, String why) {
        boolean repeat = bytes != null && Arrays.equals(bytes, lastFailedBytes);
        lastFailedBytes = bytes;
        lastFailure = why;
        if (!repeat) {
            failures.incrementAndGet();
            log.warn("token grants not reloaded, the {} in force stay: {}", grantCount, why);
        }
    }

    private void reloadQuietly() {
        try {
            reloadNow();
        } catch (RuntimeException e) {
            log.warn("token grants reload failed", e);
        }
    }

    private static byte[] read(Path file) {
        try {
            long size = Files.size(file);
            if (size > BYTES_MAX) {
                throw new IllegalArgumentException(file + " has " + size + " bytes, more than " + BYTES_MAX);
            }
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + file + ": " + e, e);
        }
    }

    /** The grants of the file's lines; every non-blank, non-comment line is one (grant #i is line i+1's). */
    static List<String> parse(Path file, byte[] bytes) {
        List<String> grants = new ArrayList<>();
        String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (grants.size() == GRANTS_MAX) {
                throw new IllegalArgumentException(file + " has more than " + GRANTS_MAX + " grants");
            }
            try {
                Authenticator.fromGrants(List.of(line));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": "
                        + e.getMessage().replace("token grant #0", "the grant"), e);
            }
            grants.add(line);
        }
        if (grants.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no grant: no caller could authenticate");
        }
        return grants;
    }

    @Override
    public void close() {
        reader.shutdownNow();
    }
}
