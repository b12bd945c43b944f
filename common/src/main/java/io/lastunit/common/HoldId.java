package io.lastunit.common;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A hold id that carries everything needed to route a call on the hold without a lookup:
 * tenant, item, region and bucket, plus a unique {@link UUID} (version 7: time-ordered, so
 * inserts stay at the right edge of the primary-key index).
 *
 * <p>Wire form: URL-safe base64 (no padding) of
 * {@code [version=1][len][tenant][len][item][len][region][bucket:u16][uuid:16]}, where ids are
 * printable ASCII ({@link Limits} enforces that at the edge), so the longest id is 328
 * characters. Pure code, immutable, thread-safe.
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

    static UUID uuidV7(long epochMillis) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long msb = (epochMillis << 16) | 0x7000L | (r.nextLong() & 0x0FFFL);
        long lsb = (r.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
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
