package io.lastunit.admin.move.plan;

import java.util.ArrayList;
import java.util.List;

/**
 * The bounds a move is planned by. Immutable; validated when built.
 *
 * @param deltaRowsSmall   a catch-up pass that copied at most this many rows is small enough to
 *                         fence after: the fence copies about as much again while the tenant waits
 * @param catchUpRoundsMax most catch-up passes; after the last the move fences anyway if the pause
 *                         estimated from it fits the budget, else it aborts
 * @param flipReserveMs    the part of the pause budget kept for what follows the last check before
 *                         the flip (the flip's compare-and-set and the target's activation): a move
 *                         fenced for longer than {@code max_pause_ms - flipReserveMs} aborts
 */
public record MovePolicy(long deltaRowsSmall, int catchUpRoundsMax, long flipReserveMs) {
    public static final long DELTA_ROWS_SMALL_DEFAULT = 500;
    public static final int CATCH_UP_ROUNDS_MAX_DEFAULT = 8;
    public static final long FLIP_RESERVE_MS_DEFAULT = 50;
    /** Bounds of the settings: a pass of more rows than this is not "small" by any measure. */
    static final long DELTA_ROWS_SMALL_LIMIT = 1_000_000;
    static final int CATCH_UP_ROUNDS_LIMIT = 100;
    static final long FLIP_RESERVE_MS_LIMIT = 10_000;

    public MovePolicy {
        List<String> problems = new ArrayList<>();
        if (deltaRowsSmall < 0 || deltaRowsSmall > DELTA_ROWS_SMALL_LIMIT) {
            problems.add("deltaRowsSmall=" + deltaRowsSmall + " is outside [0, " + DELTA_ROWS_SMALL_LIMIT + "]");
        }
        if (catchUpRoundsMax < 1 || catchUpRoundsMax > CATCH_UP_ROUNDS_LIMIT) {
            problems.add("catchUpRoundsMax=" + catchUpRoundsMax + " is outside [1, " + CATCH_UP_ROUNDS_LIMIT + "]");
        }
        if (flipReserveMs < 0 || flipReserveMs > FLIP_RESERVE_MS_LIMIT) {
            problems.add("flipReserveMs=" + flipReserveMs + " is outside [0, " + FLIP_RESERVE_MS_LIMIT + "]");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid move policy: " + String.join("; ", problems));
        }
    }

    public static MovePolicy defaults() {
        return new MovePolicy(DELTA_ROWS_SMALL_DEFAULT, CATCH_UP_ROUNDS_MAX_DEFAULT, FLIP_RESERVE_MS_DEFAULT);
    }
}
