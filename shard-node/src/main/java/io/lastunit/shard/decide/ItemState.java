package io.lastunit.shard.decide;

/**
 * The states of {@code items.state} (schema V1, V8), and what each lets happen to the item's rows
 * on this shard. Immutable.
 *
 * <p>ACTIVE sells. PAUSED does not take Reserves, but its holds are confirmed, released, extended
 * and expire. The three states of a tenant move fence the item: its rows here are a copy the mover
 * reads or writes, so nothing else changes them. No sale, no call on a hold, no expiry, no
 * transfer, no restock. FROZEN is the source during the move's fence (it sells again if the move
 * rolls back), IMPORTING the target's copy until the move flips, MOVED the source's rows after
 * the flip (the target serves the item).
 */
public enum ItemState {
    ACTIVE,
    PAUSED,
    FROZEN,
    IMPORTING,
    MOVED;

    /** Fenced by a tenant move: only the move changes the item's rows here. */
    public boolean moving() {
        return this == FROZEN || this == IMPORTING || this == MOVED;
    }

    /** The state stored as {@code text}; a value the CHECK constraint does not allow is a bug. */
    public static ItemState of(String stored) {
        try {
            return valueOf(stored);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalStateException("items.state '" + stored + "' is not one of the item states", e);
        }
    }
}
