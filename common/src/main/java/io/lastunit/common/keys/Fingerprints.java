package io.lastunit.common.keys;

/**
 * 64-bit fingerprints of strings, for memberships that only need to be right when they say
 * "absent": the lane's index of idempotency keys and the router's recently sent keys store
 * eight bytes per key in a {@link LongSet} instead of a String, its bytes and a map node
 * (about 110 bytes, and an object the garbage collector copies until it is promoted).
 *
 * <p>FNV-1a over the UTF-16 units, then murmur3's 64-bit finalizer so that every input bit
 * reaches every output bit. Two different keys share a fingerprint with probability about
 * 2<sup>-64</sup> per pair (for a million keys in one set: about 3 in 10<sup>8</sup>), and keys can be
 * crafted to collide: so "present" is only a hint. Every user confirms a hit where a wrong
 * "present" would matter (the lane reads the hold row; the router only skips a cache).
 * Never returns 0, which {@link LongSet} reserves for empty slots.
 */
public final class Fingerprints {
    private Fingerprints() {
    }

    public static long of(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0, n = s.length(); i < n; i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        h = mix(h ^ s.length());
        return h == 0 ? 1 : h;
    }

    /** Fingerprint of two strings as one key (a separator that cannot occur in either part). */
    public static long of(String a, String b) {
        long h = of(a);
        for (int i = 0, n = b.length(); i < n; i++) {
            h ^= b.charAt(i);
            h *= 0x100000001b3L;
        }
        h = mix(h ^ ((long) b.length() << 32));
        return h == 0 ? 1 : h;
    }

    /** Fingerprint of three strings as one key ({@link #of(String, String)} with a third part). */
    public static long of(String a, String b, String c) {
        long h = of(a, b);
        for (int i = 0, n = c.length(); i < n; i++) {
            h ^= c.charAt(i);
            h *= 0x100000001b3L;
        }
        h = mix(h ^ ((long) c.length() << 40));
        return h == 0 ? 1 : h;
    }

    /** murmur3's fmix64. */
    static long mix(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
