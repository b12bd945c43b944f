package io.lastunit.common;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The bounds every request is held to at the edge (DESIGN §12). Built once from
 * configuration and checked there: a bad value fails start-up with every problem named,
 * never silently clamped. Immutable.
 *
 * @param tenantIdLengthMax   longest tenant id, in characters (printable ASCII)
 * @param itemIdLengthMax     longest item id
 * @param keyLengthMax        longest idempotency key, restock id, buyer id and order ref
 * @param regionLengthMax     longest region name
 * @param reserveQuantityMax  most units one Reserve may ask for
 * @param itemTotalMax        most units an item may have
 * @param perBuyerLimitMax    highest per-buyer limit an item may set
 * @param holdTtlMinMs        shortest hold TTL a request may ask for
 * @param holdTtlMaxMs        longest hold TTL (and longest extend_by) an item may set
 * @param holdTtlDefaultMs    the hold TTL of an item that does not set one
 * @param bucketCountMax      most escrow buckets per item in one region
 * @param regions             the regions this deployment serves; anything else is refused
 */
public record Limits(
        int tenantIdLengthMax,
        int itemIdLengthMax,
        int keyLengthMax,
        int regionLengthMax,
        int reserveQuantityMax,
        long itemTotalMax,
        int perBuyerLimitMax,
        long holdTtlMinMs,
        long holdTtlMaxMs,
        long holdTtlDefaultMs,
        int bucketCountMax,
        Set<String> regions) {

    /**
     * Most Reserves in one {@code ShardService.ReserveBatch} call: what a shard node accepts and
     * the highest {@code reserve-batch-max} a router may be given. A protocol bound, not a setting.
     */
    public static final int RESERVE_BATCH_MAX = 1_024;

    /** The platform defaults, serving the given regions. */
    public static Limits defaults(Set<String> regions) {
        return new Limits(64, 128, 128, 32, 100, 1_000_000_000L, 100_000,
                1_000L, 86_400_000L, 600_000L, 64, regions);
    }

    public Limits {
        regions = Set.copyOf(regions);
        List<String> problems = new ArrayList<>();
        // Hold ids store each id with a one-byte length.
        checkRange(problems, "tenantIdLengthMax", tenantIdLengthMax, 1, 255);
        checkRange(problems, "itemIdLengthMax", itemIdLengthMax, 1, 255);
        checkRange(problems, "keyLengthMax", keyLengthMax, 1, 1024);
        checkRange(problems, "regionLengthMax", regionLengthMax, 1, 255);
        checkRange(problems, "reserveQuantityMax", reserveQuantityMax, 1, 1_000_000);
        checkRange(problems, "itemTotalMax", itemTotalMax, 1, Long.MAX_VALUE / 4);
        checkRange(problems, "perBuyerLimitMax", perBuyerLimitMax, 1, Integer.MAX_VALUE);
        checkRange(problems, "holdTtlMinMs", holdTtlMinMs, 1, holdTtlMaxMs);
        checkRange(problems, "holdTtlDefaultMs", holdTtlDefaultMs, holdTtlMinMs, holdTtlMaxMs);
        checkRange(problems, "holdTtlMaxMs", holdTtlMaxMs, 1, 31L * 86_400_000L);
        checkRange(problems, "bucketCountMax", bucketCountMax, 1, 1024);
        // A hold id carries tenant, item and region: keep the longest within HoldId's bound.
        int holdIdBytes = 1 + 1 + tenantIdLengthMax + 1 + itemIdLengthMax + 1 + regionLengthMax + 2 + 16;
        int holdIdChars = (holdIdBytes * 4 + 2) / 3;
        if (holdIdChars > HoldId.ENCODED_LENGTH_MAX) {
            problems.add("tenantIdLengthMax + itemIdLengthMax + regionLengthMax = "
                    + (tenantIdLengthMax + itemIdLengthMax + regionLengthMax) + " makes hold ids of " + holdIdChars
                    + " characters, over " + HoldId.ENCODED_LENGTH_MAX);
        }
        if (regions.isEmpty()) {
            problems.add("regions: at least one region is required");
        }
        for (String r : regions) {
            if (!isId(r, regionLengthMax)) {
                problems.add("regions: '" + r + "' is not 1.." + regionLengthMax + " printable ASCII characters");
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid limits: " + String.join("; ", problems));
        }
    }

    private static void checkRange(List<String> problems, String name, long value, long min, long max) {
        if (value < min || value > max) {
            problems.add(name + "=" + value + " is outside [" + min + ", " + max + "]");
        }
    }

    /** True for 1..max printable ASCII characters (no spaces, no control characters). */
    public static boolean isId(String s, int max) {
        if (s == null || s.isEmpty() || s.length() > max) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return false;
            }
        }
        return true;
    }
}
