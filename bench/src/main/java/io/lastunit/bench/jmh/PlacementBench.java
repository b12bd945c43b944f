package io.lastunit.bench.jmh;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Placement;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Placing one {@code (tenant, item)} on its shard, which the router and then the shard's
 * placement guard do for every Reserve: {@link Placement#pick} beside {@link #guavaHasher}, the
 * same rendezvous choice scored through Guava's streaming hasher (what {@code pick} did before it
 * hashed its own buffer). Both give the same shard for every key ({@code PlacementTest}); the
 * baseline runs in the same JMH run, on the same keys and shard lists. Not part of
 * {@code bench/run}'s standard suite (no database, no network): a microbenchmark of one step.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'PlacementBench' -wi 3 -w 2s -i 5 -r 2s -f 1 -t 1 -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PlacementBench {
    private static final HashFunction HASH = Hashing.murmur3_128(0);
    private static final int KEYS = 1024;

    /** Shards of one cell in one region: the local platform runs 2, a large cell more. */
    @Param({"2", "8"})
    public int shards;

    private List<ShardInfo> candidates;
    private final String[] items = new String[KEYS];
    private int next;

    @Setup
    public void setUp() {
        candidates = new ArrayList<>();
        for (int i = 1; i <= shards; i++) {
            candidates.add(ShardInfo.newBuilder().setShardId("shard-" + i).setCell("shared").setRegion("local")
                    .setAddress("127.0.0.1:" + (9000 + i)).build());
        }
        for (int i = 0; i < KEYS; i++) {
            items[i] = BenchItems.itemId(i);
        }
    }

    @Benchmark
    public ShardInfo pick() {
        return Placement.pick("bench", items[next++ & (KEYS - 1)], candidates);
    }

    @Benchmark
    public ShardInfo guavaHasher() {
        String item = items[next++ & (KEYS - 1)];
        ShardInfo best = null;
        long bestScore = 0;
        for (ShardInfo shard : candidates) {
            long score = HASH.newHasher()
                    .putString("bench", StandardCharsets.UTF_8).putByte((byte) 0)
                    .putString(item, StandardCharsets.UTF_8).putByte((byte) 0)
                    .putString(shard.getShardId(), StandardCharsets.UTF_8)
                    .hash().asLong();
            int c = Long.compareUnsigned(score, bestScore);
            if (best == null || c > 0 || (c == 0 && shard.getShardId().compareTo(best.getShardId()) < 0)) {
                best = shard;
                bestScore = score;
            }
        }
        return best;
    }
}
