package io.lastunit.balancer.transfer;

/**
 * How far one transfer got. Immutable.
 *
 * @param quantity units step 1 took (0 for {@link Stage#NOTHING} and {@link Stage#UNKNOWN})
 * @param problem  why it stopped short of {@link Stage#DONE} or {@link Stage#NOTHING}; null otherwise
 */
public record TransferResult(String transferId, long quantity, Stage stage, String problem) {

    /** The last step known to have committed. */
    public enum Stage {
        /** Step 1's outcome is unknown (its calls failed): if it committed, recovery completes it. */
        UNKNOWN,
        /** Step 1 moved and recorded nothing (too little available, or the source refused it). */
        NOTHING,
        /** Step 1 committed: the units are in flight, the OUT record PENDING. */
        TAKEN,
        /** Step 2 committed: the target holds the units; the OUT record is still PENDING. */
        CREDITED,
        /** Step 3 committed. */
        DONE
    }

    /** The units are at the target (step 2 committed). */
    public boolean credited() {
        return stage == Stage.CREDITED || stage == Stage.DONE;
    }

    /** Units now at the target because of this transfer. */
    public long creditedQuantity() {
        return credited() ? quantity : 0;
    }
}
