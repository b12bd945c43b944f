package io.lastunit.shard.seats.plan;

import java.util.Arrays;

/**
 * What {@link SeatDecider} decided for one {@link SeatRequest}. Seats are layout indexes, ascending,
 * copied in and out. Immutable and thread-safe.
 */
public sealed interface SeatDecision {
    /** The request gets these seats; the decider cleared them in the free set. */
    record Granted(int[] seats) implements SeatDecision {
        public Granted {
            seats = ascending("Granted", seats);
        }

        @Override
        public int[] seats() {
            return seats.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Granted g && Arrays.equals(seats, g.seats);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(seats);
        }

        @Override
        public String toString() {
            return "Granted" + Arrays.toString(seats);
        }
    }

    /** No seats fitting the request are free (ANY, ADJACENT, BEST). The free set is unchanged. */
    record SoldOut() implements SeatDecision {
    }

    /** SPECIFIC only: these of the requested seats are not free. The free set is unchanged. */
    record Taken(int[] seats) implements SeatDecision {
        public Taken {
            seats = ascending("Taken", seats);
        }

        @Override
        public int[] seats() {
            return seats.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Taken t && Arrays.equals(seats, t.seats);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(seats);
        }

        @Override
        public String toString() {
            return "Taken" + Arrays.toString(seats);
        }
    }

    private static int[] ascending(String what, int[] seats) {
        if (seats == null || seats.length == 0) {
            throw new IllegalArgumentException(what + " needs at least one seat");
        }
        int[] copy = seats.clone();
        for (int k = 1; k < copy.length; k++) {
            if (copy[k] <= copy[k - 1]) {
                throw new IllegalArgumentException(what + " seats must be ascending and distinct: "
                        + Arrays.toString(copy));
            }
        }
        return copy;
    }
}
