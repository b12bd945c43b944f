package io.lastunit.shard.seats.plan;

/**
 * One seat as stored. Checks its own fields when built; what depends on the other seats of the
 * map (duplicate ids, numbers or orders) is {@link SeatLayout#of}'s to check.
 *
 * @param seatNo the stable number the database uses: {@code >= 0}, unique in the item, not
 *     necessarily dense nor in layout order
 * @param seatId unique in the item, not empty
 * @param sectionId the seat's section, not empty
 * @param rowId the seat's row, unique within its section (the same row id in two sections names
 *     two rows), not empty
 * @param order position within the row, {@code >= 0}, unique within the row; gaps between orders
 *     do not matter for adjacency
 * @param category category or price zone; may be empty (a seat without one), never null
 * @param rank lower is better, {@code >= 0}
 * @param aisleAfter an aisle runs between this seat and the next one of its row, so they are not
 *     adjacent; ignored on a row's last seat
 *
 * Immutable and thread-safe.
 */
public record SeatSpec(int seatNo, String seatId, String sectionId, String rowId, int order, String category,
        int rank, boolean aisleAfter) {

    public SeatSpec {
        if (seatId == null || seatId.isEmpty()) {
            throw new IllegalArgumentException("seatId is empty (seatNo=" + seatNo + ")");
        }
        String where = " for seat '" + seatId + "'";
        if (seatNo < 0) {
            throw new IllegalArgumentException("seatNo=" + seatNo + " is negative" + where);
        }
        if (sectionId == null || sectionId.isEmpty()) {
            throw new IllegalArgumentException("sectionId is empty" + where);
        }
        if (rowId == null || rowId.isEmpty()) {
            throw new IllegalArgumentException("rowId is empty" + where);
        }
        if (order < 0) {
            throw new IllegalArgumentException("order=" + order + " is negative" + where);
        }
        if (category == null) {
            throw new IllegalArgumentException("category is null" + where + "; a seat without one has \"\"");
        }
        if (rank < 0) {
            throw new IllegalArgumentException("rank=" + rank + " is negative" + where);
        }
    }
}
