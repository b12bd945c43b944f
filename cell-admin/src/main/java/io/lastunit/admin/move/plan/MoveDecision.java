package io.lastunit.admin.move.plan;

import java.util.Objects;

/**
 * One decision of {@link MovePlanner}: the action and why (for the move's {@code reason} when it
 * aborts or halts, and for the log otherwise). Immutable.
 */
public record MoveDecision(MoveAction action, String reason) {
    public MoveDecision {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(reason, "reason");
    }

    static MoveDecision of(MoveAction action, String reason) {
        return new MoveDecision(action, reason);
    }
}
