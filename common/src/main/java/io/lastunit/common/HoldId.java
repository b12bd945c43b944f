package io.lastunit.common;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.DrbgParameters;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.UUID;

/**
 * A hold id that carries everything needed to route a call on the hold without a lookup:
 * tenant, item, region and bucket, plus a unique {@link UUID} (version 7: time-ordered, so
 * inserts stay at the right edge of the primary-key index).
 *
 * <p>Wire form: URL-safe base64 (no padding) of
 * {@code [version=1][len][tenant][len][item][len][region][bucket:u16][uuid:16]}, where ids are
 * printable ASCII ({@link Limits} enforces that at the edge), so the longest id is 328
 * characters. Immutable, thread-safe.
 *
 * <p>Hazard: an id is a capability inside its tenant. Whoever holds it may confirm, release or
 * extend the hold, and everything in it but the UUID's 74 random bits is readable or guessable
 * (tenant, item, region, bucket, the millisecond). So those bits come from a CSPRNG: one
 * {@code DRBG} {@link SecureRandom} per thread ({@link #RANDOM}), never {@code ThreadLocalRandom},
 * whose next output anyone can compute from two ids made on the same thread.
 */
public record HoldId(String tenantId, String itemId, String region, int bucketNo, UUID uuid) {
    private static final byte VERSION = 1;
    /** Longest encoded form accepted; longer input is refused before decoding. */
    public static final int ENCODED_LENGTH_MAX = 400;

    public HoldId {
        if (bucketNo < 0 || bucketNo > 0xFFFF) {
            throw new IllegalArgumentException("bucketNo out of range: " + bucketNo);
        }
    }

    /** A fresh id with a version-7 UUID built from {@code epochMillis} and random bits. */
    public static HoldId create(String tenantId, String itemId, String region, int bucketNo, long epochMillis) {
        return new HoldId(tenantId, itemId, region, bucketNo, uuidV7(epochMillis));
    }

    /**
     * A version-7 UUID (RFC 9562): 48 bits of {@code epochMillis}, the version, 12 random bits,
     * the variant, 62 random bits. The 74 random bits come from this thread's {@link RandomBits}.
     */
    static UUID uuidV7(long epochMillis) {
        RandomBits bits = RANDOM.get();
        byte[] b = bits.bytes;
        int at = bits.next();
        long randA = ((b[at] & 0xFFL) << 8 | (b[at + 1] & 0xFFL)) & 0x0FFFL;
        long randB = 0;
        for (int i = at + 2; i < at + RandomBits.ID_LENGTH; i++) {
            randB = randB << 8 | (b[i] & 0xFFL);
        }
        long msb = (epochMillis << 16) | 0x7000L | randA;
        long lsb = (randB & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }

    /** Each thread's own generator: no lock shared between lanes, no system call per id. */
    private static final ThreadLocal<RandomBits> RANDOM = ThreadLocal.withInitial(RandomBits::new);

    /**
     * A SHA-256 Hash_DRBG (NIST SP 800-90A) at 256-bit strength without prediction resistance,
     * and the bytes it drew for the next {@link #IDS_PER_DRAW} ids. The JDK instantiates each one
     * from its process-wide DRBG, which it seeds once from the platform's seed source, so making
     * one costs microseconds, and no id ever waits for {@code /dev/random} (the blocking
     * {@code getInstanceStrong()} is not used). One draw serves several ids because a draw's
     * fixed cost (the DRBG's state update, several SHA-256 blocks) is most of the cost of one
     * id's 10 bytes; bytes drawn and not yet used are no more exposed than the DRBG's own state
     * beside them. Confined to its thread; one per thread that makes ids (lanes, benchmark
     * callers).
     */
    private static final class RandomBits {
        /** Bytes per id: 16 bits for the 12 of rand_a, 64 for the 62 of rand_b. */
        static final int ID_LENGTH = 10;
        /** Ids served by one draw from the DRBG. */
        static final int IDS_PER_DRAW = 32;

        private final SecureRandom random;
        final byte[] bytes = new byte[ID_LENGTH * IDS_PER_DRAW];
        private int used = bytes.length;

        RandomBits() {
            try {
                random = SecureRandom.getInstance("DRBG",
                        DrbgParameters.instantiation(256, DrbgParameters.Capability.NONE, null));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("this JVM offers no DRBG SecureRandom for hold ids", e);
            }
        }

        /** The offset in {@link #bytes} of the next id's {@link #ID_LENGTH} fresh bytes, each used once. */
        int next() {
            if (used == bytes.length) {
                random.nextBytes(bytes);
                used = 0;
            }
            int at = used;
            used += ID_LENGTH;
            return at;
        }
    }

    public String encode() {
        byte[] t = tenantId.getBytes(StandardCharsets.US_ASCII);
        byte[] i = itemId.getBytes(StandardCharsets.US_ASCII);
        byte[] g = region.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer buf = ByteBuffer.allocate(1 + 1 + t.length + 1 + i.length + 1 + g.length + 2 + 16);
        buf.put(VERSION);
        putPart(buf, t);
        putPart(buf, i);
        putPart(buf, g);
        buf.putShort((short) bucketNo);
        buf.putLong(uuid.getMostSignificantBits());
        buf.putLong(uuid.getLeastSignificantBits());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(buf.array());
    }

    private static void putPart(ByteBuffer buf, byte[] part) {
        if (part.length > 255) {
            throw new IllegalArgumentException("id part longer than 255 bytes");
        }
        buf.put((byte) part.length);
        buf.put(part);
    }

    /**
     * Parses a hold id, or fails with INVALID_FIELD naming {@code field}. Never throws
     * anything else, whatever the input.
     */
    public static HoldId decode(String encoded, String field) {
        if (encoded == null || encoded.isEmpty()) {
            throw Failure.invalid(field, "is required");
        }
        if (encoded.length() > ENCODED_LENGTH_MAX) {
            throw Failure.invalid(field, "is " + encoded.length() + " characters, at most " + ENCODED_LENGTH_MAX);
        }
        try {
            ByteBuffer buf = ByteBuffer.wrap(Base64.getUrlDecoder().decode(encoded));
            if (buf.get() != VERSION) {
                throw Failure.invalid(field, "unknown hold id version");
            }
            String tenant = getPart(buf);
            String item = getPart(buf);
            String region = getPart(buf);
            int bucket = buf.getShort() & 0xFFFF;
            UUID uuid = new UUID(buf.getLong(), buf.getLong());
            if (buf.hasRemaining() || tenant.isEmpty() || item.isEmpty() || region.isEmpty()) {
                throw Failure.invalid(field, "is not a lastunit hold id");
            }
            return new HoldId(tenant, item, region, bucket, uuid);
        } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
            throw Failure.invalid(field, "is not a lastunit hold id");
        }
    }

    private static String getPart(ByteBuffer buf) {
        int len = buf.get() & 0xFF;
        byte[] b = new byte[len];
        buf.get(b);
        for (byte c : b) {
            if (c < 0x21 || c > 0x7E) {
                throw new IllegalArgumentException("not printable ASCII");
            }
        }
        return new String(b, StandardCharsets.US_ASCII);
    }

    @Override
    public String toString() {
        return encode();
    }
}
