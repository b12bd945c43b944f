package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.shard.lane.HoldTransitions.Answer;
import io.lastunit.shard.lane.HoldTransitions.Apply;
import io.lastunit.shard.lane.HoldTransitions.Refuse;
import io.lastunit.shard.lane.HoldTransitions.Verdict;
import io.lastunit.shard.lane.Op.HoldAction.Kind;
import io.lastunit.shard.store.HoldRow;
import java.time.Instant;
import java.util.UUID;
import io.lastunit.api.inventory.v1.HoldState;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every answer a call on a hold gets from the hold's row, without a database. */
class HoldTransitionsTest {
    private static final HoldId ID = new HoldId("t", "i", "local", 0, UUID.fromString(
            "018f2f0e-0000-7000-8000-000000000001"));
    private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

    private static HoldRow row(String state, boolean extended, String orderRef, boolean dueNow) {
        return new HoldRow(ID.uuid(), "t", "i", 0, "local", 2, "buyer", "key", "fp", HoldState.valueOf(state), T0,
                T0.plusSeconds(600), extended, orderRef, dueNow);
    }

    private static final HoldRow HELD = row("HELD", false, null, false);
    private static final HoldRow HELD_EXTENDED = row("HELD", true, null, false);
    private static final HoldRow HELD_DUE = row("HELD", false, null, true);
    private static final HoldRow SOLD = row("SOLD", false, "order-1", false);
    private static final HoldRow RELEASED = row("RELEASED", false, null, false);
    private static final HoldRow EXPIRED = row("EXPIRED", false, null, false);

    /** kind, order ref, row, expected: "apply", "ok" or the reason, and the state metadata. */
    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of(Kind.CONFIRM, "order-1", HELD, "apply", null),
                Arguments.of(Kind.RELEASE, null, HELD, "apply", null),
                Arguments.of(Kind.EXTEND, null, HELD, "apply", null),
                Arguments.of(Kind.CONFIRM, "order-1", HELD_EXTENDED, "apply", null),
                Arguments.of(Kind.RELEASE, null, HELD_EXTENDED, "apply", null),
                Arguments.of(Kind.EXTEND, null, HELD_EXTENDED, "HOLD_ALREADY_EXTENDED", "HELD"),
                Arguments.of(Kind.CONFIRM, "order-1", SOLD, "ok", null),
                Arguments.of(Kind.CONFIRM, "order-2", SOLD, "ORDER_REF_MISMATCH", "SOLD"),
                Arguments.of(Kind.RELEASE, null, SOLD, "HOLD_NOT_HELD", "SOLD"),
                Arguments.of(Kind.EXTEND, null, SOLD, "HOLD_NOT_HELD", "SOLD"),
                Arguments.of(Kind.CONFIRM, "order-1", RELEASED, "HOLD_NOT_HELD", "RELEASED"),
                Arguments.of(Kind.RELEASE, null, RELEASED, "HOLD_NOT_HELD", "RELEASED"),
                Arguments.of(Kind.EXTEND, null, RELEASED, "HOLD_NOT_HELD", "RELEASED"),
                Arguments.of(Kind.CONFIRM, "order-1", EXPIRED, "HOLD_NOT_HELD", "EXPIRED"),
                // HELD past its expiry by the database clock reads EXPIRED before any sweep.
                Arguments.of(Kind.CONFIRM, "order-1", HELD_DUE, "HOLD_NOT_HELD", "EXPIRED"),
                Arguments.of(Kind.RELEASE, null, HELD_DUE, "HOLD_NOT_HELD", "EXPIRED"),
                Arguments.of(Kind.EXTEND, null, HELD_DUE, "HOLD_NOT_HELD", "EXPIRED"),
                Arguments.of(Kind.RELEASE, null, null, "HOLD_NOT_FOUND", null),
                Arguments.of(Kind.CONFIRM, "order-1", null, "HOLD_NOT_FOUND", null));
    }

    @ParameterizedTest(name = "{0} {1} on {2} -> {3}")
    @MethodSource("table")
    void judge_answersWhatARetryWouldGet(Kind kind, String orderRef, HoldRow row, String expected, String state) {
        Verdict v = HoldTransitions.judge(ID, kind, orderRef, row);
        switch (expected) {
            case "apply" -> assertThat(v).isInstanceOf(Apply.class);
            case "ok" -> {
                assertThat(v).isInstanceOf(Answer.class);
                assertThat(((Answer) v).hold().getOrderRef()).isEqualTo(orderRef);
            }
            default -> {
                assertThat(v).isInstanceOf(Refuse.class);
                var f = ((Refuse) v).failure();
                assertThat(f.reason()).isEqualTo(Reason.valueOf(expected));
                if (state != null) {
                    assertThat(f.metadata()).containsEntry("state", state);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("otherIds")
    void judge_aRowWhoseIdDiffersInAnyPart_isNotFound(HoldId other) {
        Verdict v = HoldTransitions.judge(other, Kind.RELEASE, null, HELD);
        assertThat(v).isInstanceOf(Refuse.class);
        assertThat(((Refuse) v).failure().reason()).isEqualTo(Reason.HOLD_NOT_FOUND);
    }

    static Stream<HoldId> otherIds() {
        return Stream.of(new HoldId("t2", "i", "local", 0, ID.uuid()), new HoldId("t", "i2", "local", 0, ID.uuid()),
                new HoldId("t", "i", "eu", 0, ID.uuid()), new HoldId("t", "i", "local", 1, ID.uuid()));
    }
}
