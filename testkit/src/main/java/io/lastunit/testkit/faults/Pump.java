package io.lastunit.testkit.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Moves the bytes of one direction of one proxied connection: reads a chunk, applies the toxics
 * in force at that moment (waits out a blackhole, sleeps the latency, paces to the throttle), writes
 * it on. Runs on the calling thread until the source ends or fails.
 *
 * <p>Owns its buffer; not thread-safe, one pump per thread. A throttled chunk is written in slices of
 * at most {@value #THROTTLE_SLICES_PER_SECOND}ths of a second's worth, each preceded by its sleep,
 * so a sender of N bytes at R bytes/s takes at least N/R and a cleared throttle takes effect within
 * one slice.
 *
 * <p>Hazard: the toxics are checked just before each write, not during it; a slice already being
 * written when a blackhole starts still arrives.
 */
final class Pump {
    /** Bytes read from the source at once. */
    static final int BUFFER_BYTES = 16 * 1024;

    /** A throttled direction writes at most this many slices a second (so sleeps of at most 50 ms). */
    static final int THROTTLE_SLICES_PER_SECOND = 20;

    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private final ProxyConnection connection;
    private final InputStream from;
    private final OutputStream to;
    private final Toxics toxics;
    private final LongAdder bytes;
    private final byte[] buffer = new byte[BUFFER_BYTES];

    Pump(ProxyConnection connection, InputStream from, OutputStream to, Toxics toxics, LongAdder bytes) {
        this.connection = connection;
        this.from = from;
        this.to = to;
        this.toxics = toxics;
        this.bytes = bytes;
    }

    /** Forwards until the source ends (then half-closes the target) or anything fails (then resets the connection). */
    void run(Runnable onEnd) {
        try {
            int n;
            while ((n = from.read(buffer)) >= 0) {
                forward(n);
            }
            // End of stream crosses a blackhole no sooner than bytes do, as a FIN would not cross a partition.
            toxics.awaitFlowing();
            onEnd.run();
        } catch (IOException e) {
            connection.reset();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            connection.reset();
        }
    }

    private void forward(int n) throws IOException, InterruptedException {
        Toxics.Settings toxic = toxics.awaitFlowing();
        sleepAtLeast(latencyNanos(toxic));
        int offset = 0;
        while (offset < n) {
            toxic = toxics.current();
            int length = n - offset;
            if (toxic.bytesPerSecond() > 0) {
                length = Math.min(length, sliceBytes(toxic.bytesPerSecond()));
                sleepAtLeast(length * NANOS_PER_SECOND / toxic.bytesPerSecond());
            }
            toxics.awaitFlowing();
            to.write(buffer, offset, length);
            to.flush();
            bytes.add(length);
            offset += length;
        }
    }

    private static long latencyNanos(Toxics.Settings toxic) {
        long jitter = toxic.jitterNanos() > 0 ? ThreadLocalRandom.current().nextLong(toxic.jitterNanos() + 1) : 0;
        return toxic.latencyNanos() + jitter;
    }

    private static int sliceBytes(long bytesPerSecond) {
        return (int) Math.max(1, Math.min(BUFFER_BYTES, bytesPerSecond / THROTTLE_SLICES_PER_SECOND));
    }

    /** Sleeps at least {@code nanos} by {@link System#nanoTime()}, so a test's lower bound holds exactly. */
    private static void sleepAtLeast(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }
}
