package io.lastunit.shard.lane;

/**
 * What a lane does with a batch whose statement or commit failed with a SQL state
 * (docs/lanes.md, "Redo: the database is the arbiter"). Pure.
 *
 * <p>Why a CHECK violation (23514) is not a redo: the conditional statements refuse a stale view
 * before any constraint could, so a CHECK that fires means the lane decided something the
 * invariants forbid, a bug. Deciding again would hide it behind retries; it fails loudly instead.
 */
final class RedoPolicy {
    /** Where the batch was when the failure came. */
    enum Stage {
        /** Statements of an open transaction; nothing is committed. */
        BEFORE_COMMIT,
        /** The batch's one statement, which commits itself (autocommit). */
        SELF_COMMITTING_STATEMENT,
        /** The commit was sent. */
        COMMIT
    }

    enum Verdict {
        /** The store refused the statement and nothing was written: decide again (counts in {@code redo-max}). */
        REDO,
        /** A borrow gave up a lock wait: decide again, not counted while the lane's bound for these allows. */
        REDO_FREE,
        /** The commit may or may not have happened: fail the batch, outcome unknown. */
        UNKNOWN_OUTCOME,
        /** The store failed the batch and nothing was written: fail it, retryable. */
        FAIL,
        /** A constraint refused what the lane decided: a bug; fail it as INTERNAL, never decide again. */
        BUG
    }

    static final String SERIALIZATION_FAILURE = "40001";
    static final String DEADLOCK_DETECTED = "40P01";
    static final String LOCK_NOT_AVAILABLE = "55P03";
    static final String CHECK_VIOLATION = "23514";

    private RedoPolicy() {
    }

    static Verdict classify(String sqlState, Stage stage) {
        if (stage == Stage.COMMIT) {
            return Verdict.UNKNOWN_OUTCOME;
        }
        if (CHECK_VIOLATION.equals(sqlState)) {
            return Verdict.BUG;
        }
        if (LOCK_NOT_AVAILABLE.equals(sqlState)) {
            return Verdict.REDO_FREE;
        }
        if (SERIALIZATION_FAILURE.equals(sqlState) || DEADLOCK_DETECTED.equals(sqlState)) {
            return Verdict.REDO;
        }
        return stage == Stage.SELF_COMMITTING_STATEMENT ? Verdict.UNKNOWN_OUTCOME : Verdict.FAIL;
    }
}
