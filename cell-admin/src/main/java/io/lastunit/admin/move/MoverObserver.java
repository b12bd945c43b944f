package io.lastunit.admin.move;

/**
 * What a {@link Mover} tells about the moves it runs, for the admin service's meters: called on
 * the mover's thread, so an implementation must be thread-safe and must not block.
 * {@link #NONE} (the default) ignores everything.
 */
public interface MoverObserver {
    MoverObserver NONE = new MoverObserver() {
    };

    /**
     * A run of a move ended here: CLEANED or ABORTED when this run recorded the move finished
     * (once per move), HALTED, STOPPED or BUSY when the run gave up for now (a move may end so
     * several times before it finishes).
     */
    default void moveEnded(Mover.Result result) {
    }

    /**
     * A move from {@code fromCell} to {@code toCell} flipped: its tenant's calls were paused
     * (fenced to flipped) for {@code pauseMs}.
     */
    default void paused(String fromCell, String toCell, long pauseMs) {
    }
}
