package io.lastunit.common.topology;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import io.lastunit.api.topology.v1.ShardInfo;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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
    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;
    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private Placement() {
    }

    /**
     * The shard with the highest score for {@code (tenant, item)}.
     *
     * <p>Runs on every Reserve, in the router and again in the shard's placement guard, so it
     * computes the scores without Guava's hasher: the key's bytes go once into one buffer, each
     * shard's id is written after them in turn, and {@link #murmur3x64h1} hashes the buffer.
     * {@code PlacementTest} checks that this gives {@link #score}'s values exactly.
     *
     * @param shards the candidate shards (one cell, one region); ids are unique by construction
     * @throws IllegalArgumentException when {@code shards} is empty
     */
    public static ShardInfo pick(String tenant, String item, List<ShardInfo> shards) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("no shards to place tenant=" + tenant + ", item=" + item + " on");
        }
        byte[] buf = new byte[Math.max(64, 3 * (tenant.length() + item.length()) + 2 + 32)];
        int prefix = putUtf8(buf, 0, tenant);
        buf[prefix++] = 0;
        prefix = putUtf8(buf, prefix, item);
        buf[prefix++] = 0;
        ShardInfo best = null;
        long bestScore = 0;
        for (ShardInfo shard : shards) {
            String id = shard.getShardId();
            if (prefix + 3 * id.length() > buf.length) {
                buf = Arrays.copyOf(buf, prefix + 3 * id.length());
            }
            long score = murmur3x64h1(buf, putUtf8(buf, prefix, id));
            if (best == null || beats(score, id, bestScore, best.getShardId())) {
                best = shard;
                bestScore = score;
            }
        }
        return best;
    }

    /**
     * Writes {@code s} as UTF-8 at {@code at} (room for three bytes per char is the caller's), and
     * returns the end. The same bytes as {@code s.getBytes(UTF_8)}: ASCII is copied char by char,
     * anything else goes through {@code getBytes} (which also decides unpaired surrogates).
     */
    private static int putUtf8(byte[] buf, int at, String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                System.arraycopy(b, 0, buf, at, b.length);
                return at + b.length;
            }
            buf[at + i] = (byte) c;
        }
        return at + n;
    }

    /**
     * The first 8 bytes (as a little-endian long) of murmur3 x64 128 with seed 0 over
     * {@code data[0, len)}: what Guava's {@code murmur3_128(0).hashBytes(...).asLong()} returns.
     */
    static long murmur3x64h1(byte[] data, int len) {
        long h1 = 0;
        long h2 = 0;
        int i = 0;
        for (; i + 16 <= len; i += 16) {
            h1 ^= mixK1((long) LE_LONG.get(data, i));
            h1 = Long.rotateLeft(h1, 27);
            h1 += h2;
            h1 = h1 * 5 + 0x52dce729;
            h2 ^= mixK2((long) LE_LONG.get(data, i + 8));
            h2 = Long.rotateLeft(h2, 31);
            h2 += h1;
            h2 = h2 * 5 + 0x38495ab5;
        }
        int rest = len - i;
        if (rest > 0) {
            long k1 = 0;
            long k2 = 0;
            for (int j = rest - 1; j >= 8; j--) {
                k2 = (k2 << 8) | (data[i + j] & 0xffL);
            }
            for (int j = Math.min(rest, 8) - 1; j >= 0; j--) {
                k1 = (k1 << 8) | (data[i + j] & 0xffL);
            }
            h1 ^= mixK1(k1);
            h2 ^= mixK2(k2); // 0 when rest <= 8, and mixK2(0) = 0
        }
        h1 ^= len;
        h2 ^= len;
        h1 += h2;
        h2 += h1;
        h1 = fmix64(h1);
        h2 = fmix64(h2);
        return h1 + h2;
    }

    private static long mixK1(long k1) {
        return Long.rotateLeft(k1 * C1, 31) * C2;
    }

    private static long mixK2(long k2) {
        return Long.rotateLeft(k2 * C2, 33) * C1;
    }

    /**
     * murmur3's finalizer. {@code Fingerprints} has the same function; this copy is kept here on
     * purpose, so that nothing outside this class can change where stock lives.
     */
    private static long fmix64(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
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
