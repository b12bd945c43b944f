package io.lastunit.admin.move.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every transition of a tenant move, one table row each: the recorded step and the facts of
 * carrying it out in, the next action and the gist of its reason out. The policy: small passes are
 * at most 500 rows, at most 8 catch-up passes, 50 ms of the 2,000 ms budget kept for the flip.
 */
class MovePlannerTest {
    private static final MovePlanner PLANNER = new MovePlanner(new MovePolicy(500, 8, 50));
    private static final long FENCED_AT = 1_000_000;

    private static Move move(MoveStep step, UnaryOperator<Move.Builder> change) {
        return change.apply(Move.newBuilder().setMoveId("m1").setTenantId("acme").setFromCell("shared")
                .setToCell("big").setStep(step).setMaxPauseMs(2_000).setFencedAtMs(FENCED_AT)).build();
    }

    private static Move move(MoveStep step) {
        return move(step, b -> b);
    }

    private static Move rounds(int n) {
        return move(MoveStep.CATCHING_UP, b -> b.setCatchUpRounds(n));
    }

    private static Move abortRequested(MoveStep step) {
        return move(step, b -> b.setAbortRequested(true).setReason("operator says no"));
    }

    private static MoveFacts at(long fencedMs) {
        return MoveFacts.done(FENCED_AT + fencedMs);
    }

    private static MoveFacts failed() {
        return MoveFacts.failed(FENCED_AT, "shard s1 UNAVAILABLE");
    }

    private static MoveFacts pass(long rows, long ms, long pending) {
        return MoveFacts.pass(FENCED_AT, rows, ms, pending);
    }

    static Stream<Arguments> transitions() {
        return Stream.of(
                // PLANNED
                arguments("planned → copy", move(MoveStep.PLANNED), at(0), MoveAction.COPY, "planned"),
                arguments("planned, leftovers not dropped → abort", move(MoveStep.PLANNED), failed(),
                        MoveAction.ABORT, "PLANNED failed: shard s1 UNAVAILABLE"),
                arguments("planned, abort requested → abort", abortRequested(MoveStep.PLANNED), at(0),
                        MoveAction.ABORT, "abort requested at PLANNED: operator says no"),
                // COPYING
                arguments("copied → catch up", move(MoveStep.COPYING), pass(5_000, 900, 0), MoveAction.CATCH_UP,
                        "copied 5000 rows in 900 ms"),
                arguments("copy failed → abort", move(MoveStep.COPYING), failed(), MoveAction.ABORT,
                        "COPYING failed"),
                arguments("copying, abort requested → abort", abortRequested(MoveStep.COPYING), pass(1, 1, 0),
                        MoveAction.ABORT, "abort requested"),
                // CATCHING_UP
                arguments("large delta, passes left → another pass", rounds(1), pass(10_000, 800, 0),
                        MoveAction.CATCH_UP, "copied 10000 rows in 800 ms, more than 500"),
                arguments("small delta → fence", rounds(1), pass(100, 30, 0), MoveAction.FENCE,
                        "pause estimated at 80 ms of 2000"),
                arguments("delta at the threshold → fence", rounds(3), pass(500, 30, 0), MoveAction.FENCE, "fencing"),
                arguments("last pass, large delta, pause fits → fence anyway", rounds(8), pass(10_000, 300, 0),
                        MoveAction.FENCE, "(the last pass allowed)"),
                arguments("last pass, large delta, pause too long → abort", rounds(8), pass(10_000, 5_000, 0),
                        MoveAction.ABORT, "after 8 catch-up passes the last copied 10000 rows in 5000 ms: a fenced"
                                + " pause of about 5050 ms would pass the budget of 2000 ms"),
                arguments("last pass, pause just fits → fence", rounds(8), pass(10_000, 1_950, 0), MoveAction.FENCE,
                        "2000 ms of 2000"),
                arguments("last pass, pause just over → abort", rounds(8), pass(10_000, 1_951, 0), MoveAction.ABORT,
                        "2001 ms"),
                arguments("small but slow, passes left → another pass", rounds(2), pass(100, 3_000, 0),
                        MoveAction.CATCH_UP, "a pause of about 3050 ms would pass the budget"),
                arguments("transfers pending → wait for them", rounds(1), pass(100, 30, 2),
                        MoveAction.WAIT_FOR_TRANSFERS, "2 transfers of the tenant are pending on shared"),
                arguments("transfers still pending after the wait → abort", rounds(1), pass(100, 30, 2)
                        .afterWait(FENCED_AT, 2), MoveAction.ABORT, "still pending on shared after waiting"),
                arguments("transfers done after the wait, passes left → one more pass", rounds(1),
                        pass(100, 30, 2).afterWait(FENCED_AT, 0), MoveAction.CATCH_UP, "catching up once more"),
                arguments("transfers done after the wait, no passes left → fence", rounds(8),
                        pass(100, 30, 2).afterWait(FENCED_AT, 0), MoveAction.FENCE, "fencing"),
                arguments("large delta and transfers pending → pass first", rounds(1), pass(10_000, 30, 3),
                        MoveAction.CATCH_UP, "more than 500"),
                arguments("catching up, abort requested → abort", abortRequested(MoveStep.CATCHING_UP),
                        pass(100, 30, 0), MoveAction.ABORT, "abort requested at CATCHING_UP"),
                arguments("catch-up pass failed → abort", rounds(2), failed(), MoveAction.ABORT,
                        "CATCHING_UP failed"),
                arguments("small delta, settled rows equal → fence", rounds(1),
                        pass(100, 30, 0).withDifferences(List.of()), MoveAction.FENCE, "fencing"),
                arguments("settled rows differ before the fence → abort", rounds(1),
                        pass(100, 30, 0).withDifferences(List.of("item x in eu: holds_by_state ...")), MoveAction.ABORT,
                        "before the fence, the rows that no longer change differ in 1 place between shared and big,"
                                + " the first: item x in eu: holds_by_state ..."),
                // FENCED
                arguments("fenced within budget → verify", move(MoveStep.FENCED), at(500), MoveAction.VERIFY,
                        "fenced for 500 ms"),
                arguments("fenced at the budget less the reserve → verify", move(MoveStep.FENCED), at(1_950),
                        MoveAction.VERIFY, "1950 ms"),
                arguments("fenced past the budget less the reserve → abort", move(MoveStep.FENCED), at(1_951),
                        MoveAction.ABORT, "fenced for 1951 ms at FENCED: with 50 ms for the flip, over the pause"
                                + " budget of 2000 ms"),
                arguments("freeze failed → abort", move(MoveStep.FENCED), failed(), MoveAction.ABORT,
                        "FENCED failed"),
                arguments("fenced, abort requested → abort", abortRequested(MoveStep.FENCED), at(10),
                        MoveAction.ABORT, "abort requested at FENCED"),
                // VERIFIED
                arguments("verified equal within budget → flip", move(MoveStep.VERIFIED),
                        MoveFacts.verified(FENCED_AT + 600, List.of()), MoveAction.FLIP, "verified after 600 ms fenced"),
                arguments("verification found differences → abort", move(MoveStep.VERIFIED),
                        MoveFacts.verified(FENCED_AT + 600, List.of("item a in eu: held 2 at the source, 1 at the"
                                + " target", "item b in eu: missing at the target")), MoveAction.ABORT,
                        "verification found 2 differences between shared and big, the first: item a in eu: held 2"),
                arguments("verified but over budget → abort", move(MoveStep.VERIFIED),
                        MoveFacts.verified(FENCED_AT + 2_500, List.of()), MoveAction.ABORT, "at VERIFIED"),
                arguments("verification failed → abort", move(MoveStep.VERIFIED), failed(), MoveAction.ABORT,
                        "VERIFIED failed"),
                arguments("verified, abort requested → abort", abortRequested(MoveStep.VERIFIED),
                        MoveFacts.verified(FENCED_AT, List.of()), MoveAction.ABORT, "abort requested at VERIFIED"),
                // FLIPPED: the commit point, never aborted
                arguments("flipped → clean", move(MoveStep.FLIPPED), at(700), MoveAction.CLEAN, "flipped to big"),
                arguments("flipped, activation failed → halt, roll forward later", move(MoveStep.FLIPPED), failed(),
                        MoveAction.HALT, "FLIPPED failed for now (shard s1 UNAVAILABLE); the move rolls forward"),
                arguments("flipped, abort requested → clean anyway", abortRequested(MoveStep.FLIPPED), at(10),
                        MoveAction.CLEAN, "flipped"),
                arguments("flipped over budget → clean anyway", move(MoveStep.FLIPPED), at(60_000), MoveAction.CLEAN,
                        "flipped"),
                // CLEANED
                arguments("cleaned → finish", move(MoveStep.CLEANED), at(0), MoveAction.FINISH, "cleaned up"),
                arguments("cleaned and finished → done", move(MoveStep.CLEANED, b -> b.setFinishedAtMs(5)), at(0),
                        MoveAction.DONE, "finished"),
                arguments("clean-up failed → halt", move(MoveStep.CLEANED), failed(), MoveAction.HALT,
                        "rolls forward when it is resumed"),
                arguments("cleaned, abort requested → finish", abortRequested(MoveStep.CLEANED), at(0),
                        MoveAction.FINISH, "cleaned up"),
                // ABORTING, ABORTED
                arguments("rolled back → finish", move(MoveStep.ABORTING), at(0), MoveAction.FINISH, "rolled back"),
                arguments("roll-back failed → halt, roll back later", move(MoveStep.ABORTING), failed(),
                        MoveAction.HALT, "ABORTING failed for now (shard s1 UNAVAILABLE); the move rolls back"),
                arguments("aborted → done", move(MoveStep.ABORTED), at(0), MoveAction.DONE, "aborted"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transitions")
    void next(String name, Move move, MoveFacts facts, MoveAction action, String reason) {
        MoveDecision d = PLANNER.next(move, facts);

        assertThat(d.action()).as(d.reason()).isEqualTo(action);
        assertThat(d.reason()).contains(reason);
    }

    static Stream<Arguments> beforeActing() {
        return Stream.of(
                arguments("planned → act", move(MoveStep.PLANNED), 0L, null),
                arguments("copying, abort requested → abort without acting", abortRequested(MoveStep.COPYING), 0L,
                        "abort requested at COPYING"),
                arguments("catching up → act", rounds(3), 10_000L, null),
                arguments("fenced within budget → act", move(MoveStep.FENCED), 100L, null),
                arguments("fenced, resumed past the budget → abort without acting", move(MoveStep.FENCED), 30_000L,
                        "fenced for 30000 ms at FENCED"),
                arguments("verified, resumed past the budget → abort", move(MoveStep.VERIFIED), 1_951L,
                        "at VERIFIED"),
                arguments("flipped long ago, abort requested → act (roll forward)", abortRequested(MoveStep.FLIPPED),
                        60_000L, null),
                arguments("cleaned → act", move(MoveStep.CLEANED), 60_000L, null),
                arguments("aborting, abort requested → act (roll back)", abortRequested(MoveStep.ABORTING), 0L, null),
                arguments("aborted → act", move(MoveStep.ABORTED), 0L, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("beforeActing")
    void beforeActing(String name, Move move, long fencedMs, String abortReason) {
        MoveDecision d = PLANNER.beforeActing(move, FENCED_AT + fencedMs);

        if (abortReason == null) {
            assertThat(d).isNull();
        } else {
            assertThat(d.action()).isEqualTo(MoveAction.ABORT);
            assertThat(d.reason()).contains(abortReason);
        }
    }

    @Test
    void everyActionThatRecords_namesTheStepItRecords() {
        assertThat(MoveAction.COPY.step()).isEqualTo(MoveStep.COPYING);
        assertThat(MoveAction.CATCH_UP.step()).isEqualTo(MoveStep.CATCHING_UP);
        assertThat(MoveAction.FENCE.step()).isEqualTo(MoveStep.FENCED);
        assertThat(MoveAction.VERIFY.step()).isEqualTo(MoveStep.VERIFIED);
        assertThat(MoveAction.FLIP.step()).isEqualTo(MoveStep.FLIPPED);
        assertThat(MoveAction.CLEAN.step()).isEqualTo(MoveStep.CLEANED);
        assertThat(MoveAction.ABORT.step()).isEqualTo(MoveStep.ABORTING);
        for (MoveAction a : List.of(MoveAction.WAIT_FOR_TRANSFERS, MoveAction.FINISH, MoveAction.HALT,
                MoveAction.DONE)) {
            assertThat(a.step()).as(a.name()).isNull();
        }
    }

    @Test
    void beforeCommitPoint_isEveryStepBeforeFlipped() {
        for (MoveStep s : MoveStep.values()) {
            if (s == MoveStep.UNRECOGNIZED || s == MoveStep.MOVE_STEP_UNSPECIFIED) {
                continue;
            }
            boolean before = s.getNumber() < MoveStep.FLIPPED_VALUE;
            assertThat(MovePlanner.beforeCommitPoint(s)).as(s.name()).isEqualTo(before);
        }
    }

    @Test
    void finished_isCleanedWithAFinishTime_orAborted() {
        assertThat(MovePlanner.finished(move(MoveStep.ABORTED))).isTrue();
        assertThat(MovePlanner.finished(move(MoveStep.CLEANED, b -> b.setFinishedAtMs(1)))).isTrue();
        assertThat(MovePlanner.finished(move(MoveStep.CLEANED))).isFalse();
        assertThat(MovePlanner.finished(move(MoveStep.ABORTING))).isFalse();
        assertThat(MovePlanner.finished(move(MoveStep.FLIPPED))).isFalse();
    }

    @Test
    void aMoveWithoutAStep_isRefused() {
        assertThatThrownBy(() -> PLANNER.next(move(MoveStep.MOVE_STEP_UNSPECIFIED), at(0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("m1 has no step");
    }

    @Test
    void policy_refusesOutOfBoundSettings_namingEach() {
        assertThatThrownBy(() -> new MovePolicy(-1, 0, 20_000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("deltaRowsSmall=-1")
                .hasMessageContaining("catchUpRoundsMax=0")
                .hasMessageContaining("flipReserveMs=20000");
        assertThat(MovePolicy.defaults().catchUpRoundsMax()).isEqualTo(8);
    }

    @Test
    void facts_refuseNegativeFigures() {
        assertThatThrownBy(() -> MoveFacts.pass(0, -1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
