package io.lastunit.admin.move;

import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.ShardInfo;

/**
 * Fault injection for crash tests, as the transfer protocol's {@code TransferFaults}; production
 * uses {@link #NONE}. The {@link Mover} calls {@link #afterRecorded} on its own thread right after
 * each step was recorded in {@code moves/{id}} and before it acts on it. Whatever it throws ends
 * the mover's run there, as a crash of the process would: the step stays recorded and not carried
 * out, the lease is given up, and a new mover resumes the move from ZooKeeper.
 */
@FunctionalInterface
public interface MoveFaults {
    MoveFaults NONE = recorded -> { };

    /** @param recorded the move as just written (its step is the one about to be carried out) */
    void afterRecorded(Move recorded);

    /**
     * Called on a copy thread right before each ImportTenant of a copy pass is sent: its rows are
     * exported and in hand. A test that blocks here holds a mover with an import in flight, as a
     * long pause of its process would; what it throws fails the pass as the import's failure would.
     */
    default void beforeImport(String moveId, ShardInfo target) throws InterruptedException {
    }
}
