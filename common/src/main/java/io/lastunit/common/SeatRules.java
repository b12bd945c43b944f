package io.lastunit.common;

import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.Seat;
import io.lastunit.api.inventory.v1.SeatMap;
import io.lastunit.api.inventory.v1.SeatMode;
import io.lastunit.api.inventory.v1.SeatRow;
import io.lastunit.api.inventory.v1.SeatSection;
import io.lastunit.api.inventory.v1.SeatSelection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The shape of seat maps and seat selections (docs/seats.md), checked at the edge by
 * {@link RequestValidator} on routers and shard nodes alike: sizes, ids, duplicates, the fields a
 * mode needs. What depends on the item's own map (an unknown seat, a run longer than any row) is
 * the shard's to check. Fails with INVALID_FIELD naming the first bad field. Pure, thread-safe.
 */
public final class SeatRules {
    /** Most seats one item may have (max_item_seats). */
    public static final int ITEM_SEATS_MAX = 100_000;
    /** Most seats in one row. */
    public static final int ROW_SEATS_MAX = 10_000;
    /** Longest seat, row, section id and category. */
    public static final int SEAT_ID_LENGTH_MAX = 32;
    /** Longest prefix of numbered seats' ids. */
    public static final int SEAT_PREFIX_LENGTH_MAX = 16;
    /** Most seats one SetSeatsOnSale names. */
    public static final int SET_SEATS_MAX = 10_000;
    /** Most distinct categories in one item's map (the shard keeps a bitset per category). */
    public static final int CATEGORIES_MAX = 256;
    /** Highest order and rank. */
    public static final int ORDER_MAX = 1_000_000;

    private SeatRules() {
    }

    /** The seats of a map, as {@link #check} counts them. */
    public static int seatCount(SeatMap map) {
        int n = 0;
        for (SeatSection s : map.getSectionsList()) {
            for (SeatRow r : s.getRowsList()) {
                n += r.getSeatsCount() > 0 ? r.getSeatsCount() : r.getCount();
            }
        }
        return n;
    }

    /** The id of numbered seat {@code number} of row {@code r}. */
    public static String numberedId(SeatRow r, int number) {
        return r.getSeatPrefix() + number;
    }

    /**
     * A seat map's shape, for CreateItem ({@code field} = "seat_map") or Restock: at least one seat,
     * at most {@link #ITEM_SEATS_MAX}; sections, rows and seats with valid, unique ids; orders unique
     * within a row; numbered rows exclusive of listed seats. Returns the number of seats.
     */
    public static int check(String field, SeatMap map) {
        if (map.getSectionsCount() == 0) {
            throw Failure.invalid(field, "has no sections; a SEATED item needs at least one seat");
        }
        Set<String> sections = new HashSet<>();
        Set<String> seatIds = new HashSet<>();
        Set<String> categories = new HashSet<>();
        long seats = 0;
        for (SeatSection s : map.getSectionsList()) {
            seatId(field + ".sections.section_id", s.getSectionId());
            if (!sections.add(s.getSectionId())) {
                throw Failure.invalid(field + ".sections.section_id", "'" + s.getSectionId() + "' appears twice");
            }
            if (s.getRowsCount() == 0) {
                throw Failure.invalid(field + ".sections.rows", "section '" + s.getSectionId() + "' has no rows");
            }
            Set<String> rows = new HashSet<>();
            for (SeatRow r : s.getRowsList()) {
                String rf = field + ".sections.rows";
                seatId(rf + ".row_id", r.getRowId());
                if (!rows.add(r.getRowId())) {
                    throw Failure.invalid(rf + ".row_id", "'" + r.getRowId() + "' appears twice in section '"
                            + s.getSectionId() + "'");
                }
                seats += row(rf, s.getSectionId(), r, seatIds);
                if (r.getSeatsCount() == 0) {
                    categories.add(r.getCategory());
                }
                for (Seat seat : r.getSeatsList()) {
                    categories.add(seat.getCategory().isEmpty() ? r.getCategory() : seat.getCategory());
                }
                if (categories.size() > CATEGORIES_MAX) {
                    throw Failure.invalid(field, "has more than " + CATEGORIES_MAX + " categories");
                }
                if (seats > ITEM_SEATS_MAX) {
                    throw Failure.invalid(field, "has more than " + ITEM_SEATS_MAX + " seats (max_item_seats)");
                }
            }
        }
        return (int) seats;
    }

    private static int row(String rf, String section, SeatRow r, Set<String> seatIds) {
        String where = " (section '" + section + "', row '" + r.getRowId() + "')";
        category(rf + ".category", r.getCategory());
        rank(rf + ".rank", r.getRank());
        if (r.getSeatsCount() > 0 && r.getCount() != 0) {
            throw Failure.invalid(rf + ".count", "is " + r.getCount() + " but the row lists seats; give one or the other"
                    + where);
        }
        if (r.getSeatsCount() == 0) {
            if (r.getCount() <= 0 || r.getCount() > ROW_SEATS_MAX) {
                throw Failure.invalid(rf + ".count", "is " + r.getCount() + ", must be within [1, " + ROW_SEATS_MAX
                        + "] when the row lists no seats" + where);
            }
            if (r.getFirstNumber() < 0 || (long) r.getFirstNumber() + r.getCount() - 1 > ORDER_MAX) {
                throw Failure.invalid(rf + ".first_number", "is " + r.getFirstNumber() + ", the row's numbers must lie in [0, "
                        + ORDER_MAX + "]" + where);
            }
            if (r.getSeatPrefix().length() > SEAT_PREFIX_LENGTH_MAX
                    || (!r.getSeatPrefix().isEmpty() && !Limits.isId(r.getSeatPrefix(), SEAT_PREFIX_LENGTH_MAX))) {
                throw Failure.invalid(rf + ".seat_prefix", "must be 0.." + SEAT_PREFIX_LENGTH_MAX
                        + " printable ASCII characters" + where);
            }
            Set<Integer> aisles = new HashSet<>();
            for (int a : r.getAislesAfterList()) {
                if (a < r.getFirstNumber() || a >= r.getFirstNumber() + r.getCount()) {
                    throw Failure.invalid(rf + ".aisles_after", a + " is not a seat number of the row" + where);
                }
                if (!aisles.add(a)) {
                    throw Failure.invalid(rf + ".aisles_after", a + " appears twice" + where);
                }
            }
            for (int n = r.getFirstNumber(); n < r.getFirstNumber() + r.getCount(); n++) {
                String id = numberedId(r, n);
                if (id.length() > SEAT_ID_LENGTH_MAX) {
                    throw Failure.invalid(rf + ".seat_prefix", "makes seat id '" + id + "' longer than "
                            + SEAT_ID_LENGTH_MAX + " characters" + where);
                }
                if (!seatIds.add(id)) {
                    throw Failure.invalid(rf + ".seat_prefix", "makes seat id '" + id + "', which appears twice in the map");
                }
            }
            return r.getCount();
        }
        if (r.getSeatsCount() > ROW_SEATS_MAX) {
            throw Failure.invalid(rf + ".seats", "has " + r.getSeatsCount() + " seats, at most " + ROW_SEATS_MAX + where);
        }
        if (!r.getSeatPrefix().isEmpty() || r.getFirstNumber() != 0 || r.getAislesAfterCount() > 0) {
            throw Failure.invalid(rf + ".seat_prefix", "first_number, seat_prefix and aisles_after are for numbered rows"
                    + " (count), not for listed seats" + where);
        }
        Set<Integer> orders = new HashSet<>();
        for (Seat seat : r.getSeatsList()) {
            String sf = rf + ".seats";
            seatId(sf + ".seat_id", seat.getSeatId());
            if (!seatIds.add(seat.getSeatId())) {
                throw Failure.invalid(sf + ".seat_id", "'" + seat.getSeatId() + "' appears twice in the map");
            }
            if (seat.getOrder() < 0 || seat.getOrder() > ORDER_MAX) {
                throw Failure.invalid(sf + ".order", "is " + seat.getOrder() + " for seat '" + seat.getSeatId()
                        + "', must be within [0, " + ORDER_MAX + "]");
            }
            if (!orders.add(seat.getOrder())) {
                throw Failure.invalid(sf + ".order", seat.getOrder() + " appears twice" + where);
            }
            category(sf + ".category", seat.getCategory());
            rank(sf + ".rank", seat.getRank());
        }
        return r.getSeatsCount();
    }

    /** CreateItem's kind and seat map, with what a SEATED item may not set. */
    public static void checkCreate(ItemKind kind, SeatMap map, boolean hasMap, long total, int quotas, int buckets) {
        if (kind == ItemKind.UNRECOGNIZED) {
            throw Failure.invalid("kind", "is not COUNTED or SEATED");
        }
        if (kind != ItemKind.SEATED) {
            if (hasMap) {
                throw Failure.invalid("seat_map", "is for SEATED items; this item's kind is " + kind);
            }
            return;
        }
        if (!hasMap) {
            throw Failure.invalid("seat_map", "is required for a SEATED item");
        }
        int seats = check("seat_map", map);
        if (total != 0 && total != seats) {
            throw Failure.invalid("total", "is " + total + " but the seat map has " + seats
                    + " seats; give 0 or the number of seats");
        }
        if (quotas > 0) {
            throw Failure.invalid("region_quotas", "must be empty for a SEATED item: it is sold in its home region only");
        }
        if (buckets > 1) {
            throw Failure.invalid("bucket_count", "is " + buckets + "; a SEATED item has one bucket (0 or 1)");
        }
    }

    /**
     * A Reserve's seat selection against its quantity: a mode; SPECIFIC names 1..{@code quantityMax}
     * distinct seats and a quantity of 0 or their number; the other modes name no seats.
     */
    public static void checkSelection(SeatSelection s, int quantity, int quantityMax) {
        if (s.getMode() == SeatMode.SEAT_MODE_UNSPECIFIED || s.getMode() == SeatMode.UNRECOGNIZED) {
            throw Failure.invalid("seats.mode", "is required: ANY, SPECIFIC, ADJACENT or BEST");
        }
        if (!s.getSectionId().isEmpty()) {
            seatId("seats.section_id", s.getSectionId());
        }
        category("seats.category", s.getCategory());
        if (s.getMode() == SeatMode.SPECIFIC) {
            int n = s.getSeatIdsCount();
            if (n == 0 || n > quantityMax) {
                throw Failure.invalid("seats.seat_ids", "has " + n + " seats, must be within [1, " + quantityMax + "]");
            }
            if (quantity != 0 && quantity != n) {
                throw Failure.invalid("quantity", "is " + quantity + " but seats.seat_ids names " + n
                        + " seats; give 0 or their number");
            }
            distinct("seats.seat_ids", s.getSeatIdsList());
            return;
        }
        if (s.getSeatIdsCount() > 0) {
            throw Failure.invalid("seats.seat_ids", "is for SPECIFIC; mode " + s.getMode() + " chooses the seats");
        }
    }

    /** Seat ids named by a call: valid and distinct. */
    public static void distinct(String field, List<String> ids) {
        Set<String> seen = new HashSet<>();
        for (String id : ids) {
            seatId(field, id);
            if (!seen.add(id)) {
                throw Failure.invalid(field, "'" + id + "' appears twice");
            }
        }
    }

    /** Units a Reserve of a seated item asks for: SPECIFIC's seats or the quantity. */
    public static int quantityOf(SeatSelection s, int quantity) {
        return s.getMode() == SeatMode.SPECIFIC ? s.getSeatIdsCount() : quantity;
    }

    private static void seatId(String field, String v) {
        if (!Limits.isId(v, SEAT_ID_LENGTH_MAX)) {
            throw Failure.invalid(field, v == null || v.isEmpty() ? "is required"
                    : "'" + v + "' must be 1.." + SEAT_ID_LENGTH_MAX + " printable ASCII characters without spaces");
        }
    }

    private static void category(String field, String v) {
        if (!v.isEmpty() && !Limits.isId(v, SEAT_ID_LENGTH_MAX)) {
            throw Failure.invalid(field, "'" + v + "' must be 0.." + SEAT_ID_LENGTH_MAX
                    + " printable ASCII characters without spaces");
        }
    }

    private static void rank(String field, int v) {
        if (v < 0 || v > ORDER_MAX) {
            throw Failure.invalid(field, "is " + v + ", must be within [0, " + ORDER_MAX + "]");
        }
    }
}
