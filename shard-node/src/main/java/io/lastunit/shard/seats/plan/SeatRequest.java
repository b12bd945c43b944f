package io.lastunit.shard.seats.plan;

import java.util.Arrays;
import java.util.Objects;

/**
 * What one reservation asks of a seat map; {@link SeatDecider} says which seats it gets. Checks its
 * own shape when built; what depends on the layout (seat indexes inside it, known section and
 * category) is the decider's to check.
 *
 * @param mode how the seats are chosen
 * @param count how many seats, 1..{@link #COUNT_MAX}; for SPECIFIC the number of {@code seats}
 * @param seats SPECIFIC only: the layout indexes asked for, distinct, {@code >= 0}, in any order;
 *     empty for the other modes (null is taken as empty). Copied in and out
 * @param sectionId null = any section; ignored by SPECIFIC
 * @param category null = any category; {@code ""} asks for the seats without a category; ignored
 *     by SPECIFIC
 *
 * Immutable and thread-safe.
 */
public record SeatRequest(Mode mode, int count, int[] seats, String sectionId, String category) {
    /** Most seats one request may ask for: bounds a decision's work and answer. */
    public static final int COUNT_MAX = 10_000;

    /** How a request chooses its seats; {@link SeatDecider} documents each rule. */
    public enum Mode {
        /** Any {@code count} matching free seats, not necessarily together. */
        ANY,
        /** Exactly the seats named, all or nothing. */
        SPECIFIC,
        /** The first run of {@code count} matching free adjacent seats, in layout order. */
        ADJACENT,
        /** The run of {@code count} matching free adjacent seats with the lowest sum of ranks. */
        BEST
    }

    private static final int[] NONE = new int[0];

    public SeatRequest {
        Objects.requireNonNull(mode, "mode");
        if (count < 1 || count > COUNT_MAX) {
            throw new IllegalArgumentException("count=" + count + " is outside [1, " + COUNT_MAX + "] (mode " + mode
                    + ")");
        }
        if (sectionId != null && sectionId.isEmpty()) {
            throw new IllegalArgumentException("sectionId is empty; null means any section");
        }
        if (mode == Mode.SPECIFIC) {
            if (seats == null || seats.length != count) {
                throw new IllegalArgumentException("SPECIFIC count=" + count + " but names "
                        + (seats == null ? 0 : seats.length) + " seats");
            }
            seats = seats.clone();
            int[] sorted = seats.clone();
            Arrays.sort(sorted);
            if (sorted[0] < 0) {
                throw new IllegalArgumentException("SPECIFIC names seat index " + sorted[0] + ", which is negative");
            }
            for (int k = 1; k < sorted.length; k++) {
                if (sorted[k] == sorted[k - 1]) {
                    throw new IllegalArgumentException("SPECIFIC names seat index " + sorted[k] + " twice");
                }
            }
        } else {
            if (seats != null && seats.length > 0) {
                throw new IllegalArgumentException("mode " + mode + " chooses the seats; it names " + seats.length);
            }
            seats = NONE;
        }
    }

    public static SeatRequest any(int count, String sectionId, String category) {
        return new SeatRequest(Mode.ANY, count, null, sectionId, category);
    }

    public static SeatRequest specific(int... seats) {
        return new SeatRequest(Mode.SPECIFIC, seats.length, seats, null, null);
    }

    public static SeatRequest adjacent(int count, String sectionId, String category) {
        return new SeatRequest(Mode.ADJACENT, count, null, sectionId, category);
    }

    public static SeatRequest best(int count, String sectionId, String category) {
        return new SeatRequest(Mode.BEST, count, null, sectionId, category);
    }

    /** A copy of the seats asked for (SPECIFIC), in the order given. */
    @Override
    public int[] seats() {
        return seats.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SeatRequest r && mode == r.mode && count == r.count && Arrays.equals(seats, r.seats)
                && Objects.equals(sectionId, r.sectionId) && Objects.equals(category, r.category);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, count, Arrays.hashCode(seats), sectionId, category);
    }

    @Override
    public String toString() {
        return "SeatRequest[" + mode + " " + count + (mode == Mode.SPECIFIC ? " " + Arrays.toString(seats) : "")
                + (sectionId == null ? "" : " section=" + sectionId) + (category == null ? "" : " category=" + category)
                + "]";
    }
}
