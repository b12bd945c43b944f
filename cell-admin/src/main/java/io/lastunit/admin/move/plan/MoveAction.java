package io.lastunit.admin.move.plan;

import io.lastunit.api.topology.v1.MoveStep;

/**
 * What a mover does next, as {@link MovePlanner} decides it. Most actions are a step to record
 * (before acting on it) and carry out; {@link #WAIT_FOR_TRANSFERS} records nothing (it gathers a
 * fact), and {@link #HALT} and {@link #DONE} end the mover's run.
 */
public enum MoveAction {
    /** Record COPYING and copy every row of the tenant into the target cell. */
    COPY(MoveStep.COPYING),
    /** Record CATCHING_UP (one more pass) and copy what changed since the last pass. */
    CATCH_UP(MoveStep.CATCHING_UP),
    /** Wait, bounded, for the tenant's pending transfers on the source to finish; record nothing. */
    WAIT_FOR_TRANSFERS(null),
    /** Record FENCED: the tenant MOVING, the source frozen, the last delta copied. */
    FENCE(MoveStep.FENCED),
    /** Record VERIFIED: both sides summarized and compared. */
    VERIFY(MoveStep.VERIFIED),
    /** Record FLIPPED (the commit point): the tenant placed in the target cell, the target activated. */
    FLIP(MoveStep.FLIPPED),
    /** Record CLEANED: the source retired and dropped, the placement without the move. */
    CLEAN(MoveStep.CLEANED),
    /** Record ABORTING (with the reason): the source unfrozen, the partial copy discarded. */
    ABORT(MoveStep.ABORTING),
    /** Record the end: ABORTED after ABORTING, or CLEANED with its finish time. */
    FINISH(null),
    /**
     * Stop without recording a step: a step after the commit point (or a roll-back) failed for
     * now; the move stays as recorded, with the reason, for a resume.
     */
    HALT(null),
    /** Nothing more to do: the move has finished. */
    DONE(null);

    private final MoveStep step;

    MoveAction(MoveStep step) {
        this.step = step;
    }

    /** The step this action records before acting, or null when it records none of its own. */
    public MoveStep step() {
        return step;
    }
}
