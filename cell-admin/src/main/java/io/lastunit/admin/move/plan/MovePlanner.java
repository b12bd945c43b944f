package io.lastunit.admin.move.plan;

import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import java.util.Objects;

/**
 * The rules of a tenant move (DESIGN §8): from the move as recorded and the facts of its step,
 * what comes next. Pure: no I/O, no clock (the time is a fact); the same input always gives the
 * same decision, so every transition is a table row in {@code MovePlannerTest}.
 *
 * <ul>
 *   <li><b>Forward.</b> PLANNED → COPYING → CATCHING_UP (repeated) → FENCED → VERIFIED → FLIPPED
 *       → CLEANED.
 *   <li><b>Catching up.</b> Another pass while the last one exported more than
 *       {@code deltaRowsSmall} rows and fewer than {@code catchUpRoundsMax} passes were made. Then
 *       the fence, if the pause it is estimated to take (the last pass's duration, since the fence
 *       copies about as much again, plus {@code flipReserveMs}) fits {@code max_pause_ms}; with
 *       passes left, another pass instead; with none left, an abort naming the estimate. Pending
 *       transfers of the tenant are waited for first (once per pass), and a move whose transfers
 *       stay pending aborts.
 *   <li><b>Abort before the commit point.</b> Before FLIPPED the move aborts when an abort was
 *       requested, when its step failed for good, when verification found a difference, or when
 *       the time fenced (from {@code fenced_at_ms}) plus {@code flipReserveMs} passes
 *       {@code max_pause_ms}.
 *   <li><b>Roll forward after it.</b> From FLIPPED on the move never aborts: a failed step halts
 *       the mover, and a resume carries the step out again. ABORTING rolls back the same way.
 * </ul>
 *
 * Immutable and thread-safe.
 */
public final class MovePlanner {
    private final MovePolicy policy;

    public MovePlanner(MovePolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    public MovePolicy policy() {
        return policy;
    }

    /**
     * Whether to carry out the recorded step at all, asked before acting on it (a resumed move
     * included): null to act, or an abort when the move is past its budget or an abort was
     * requested. Nothing is aborted from FLIPPED on.
     */
    public MoveDecision beforeActing(Move move, long nowMs) {
        if (!beforeCommitPoint(move.getStep())) {
            return null;
        }
        if (move.getAbortRequested()) {
            return abortRequested(move);
        }
        return overBudget(move, nowMs);
    }

    /** What comes after the recorded step, carried out with these facts. */
    public MoveDecision next(Move move, MoveFacts facts) {
        MoveStep step = move.getStep();
        switch (step) {
            case ABORTED:
                return MoveDecision.of(MoveAction.DONE, "aborted");
            case CLEANED:
                if (facts.failed()) {
                    return halt(step, facts);
                }
                return move.getFinishedAtMs() == 0 ? MoveDecision.of(MoveAction.FINISH, "cleaned up")
                        : MoveDecision.of(MoveAction.DONE, "finished");
            case ABORTING:
                return facts.failed() ? halt(step, facts) : MoveDecision.of(MoveAction.FINISH, "rolled back");
            case FLIPPED:
                return facts.failed() ? halt(step, facts)
                        : MoveDecision.of(MoveAction.CLEAN, "flipped to " + move.getToCell());
            default:
                break;
        }
        if (!beforeCommitPoint(step)) {
            throw new IllegalArgumentException("move " + move.getMoveId() + " has no step: " + step);
        }
        if (move.getAbortRequested()) {
            return abortRequested(move);
        }
        if (facts.failed()) {
            return MoveDecision.of(MoveAction.ABORT, step + " failed: " + facts.failure());
        }
        if ((step == MoveStep.COPYING || step == MoveStep.CATCHING_UP) && !facts.differences().isEmpty()) {
            return MoveDecision.of(MoveAction.ABORT, "before the fence, the rows that no longer change differ in "
                    + facts.differences().size() + " place" + (facts.differences().size() == 1 ? "" : "s")
                    + " between " + move.getFromCell() + " and " + move.getToCell() + ", the first: "
                    + facts.differences().get(0));
        }
        switch (step) {
            case PLANNED:
                return MoveDecision.of(MoveAction.COPY, "planned");
            case COPYING:
                return MoveDecision.of(MoveAction.CATCH_UP, "copied " + facts.lastDeltaRows() + " rows in "
                        + facts.lastPassMs() + " ms while the tenant sells; catching up");
            case CATCHING_UP:
                return afterCatchUp(move, facts);
            case FENCED: {
                MoveDecision over = overBudget(move, facts.nowMs());
                return over != null ? over : MoveDecision.of(MoveAction.VERIFY, "fenced for "
                        + fencedMs(move, facts.nowMs()) + " ms");
            }
            case VERIFIED: {
                if (!facts.differences().isEmpty()) {
                    return MoveDecision.of(MoveAction.ABORT, "verification found " + facts.differences().size()
                            + " difference" + (facts.differences().size() == 1 ? "" : "s") + " between "
                            + move.getFromCell() + " and " + move.getToCell() + ", the first: "
                            + facts.differences().get(0));
                }
                MoveDecision over = overBudget(move, facts.nowMs());
                return over != null ? over : MoveDecision.of(MoveAction.FLIP, "verified after "
                        + fencedMs(move, facts.nowMs()) + " ms fenced");
            }
            default:
                throw new IllegalArgumentException("move " + move.getMoveId() + " has no step: " + step);
        }
    }

    private MoveDecision afterCatchUp(Move move, MoveFacts facts) {
        boolean small = facts.lastDeltaRows() <= policy.deltaRowsSmall();
        boolean passesLeft = move.getCatchUpRounds() < policy.catchUpRoundsMax();
        String last = "catch-up pass " + move.getCatchUpRounds() + " copied " + facts.lastDeltaRows() + " rows in "
                + facts.lastPassMs() + " ms";
        if (!small && passesLeft) {
            return MoveDecision.of(MoveAction.CATCH_UP, last + ", more than " + policy.deltaRowsSmall());
        }
        long estimateMs = facts.lastPassMs() + policy.flipReserveMs();
        if (estimateMs > move.getMaxPauseMs()) {
            if (passesLeft) {
                return MoveDecision.of(MoveAction.CATCH_UP, last + ": a pause of about " + estimateMs
                        + " ms would pass the budget of " + move.getMaxPauseMs() + " ms");
            }
            return MoveDecision.of(MoveAction.ABORT, "after " + move.getCatchUpRounds() + " catch-up passes the last"
                    + " copied " + facts.lastDeltaRows() + " rows in " + facts.lastPassMs() + " ms: a fenced pause of"
                    + " about " + estimateMs + " ms would pass the budget of " + move.getMaxPauseMs() + " ms");
        }
        if (facts.transfersPending() > 0) {
            if (!facts.transfersWaited()) {
                return MoveDecision.of(MoveAction.WAIT_FOR_TRANSFERS, facts.transfersPending()
                        + " transfers of the tenant are pending on " + move.getFromCell());
            }
            return MoveDecision.of(MoveAction.ABORT, facts.transfersPending() + " transfers of the tenant are still"
                    + " pending on " + move.getFromCell() + " after waiting for them; the fence would cut them");
        }
        if (facts.transfersWaited() && passesLeft) {
            // The wait let changes pile up: one more pass before the fence copies them.
            return MoveDecision.of(MoveAction.CATCH_UP, "pending transfers finished; catching up once more");
        }
        return MoveDecision.of(MoveAction.FENCE, last + (small ? "" : " (the last pass allowed)")
                + "; fencing (pause estimated at " + estimateMs + " ms of " + move.getMaxPauseMs() + ")");
    }

    /** An abort when the move has been fenced too long to finish within its budget; else null. */
    private MoveDecision overBudget(Move move, long nowMs) {
        MoveStep step = move.getStep();
        if (step != MoveStep.FENCED && step != MoveStep.VERIFIED) {
            return null;
        }
        long fenced = fencedMs(move, nowMs);
        if (fenced + policy.flipReserveMs() > move.getMaxPauseMs()) {
            return MoveDecision.of(MoveAction.ABORT, "fenced for " + fenced + " ms at " + step + ": with "
                    + policy.flipReserveMs() + " ms for the flip, over the pause budget of " + move.getMaxPauseMs()
                    + " ms");
        }
        return null;
    }

    private static long fencedMs(Move move, long nowMs) {
        return Math.max(0, nowMs - move.getFencedAtMs());
    }

    private static MoveDecision abortRequested(Move move) {
        return MoveDecision.of(MoveAction.ABORT, "abort requested at " + move.getStep()
                + (move.getReason().isEmpty() ? "" : ": " + move.getReason()));
    }

    private static MoveDecision halt(MoveStep step, MoveFacts facts) {
        return MoveDecision.of(MoveAction.HALT, step + " failed for now (" + facts.failure() + "); the move "
                + (step == MoveStep.ABORTING ? "rolls back" : "rolls forward") + " when it is resumed");
    }

    /** Steps before FLIPPED, where the move may still abort. */
    public static boolean beforeCommitPoint(MoveStep step) {
        switch (step) {
            case PLANNED:
            case COPYING:
            case CATCHING_UP:
            case FENCED:
            case VERIFIED:
                return true;
            default:
                return false;
        }
    }

    /** The move has ended (CLEANED and finished, or ABORTED). */
    public static boolean finished(Move move) {
        return move.getStep() == MoveStep.ABORTED
                || (move.getStep() == MoveStep.CLEANED && move.getFinishedAtMs() != 0);
    }
}
