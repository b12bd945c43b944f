package io.lastunit.admin.move.plan;

import java.util.List;
import java.util.Objects;

/**
 * What a mover found carrying out the move's recorded step, for {@link MovePlanner}: the time,
 * whether the step worked, and what it measured. Immutable. Times are the mover's clock, passed in.
 *
 * @param nowMs            now, epoch milliseconds
 * @param failure          why the step failed for good (its bounded retries ran out, or a shard
 *                         refused it), or null when it was carried out
 * @param lastDeltaRows    rows the copy pass of this step exported (COPYING, CATCHING_UP), else 0
 * @param lastPassMs       how long that pass took
 * @param transfersPending the tenant's transfers still PENDING on the source after that pass
 * @param transfersWaited  the mover has just waited (bounded) for them: they are not finishing
 * @param differences      what verification found different between source and target (VERIFIED; and
 *                         before fencing, what the settled rows' comparison found: COPYING, CATCHING_UP)
 */
public record MoveFacts(long nowMs, String failure, long lastDeltaRows, long lastPassMs, long transfersPending,
        boolean transfersWaited, List<String> differences) {

    public MoveFacts {
        differences = List.copyOf(Objects.requireNonNull(differences, "differences"));
        if (lastDeltaRows < 0 || lastPassMs < 0 || transfersPending < 0) {
            throw new IllegalArgumentException("lastDeltaRows=" + lastDeltaRows + ", lastPassMs=" + lastPassMs
                    + ", transfersPending=" + transfersPending + ": none may be negative");
        }
    }

    /** The recorded step was carried out and measured nothing in particular. */
    public static MoveFacts done(long nowMs) {
        return new MoveFacts(nowMs, null, 0, 0, 0, false, List.of());
    }

    /** The recorded step failed for good. */
    public static MoveFacts failed(long nowMs, String failure) {
        return new MoveFacts(nowMs, Objects.requireNonNull(failure, "failure"), 0, 0, 0, false, List.of());
    }

    /** A copy pass: rows exported, how long it took, transfers pending on the source after it. */
    public static MoveFacts pass(long nowMs, long rows, long passMs, long transfersPending) {
        return new MoveFacts(nowMs, null, rows, passMs, transfersPending, false, List.of());
    }

    /** A verification and what it found different (empty: equal). */
    public static MoveFacts verified(long nowMs, List<String> differences) {
        return new MoveFacts(nowMs, null, 0, 0, 0, false, differences);
    }

    /** The same facts after a bounded wait for pending transfers, which left {@code pending}. */
    public MoveFacts afterWait(long now, long pending) {
        return new MoveFacts(now, failure, lastDeltaRows, lastPassMs, pending, true, differences);
    }

    /** The same facts with what a comparison found different (empty: equal). */
    public MoveFacts withDifferences(List<String> found) {
        return new MoveFacts(nowMs, failure, lastDeltaRows, lastPassMs, transfersPending, transfersWaited, found);
    }

    public boolean failed() {
        return failure != null;
    }
}
