package io.lastunit.shard.lane;

import io.lastunit.common.Reason;
import io.lastunit.shard.decide.Decided;

/**
 * What the lanes tell whoever watches them (the node's metrics; nothing by default), once per
 * batch and once per refusal: never per operation in the lane's own code, so a watcher's cost is
 * what it does with a batch. Called on lane threads and, for {@link #refused}, on transport
 * threads too: implementations are thread-safe and never block.
 */
public interface LaneObserver {
    /** Watches nothing. */
    LaneObserver NONE = new LaneObserver() {
    };

    /** A lane took a batch of {@code operations} from its queue. */
    default void batch(int lane, int operations) {
    }

    /**
     * A batch committed: {@code decided} is what it wrote, judged at {@code nowMicros} by the
     * database's clock; {@code decideToCommitNanos} from the start of its decision to the end of
     * its commit.
     */
    default void committed(int lane, Decided decided, long nowMicros, long decideToCommitNanos) {
    }

    /** A batch was decided again ({@code cause}: why the database refused the cached view). */
    default void redo(int lane, String cause) {
    }

    /** {@code operations} were refused with {@code reason} before anything was written. */
    default void refused(Reason reason, int operations) {
    }

    /** A commit failed and the outcome of its {@code operations} is unknown. */
    default void unknownOutcome(int lane, int operations) {
    }
}
