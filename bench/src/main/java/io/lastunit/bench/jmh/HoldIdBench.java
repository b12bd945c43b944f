package io.lastunit.bench.jmh;

import io.lastunit.common.HoldId;
import java.security.SecureRandom;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Making one hold id, which a lane does for every new hold: {@link HoldId#create} (its 74 random
 * bits from a DRBG {@code SecureRandom} of the calling thread) beside {@link #threadLocalRandom},
 * the generator it replaced (two {@code ThreadLocalRandom} draws, predictable from earlier ids),
 * and {@link #sharedSecureRandom}, the obvious alternative: one {@code new SecureRandom()} shared
 * by every thread (NativePRNG on Linux, a lock around a buffer of {@code /dev/urandom}). Run it
 * with {@code -t 2} too, to see what sharing costs when lanes make ids at once. Not part of
 * {@code bench/run}'s standard suite (no database, no network): a microbenchmark of one step.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'HoldIdBench' -wi 3 -w 2s -i 5 -r 2s -f 1 -t 1
 * java -jar bench/target/benchmarks.jar 'HoldIdBench' -wi 3 -w 2s -i 5 -r 2s -f 1 -t 2
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HoldIdBench {
    private static final long MILLIS = 1_767_225_600_000L;
    private static final SecureRandom SHARED = new SecureRandom();

    private final String item = BenchItems.itemId(7);

    @Benchmark
    public HoldId create() {
        return HoldId.create("bench", item, "local", 0, MILLIS);
    }

    /** The generator {@code HoldId} used before: kept here only as the baseline. */
    @Benchmark
    public HoldId threadLocalRandom() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long msb = (MILLIS << 16) | 0x7000L | (r.nextLong() & 0x0FFFL);
        long lsb = (r.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new HoldId("bench", item, "local", 0, new UUID(msb, lsb));
    }

    /** The same 10 bytes per id as {@code create}, from one SecureRandom every thread shares. */
    @Benchmark
    public HoldId sharedSecureRandom() {
        byte[] b = new byte[10];
        SHARED.nextBytes(b);
        long randA = ((b[0] & 0xFFL) << 8 | (b[1] & 0xFFL)) & 0x0FFFL;
        long randB = 0;
        for (int i = 2; i < 10; i++) {
            randB = randB << 8 | (b[i] & 0xFFL);
        }
        long msb = (MILLIS << 16) | 0x7000L | randA;
        long lsb = (randB & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new HoldId("bench", item, "local", 0, new UUID(msb, lsb));
    }
}
