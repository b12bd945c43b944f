package io.lastunit.common.topology;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import io.lastunit.api.topology.v1.ShardInfo;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Rendezvous (highest random weight) hashing: which shard of a cell, in a region, holds the
 * stock of {@code (tenant, item)}. Each shard scores the key; the highest score wins. Removing
 * a shard moves only the keys that were on it, and the order of the shard list does not matter.
 *
 * <p>Score: the first 8 bytes of Guava {@code murmur3_128} (seed 0) over the UTF-8 bytes of
 * {@code tenant 0x00 item 0x00 shardId}, read as a little-endian long and compared unsigned. An
 * equal score goes to the lexicographically smaller shard id.
 *
 * <p>Pure code, no state, thread-safe. Hazard: this function decides where stock lives, and a
 * shard's database is the only place that stock is. Changing a single byte of the score (the
 * hash, the seed, the separator, the encoding, the tie rule) silently re-homes almost every
 * item. {@code PlacementTest} pins concrete picks; a change that breaks them is a data
 * migration, not a refactoring.
 */
public final class Placement {
    private static final HashFunction HASH = Hashing.murmur3_128(0);

    private Placement() {
    }

    /**
     * The shard with the highest score for {@code (tenant, item)}.
     *
     * @param shards the candidate shards (one cell, one region); ids are unique by construction
     * @throws IllegalArgumentException when {@code shards} is empty
     */
    public static ShardInfo pick(String tenant, String item, List<ShardInfo> shards) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("no shards to place tenant=" + tenant + ", item=" + item + " on");
        }
        ShardInfo best = null;
        long bestScore = 0;
        for (ShardInfo shard : shards) {
            long score = score(tenant, item, shard.getShardId());
            if (best == null || beats(score, shard.getShardId(), bestScore, best.getShardId())) {
                best = shard;
                bestScore = score;
            }
        }
        return best;
    }

    /** The score of {@code shardId} for {@code (tenant, item)}. Part of the stable definition. */
    static long score(String tenant, String item, String shardId) {
        return HASH.newHasher()
                .putString(tenant, StandardCharsets.UTF_8)
                .putByte((byte) 0)
                .putString(item, StandardCharsets.UTF_8)
                .putByte((byte) 0)
                .putString(shardId, StandardCharsets.UTF_8)
                .hash()
                .asLong();
    }

    private static boolean beats(long score, String shardId, long bestScore, String bestShardId) {
        int c = Long.compareUnsigned(score, bestScore);
        return c > 0 || (c == 0 && shardId.compareTo(bestShardId) < 0);
    }
}
