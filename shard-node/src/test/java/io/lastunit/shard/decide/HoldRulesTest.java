package io.lastunit.shard.decide;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.HoldState;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every answer a call on a hold gets from the hold's row, without a database. */
class HoldRulesTest {
    private static final Slot SLOT = new Slot("t", "i", 0);
    private static final UUID ID = UUID.fromString("018f2f0e-0000-7000-8000-000000000001");
    private static final long NOW = 1_000_000_000L;

    private static HoldFacts row(HoldState state, boolean extended, String orderRef, boolean due) {
        return new HoldFacts(ID, SLOT, "local", 2, "buyer", "key", "fp", state, NOW - 60_000_000L,
                due ? NOW : NOW + 600_000_000L, extended, orderRef);
    }

    private static final HoldFacts HELD = row(HoldState.HELD, false, null, false);
    private static final HoldFacts HELD_EXTENDED = row(HoldState.HELD, true, null, false);
    private static final HoldFacts HELD_DUE = row(HoldState.HELD, false, null, true);
    private static final HoldFacts SOLD = row(HoldState.SOLD, false, "order-1", false);
    private static final HoldFacts RELEASED = row(HoldState.RELEASED, false, null, false);
    private static final HoldFacts EXPIRED = row(HoldState.EXPIRED, false, null, false);

    /** kind, order ref, row, expected: "apply", "ok" or the refusal, and the state it names. */
    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of(Call.Kind.CONFIRM, "order-1", HELD, "apply", null),
                Arguments.of(Call.Kind.RELEASE, "", HELD, "apply", null),
                Arguments.of(Call.Kind.EXTEND, "", HELD, "apply", null),
                Arguments.of(Call.Kind.CONFIRM, "order-1", HELD_EXTENDED, "apply", null),
                Arguments.of(Call.Kind.RELEASE, "", HELD_EXTENDED, "apply", null),
                Arguments.of(Call.Kind.EXTEND, "", HELD_EXTENDED, "ALREADY_EXTENDED", HoldState.HELD),
                Arguments.of(Call.Kind.CONFIRM, "order-1", SOLD, "ok", null),
                Arguments.of(Call.Kind.CONFIRM, "order-2", SOLD, "ORDER_REF_MISMATCH", HoldState.SOLD),
                Arguments.of(Call.Kind.RELEASE, "", SOLD, "NOT_HELD", HoldState.SOLD),
                Arguments.of(Call.Kind.EXTEND, "", SOLD, "NOT_HELD", HoldState.SOLD),
                Arguments.of(Call.Kind.CONFIRM, "order-1", RELEASED, "NOT_HELD", HoldState.RELEASED),
                Arguments.of(Call.Kind.RELEASE, "", RELEASED, "NOT_HELD", HoldState.RELEASED),
                Arguments.of(Call.Kind.EXTEND, "", RELEASED, "NOT_HELD", HoldState.RELEASED),
                Arguments.of(Call.Kind.CONFIRM, "order-1", EXPIRED, "NOT_HELD", HoldState.EXPIRED),
                // HELD past its expiry by the database clock reads EXPIRED before any sweep.
                Arguments.of(Call.Kind.CONFIRM, "order-1", HELD_DUE, "NOT_HELD", HoldState.EXPIRED),
                Arguments.of(Call.Kind.RELEASE, "", HELD_DUE, "NOT_HELD", HoldState.EXPIRED),
                Arguments.of(Call.Kind.EXTEND, "", HELD_DUE, "NOT_HELD", HoldState.EXPIRED),
                Arguments.of(Call.Kind.RELEASE, "", null, "NOT_FOUND", null),
                Arguments.of(Call.Kind.CONFIRM, "order-1", null, "NOT_FOUND", null));
    }

    @ParameterizedTest(name = "{0} {1} on {2} -> {3}")
    @MethodSource("table")
    void judge_answersWhatARetryWouldGet(Call.Kind kind, String orderRef, HoldFacts row, String expected,
                                         HoldState state) {
        Outcome o = HoldRules.judge(new Call.Transition(0, SLOT, ID, "local", kind, orderRef), row, NOW);
        switch (expected) {
            case "apply" -> assertThat(o).isNull();
            case "ok" -> assertThat(o).isEqualTo(new Outcome.Unchanged(row));
            default -> {
                assertThat(o).isInstanceOf(Outcome.Refused.class);
                Outcome.Refused r = (Outcome.Refused) o;
                assertThat(r.why()).isEqualTo(Outcome.Refusal.valueOf(expected));
                assertThat(r.state()).isEqualTo(state);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("otherIds")
    void judge_aRowWhoseIdDiffersInAnyPart_isNotFound(Call.Transition other) {
        assertThat(HoldRules.judge(other, HELD, NOW)).isEqualTo(new Outcome.Refused(Outcome.Refusal.NOT_FOUND, null,
                null));
    }

    static Stream<Call.Transition> otherIds() {
        return Stream.of(new Call.Transition(0, new Slot("t2", "i", 0), ID, "local", Call.Kind.RELEASE, ""),
                new Call.Transition(0, new Slot("t", "i2", 0), ID, "local", Call.Kind.RELEASE, ""),
                new Call.Transition(0, SLOT, ID, "eu", Call.Kind.RELEASE, ""),
                new Call.Transition(0, new Slot("t", "i", 1), ID, "local", Call.Kind.RELEASE, ""));
    }
}
