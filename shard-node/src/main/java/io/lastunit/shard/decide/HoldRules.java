package io.lastunit.shard.decide;

import io.lastunit.api.inventory.v1.HoldState;

/**
 * What a Confirm, Release or Extend gets when judged against its hold's row at {@code now}:
 * null when the hold is HELD, unexpired and the call changes it (it applies); otherwise the answer a
 * retry would get — OK for a Confirm repeated with the same order ref, a refusal with the hold's
 * state for the rest. Pure.
 */
final class HoldRules {
    private HoldRules() {
    }

    static Outcome judge(Call.Transition t, HoldFacts row, long now) {
        if (row == null || !row.slot().equals(t.slot()) || !row.region().equals(t.region())) {
            return new Outcome.Refused(Outcome.Refusal.NOT_FOUND, null, null);
        }
        if (t.kind() == Call.Kind.CONFIRM && row.state() == HoldState.SOLD) {
            return t.orderRef().equals(row.orderRef()) ? new Outcome.Unchanged(row)
                    : new Outcome.Refused(Outcome.Refusal.ORDER_REF_MISMATCH, HoldState.SOLD, row);
        }
        HoldState state = row.effectiveState(now);
        if (state != HoldState.HELD) {
            return new Outcome.Refused(Outcome.Refusal.NOT_HELD, state, row);
        }
        if (t.kind() == Call.Kind.EXTEND && row.extended()) {
            return new Outcome.Refused(Outcome.Refusal.ALREADY_EXTENDED, state, row);
        }
        return null;
    }
}
