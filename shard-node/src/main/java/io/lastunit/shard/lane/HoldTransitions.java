package io.lastunit.shard.lane;

import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.common.Failure;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.shard.store.HoldRow;
import java.util.Map;

/**
 * What a Confirm, Release or Extend of a hold gets when judged against the hold's row: the
 * answer a caller receives when its transition does not (or no longer) change the hold, or
 * {@link Apply} when the hold is HELD, unexpired and the transition would change it. Pure: no
 * I/O, no clock (the row's {@code dueNow} was computed by the database with its clock).
 *
 * <p>Two uses, one rule. A conditional statement that matched nothing is explained from the row
 * read afterwards. And within one batch, calls on the same hold are decided as if they had
 * arrived one after another: the first one's statement runs, and every later one is judged
 * against the row that statement left, so it gets exactly what a retry would get (OK for a
 * Confirm with the same order ref, FAILED_PRECONDITION with the hold's state otherwise).
 */
final class HoldTransitions {

    /** The outcome of judging one call against a hold's row. */
    sealed interface Verdict {
    }

    /** OK: the call is answered with the hold as it is (a Confirm repeated with the same order ref). */
    record Answer(Hold hold) implements Verdict {
    }

    /** The call is refused with this failure; the hold stays as it is. */
    record Refuse(Failure failure) implements Verdict {
    }

    /** The hold is HELD, unexpired and the transition applies to it: its statement must run. */
    record Apply() implements Verdict {
    }

    private static final Apply APPLY = new Apply();

    private HoldTransitions() {
    }

    /**
     * Judges a call on hold {@code id} against {@code row}, the hold's row as the database
     * returned it (null: no hold with the id's uuid).
     */
    static Verdict judge(HoldId id, Op.HoldAction.Kind kind, String orderRef, HoldRow row) {
        if (row == null || !row.id().equals(id)) {
            return new Refuse(Failure.of(Reason.HOLD_NOT_FOUND, "no hold " + id.encode()));
        }
        HoldState state = row.effectiveState();
        if (kind == Op.HoldAction.Kind.CONFIRM && row.state() == HoldState.SOLD) {
            if (orderRef.equals(row.orderRef())) {
                return new Answer(row.toProto());
            }
            return new Refuse(Failure.of(Reason.ORDER_REF_MISMATCH, "hold " + id.encode()
                    + " was confirmed with order_ref=" + row.orderRef() + ", not " + orderRef,
                    Map.of("state", HoldState.SOLD.name())));
        }
        if (state != HoldState.HELD) {
            return new Refuse(Failure.of(Reason.HOLD_NOT_HELD, "hold " + id.encode() + " is " + state
                    + "; " + kind + " needs HELD", Map.of("state", state.name())));
        }
        if (kind == Op.HoldAction.Kind.EXTEND && row.extended()) {
            return new Refuse(Failure.of(Reason.HOLD_ALREADY_EXTENDED, "hold " + id.encode()
                    + " was already extended (once per hold); it expires at " + row.expiresAt(),
                    Map.of("state", state.name())));
        }
        return APPLY;
    }
}
