package io.lastunit.common.reload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * A value made from files (credentials, grants) and made again when they change, without a
 * restart: every interval the files are read (each at most {@code bytesMax}); when their bytes
 * differ from those in use, {@link Parser} makes the value from all of them at once and
 * {@link Taker} puts it in force. A content that does not parse or is refused keeps the value in
 * use, is logged once per distinct content and counted ({@link #reloadFailures()}); the next read
 * tries again. The first read must succeed. Thread-safe.
 *
 * <p>Hazard: files are read one after another, not as one snapshot; a change caught between two
 * files is seen as a content of its own, so the parser must refuse a pair that does not belong
 * together (a certificate and another key), and write files in one rename each.
 *
 * @param <T> the value
 */
public final class ReloadingFiles<T> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReloadingFiles.class);

    /** Makes the value from the files' contents (in the order given), or refuses them naming why. */
    @FunctionalInterface
    public interface Parser<T> {
        T parse(byte[][] contents);
    }

    /** Puts a value in force (at the first read and at each change taken); may refuse it with IllegalArgumentException. */
    @FunctionalInterface
    public interface Taker<T> {
        void take(T value);
    }

    private final String what;
    private final List<Path> files;
    private final long bytesMax;
    private final Parser<T> parser;
    private final Taker<T> taker;
    private final AtomicLong reloads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private ScheduledExecutorService reader;
    private volatile T current;
    private volatile String lastFailure;
    private byte[][] currentBytes;
    private byte[][] lastFailedBytes;

    private ReloadingFiles(String what, List<Path> files, long bytesMax, Parser<T> parser, Taker<T> taker) {
        this.what = what;
        this.files = List.copyOf(files);
        this.bytesMax = bytesMax;
        this.parser = parser;
        this.taker = taker;
    }

    /**
     * Reads the files once, and again only on {@link #reloadNow}: holds no thread.
     *
     * @param what names the value in log lines ("TLS credentials of …")
     * @throws IllegalArgumentException naming the problem when the first read fails
     */
    public static <T> ReloadingFiles<T> readOnce(String what, List<Path> files, long bytesMax, Parser<T> parser,
                                                 Taker<T> taker) {
        ReloadingFiles<T> r = new ReloadingFiles<>(what, files, bytesMax, parser, taker);
        byte[][] bytes = r.read();
        T first = parser.parse(bytes);
        taker.take(first);
        r.current = first;
        r.currentBytes = bytes;
        return r;
    }

    /** {@link #readOnce}, then a read every {@code interval} on a daemon thread of its own. */
    public static <T> ReloadingFiles<T> watch(String what, List<Path> files, long bytesMax, Duration interval,
                                              Parser<T> parser, Taker<T> taker) {
        ReloadingFiles<T> r = readOnce(what, files, bytesMax, parser, taker);
        r.reader = Executors.newSingleThreadScheduledExecutor(t -> {
            Thread th = new Thread(t, "reload-" + files.get(0).getFileName());
            th.setDaemon(true);
            return th;
        });
        long ms = interval.toMillis();
        r.reader.scheduleWithFixedDelay(r::reloadQuietly, ms, ms, TimeUnit.MILLISECONDS);
        return r;
    }

    /** The value in force. */
    public T current() {
        return current;
    }

    /** Values taken since the first read. */
    public long reloads() {
        return reloads.get();
    }

    /** Distinct contents refused. */
    public long reloadFailures() {
        return failures.get();
    }

    /** Why the latest read was refused, or empty when it was not. */
    public Optional<String> lastFailure() {
        return Optional.ofNullable(lastFailure);
    }

    /**
     * Reads the files now and takes a changed, valid content.
     *
     * @return true when a new value was taken
     */
    public synchronized boolean reloadNow() {
        byte[][] bytes;
        try {
            bytes = read();
        } catch (IllegalArgumentException e) {
            fail(null, e.getMessage());
            return false;
        }
        if (Arrays.deepEquals(bytes, currentBytes)) {
            return false;
        }
        T next;
        try {
            next = parser.parse(bytes);
            taker.take(next);
        } catch (IllegalArgumentException e) {
            fail(bytes, e.getMessage());
            return false;
        }
        current = next;
        currentBytes = bytes;
        lastFailure = null;
        lastFailedBytes = null;
        reloads.incrementAndGet();
        log.info("{} reloaded from {}", what, files);
        return true;
    }

    private void fail(byte[][] bytes, String why) {
        boolean repeat = bytes != null && Arrays.deepEquals(bytes, lastFailedBytes);
        lastFailedBytes = bytes;
        lastFailure = why;
        if (!repeat) {
            failures.incrementAndGet();
            log.warn("{} not reloaded, the ones in use stay: {}", what, why);
        }
    }

    private void reloadQuietly() {
        try {
            reloadNow();
        } catch (RuntimeException e) {
            log.warn("{}: reload failed", what, e);
        }
    }

    private byte[][] read() {
        byte[][] bytes = new byte[files.size()][];
        for (int i = 0; i < bytes.length; i++) {
            Path f = files.get(i);
            try {
                long size = Files.size(f);
                if (size > bytesMax) {
                    throw new IllegalArgumentException(f + " has " + size + " bytes, more than " + bytesMax);
                }
                bytes[i] = Files.readAllBytes(f);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read " + f + ": " + e, e);
            }
        }
        return bytes;
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.shutdownNow();
        }
    }
}
