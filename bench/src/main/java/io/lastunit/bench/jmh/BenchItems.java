package io.lastunit.bench.jmh;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/**
 * The catalogue every benchmark uses: one tenant, one region, items {@code item-0} … and the
 * hold settings the lane engine gives an item created with defaults. Items are created with
 * {@link #TOTAL} units so that no measured call can sell one out: at a million reservations a
 * second it would take a quarter of an hour of measurement per item. Unlimited per buyer, so no
 * design runs buyer-usage statements. Pure code, thread-safe.
 */
public final class BenchItems {
    public static final String TENANT = "bench";
    public static final String REGION = "local";
    public static final long TOTAL = 1_000_000_000L;
    /** The lane engine's default hold TTL (Limits.holdTtlDefaultMs); the baselines use the same. */
    public static final long HOLD_TTL_MS = 600_000L;

    private BenchItems() {
    }

    public static String itemId(int i) {
        return "item-" + i;
    }

    /** Item ids 0 … n-1, made once so that calls do not build them. */
    public static String[] itemIds(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("items must be >= 1, got " + n);
        }
        String[] ids = new String[n];
        for (int i = 0; i < n; i++) {
            ids[i] = itemId(i);
        }
        return ids;
    }

    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    });

    /**
     * What a Reserve's idempotency key stands for, computed exactly as the lane engine computes
     * it ({@code LaneEngine.fingerprint}: SHA-256 of item, quantity, buyer, region and TTL, first
     * 16 bytes, base64). The baselines store it in {@code holds.request_fingerprint} as the engine
     * does, so they do the same work per call and write the same bytes.
     */
    public static String fingerprint(String item, int quantity, String buyer, String region, long holdTtlMs) {
        String canonical = item + '\0' + quantity + '\0' + buyer + '\0' + region + '\0' + holdTtlMs;
        byte[] digest = SHA256.get().digest(canonical.getBytes(StandardCharsets.US_ASCII));
        return Base64.getEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 16));
    }
}
