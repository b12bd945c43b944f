package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Many concurrent calls of one transition on one hold: within a batch they are decided as if they
 * had arrived one after another, so the first takes effect and every other gets exactly what a
 * retry would get — never UNAVAILABLE (which means "the store failed, outcome unknown"). 50 and
 * 500 calls at once, sent without waiting, over a real socket to a real shard node on PostgreSQL;
 * every answer is checked, and the stock moves once.
 */
class DuplicateTransitionsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "dup";
    private static final int QTY = 2;
    /** How long one call may take: a minute, scaled for slow machines. */
    private static final long CALL_MS = TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis();
    private static ShardNodeHarness shard;
    private static int items;

    @BeforeAll
    static void start() throws Exception {
        // One lane, so that every call on a hold reaches the same queue and batches fill with them.
        shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.lanes", 1)).start();
    }

    @AfterAll
    static void stop() {
        if (shard != null) {
            shard.close();
        }
    }

    /** A fresh item of 10 units with one HELD hold of {@link #QTY} units on it. */
    private static Hold freshHold() {
        String item = "item-" + (++items);
        shard.createItem(TENANT, item, 10);
        ReserveResponse r = shard.blocking().reserve(ReserveRequest.newBuilder().setTenantId(TENANT).setItemId(item)
                .setQuantity(QTY).setIdempotencyKey("k-" + item).setBuyerId("buyer").setRegion("local")
                .setHoldTtlMs(3_600_000).build());
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        return r.getHold();
    }

    private static Stock stock(Hold h) {
        return shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId(TENANT).setItemId(h.getItemId())
                .setRegion("local").build()).getStock();
    }

    /** The answer of one call: the hold, or the failure's status code, reason and state. */
    private record Answer(Hold hold, Status.Code code, String reason, String state) {
        static Answer of(ListenableFuture<Hold> f) throws InterruptedException {
            Duration wait = TestTimeouts.scaled(Duration.ofSeconds(60));
            try {
                return new Answer(f.get(wait.toMillis(), TimeUnit.MILLISECONDS), Status.Code.OK, "", "");
            } catch (ExecutionException e) {
                StatusRuntimeException s = (StatusRuntimeException) e.getCause();
                var info = GrpcErrors.errorInfo(s).orElseThrow();
                return new Answer(null, s.getStatus().getCode(), info.getReason(),
                        info.getMetadataOrDefault("state", ""));
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("no answer within " + wait, e);
            }
        }

        boolean ok() {
            return code == Status.Code.OK;
        }

        boolean refused(Reason r, String withState) {
            return code == r.code() && reason.equals(r.name()) && state.equals(withState);
        }
    }

    /** Sends every call at once (no waiting between them), then collects every answer in order. */
    private static List<Answer> burst(int n, Function<Integer, ListenableFuture<Hold>> call)
            throws InterruptedException {
        List<ListenableFuture<Hold>> calls = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            calls.add(call.apply(i));
        }
        List<Answer> answers = new ArrayList<>(n);
        for (ListenableFuture<Hold> f : calls) {
            answers.add(Answer.of(f));
        }
        return answers;
    }

    private static ListenableFuture<Hold> confirm(Hold h, String orderRef) {
        return com.google.common.util.concurrent.Futures.transform(shard.async().withDeadlineAfter(CALL_MS, TimeUnit.MILLISECONDS)
                        .confirm(ConfirmRequest.newBuilder().setHoldId(h.getHoldId()).setOrderRef(orderRef).build()),
                r -> r.getHold(), com.google.common.util.concurrent.MoreExecutors.directExecutor());
    }

    private static ListenableFuture<Hold> release(Hold h) {
        return com.google.common.util.concurrent.Futures.transform(shard.async().withDeadlineAfter(CALL_MS, TimeUnit.MILLISECONDS)
                        .release(ReleaseRequest.newBuilder().setHoldId(h.getHoldId()).build()),
                r -> r.getHold(), com.google.common.util.concurrent.MoreExecutors.directExecutor());
    }

    private static ListenableFuture<Hold> extend(Hold h) {
        return com.google.common.util.concurrent.Futures.transform(shard.async().withDeadlineAfter(CALL_MS, TimeUnit.MILLISECONDS)
                        .extend(ExtendRequest.newBuilder().setHoldId(h.getHoldId()).build()),
                r -> r.getHold(), com.google.common.util.concurrent.MoreExecutors.directExecutor());
    }

    private static void assertStock(Hold h, long available, long held, long sold) {
        Stock s = stock(h);
        assertThat(new long[] {s.getAvailable(), s.getHeld(), s.getSold()}).containsExactly(available, held, sold);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @ParameterizedTest(name = "{0} at once")
    @ValueSource(ints = {50, 500})
    void confirmsWithTheSameOrderRef_allAnswerTheSoldHold(int n) throws Exception {
        Hold h = freshHold();
        List<Answer> answers = burst(n, i -> confirm(h, "order-1"));
        for (Answer a : answers) {
            assertThat(a.ok()).as("every Confirm with the same order ref is OK: %s", a).isTrue();
            assertThat(a.hold().getState()).isEqualTo(HoldState.SOLD);
            assertThat(a.hold().getOrderRef()).isEqualTo("order-1");
            assertThat(a.hold().getHoldId()).isEqualTo(h.getHoldId());
        }
        assertStock(h, 10 - QTY, 0, QTY);
    }

    @ParameterizedTest(name = "{0} at once")
    @ValueSource(ints = {50, 500})
    void confirmsWithOtherOrderRefs_oneWins_theOthersAreOrderRefMismatch(int n) throws Exception {
        Hold h = freshHold();
        List<Answer> answers = burst(n, i -> confirm(h, "order-" + i));
        List<Answer> won = answers.stream().filter(Answer::ok).toList();
        assertThat(won).hasSize(1);
        assertThat(won.get(0).hold().getOrderRef()).isEqualTo("order-" + answers.indexOf(won.get(0)));
        for (Answer a : answers) {
            if (!a.ok()) {
                assertThat(a.refused(Reason.ORDER_REF_MISMATCH, "SOLD")).as("%s", a).isTrue();
            }
        }
        assertStock(h, 10 - QTY, 0, QTY);
    }

    @ParameterizedTest(name = "{0} at once")
    @ValueSource(ints = {50, 500})
    void releases_oneTakesEffect_theOthersAreHoldNotHeldReleased(int n) throws Exception {
        Hold h = freshHold();
        List<Answer> answers = burst(n, i -> release(h));
        assertThat(answers.stream().filter(Answer::ok).count()).isEqualTo(1);
        for (Answer a : answers) {
            if (a.ok()) {
                assertThat(a.hold().getState()).isEqualTo(HoldState.RELEASED);
            } else {
                assertThat(a.refused(Reason.HOLD_NOT_HELD, "RELEASED")).as("%s", a).isTrue();
            }
        }
        assertStock(h, 10, 0, 0);
    }

    @ParameterizedTest(name = "{0} at once")
    @ValueSource(ints = {50, 500})
    void extends_oneTakesEffect_theOthersAreAlreadyExtended(int n) throws Exception {
        Hold h = freshHold();
        List<Answer> answers = burst(n, i -> extend(h));
        List<Answer> won = answers.stream().filter(Answer::ok).toList();
        assertThat(won).hasSize(1);
        Hold extended = won.get(0).hold();
        assertThat(extended.getExtended()).isTrue();
        assertThat(extended.getExpiresAt().getSeconds() - h.getExpiresAt().getSeconds())
                .as("pushed out once by the item's extend_by (its hold TTL, 10 minutes)").isBetween(599L, 601L);
        for (Answer a : answers) {
            if (!a.ok()) {
                assertThat(a.refused(Reason.HOLD_ALREADY_EXTENDED, "HELD")).as("%s", a).isTrue();
            }
        }
        assertStock(h, 10 - QTY, QTY, 0);
    }

    /**
     * Confirms (one order ref) and Releases alternate: whichever the lane takes first wins, and
     * every other call gets what follows from it.
     */
    @ParameterizedTest(name = "{0} at once")
    @ValueSource(ints = {50, 500})
    void confirmsRacingReleases_theFirstWins_everyOtherAnswerFollowsFromIt(int n) throws Exception {
        Hold h = freshHold();
        List<Answer> answers = burst(n, i -> i % 2 == 0 ? confirm(h, "order-1") : release(h));
        boolean confirmed = answers.get(0).ok() || answers.stream().filter(Answer::ok)
                .anyMatch(a -> a.hold().getState() == HoldState.SOLD);
        for (int i = 0; i < n; i++) {
            Answer a = answers.get(i);
            boolean isConfirm = i % 2 == 0;
            if (confirmed) {
                assertThat(isConfirm ? a.ok() && a.hold().getState() == HoldState.SOLD
                        : a.refused(Reason.HOLD_NOT_HELD, "SOLD")).as("call %d after the Confirm won: %s", i, a)
                        .isTrue();
            } else {
                assertThat(a.ok() ? !isConfirm && a.hold().getState() == HoldState.RELEASED
                        : a.refused(Reason.HOLD_NOT_HELD, "RELEASED")).as("call %d after a Release won: %s", i, a)
                        .isTrue();
            }
        }
        if (confirmed) {
            assertStock(h, 10 - QTY, 0, QTY);
        } else {
            assertThat(answers.stream().filter(Answer::ok).count()).isEqualTo(1);
            assertStock(h, 10, 0, 0);
        }
    }

    /**
     * Extends and Releases alternate: at most one Extend and exactly one Release take effect (an
     * Extend and then a Release are two rounds of one batch); every other call finds the hold
     * extended or released.
     */
    @ParameterizedTest(name = "{0} at once")
    @ValueSource(ints = {50, 500})
    void extendsAndReleases_eachTakesEffectOnce_theRestFindTheHoldExtendedOrReleased(int n) throws Exception {
        Hold h = freshHold();
        List<Answer> answers = burst(n, i -> i % 2 == 0 ? extend(h) : release(h));
        int extended = 0;
        int released = 0;
        for (int i = 0; i < n; i++) {
            Answer a = answers.get(i);
            if (a.ok() && i % 2 == 0) {
                assertThat(a.hold().getExtended()).isTrue();
                extended++;
            } else if (a.ok()) {
                assertThat(a.hold().getState()).isEqualTo(HoldState.RELEASED);
                released++;
            } else {
                assertThat(a.refused(Reason.HOLD_NOT_HELD, "RELEASED")
                        || (i % 2 == 0 && a.refused(Reason.HOLD_ALREADY_EXTENDED, "HELD"))).as("call %d: %s", i, a)
                        .isTrue();
            }
        }
        assertThat(extended).isBetween(0, 1);
        assertThat(released).isEqualTo(1);
        assertStock(h, 10, 0, 0);
    }

    /**
     * Releases of holds of an unlimited and of a limited item in one batch: each released hold of
     * the limited item gives its buyer's usage back, whichever item's Release comes first.
     */
    @org.junit.jupiter.api.Test
    void releasesOfALimitedAndAnUnlimitedItemInOneBurst_giveBackEveryBuyersUsage() throws Exception {
        int holds = 100;
        String free = "item-" + (++items);
        String limited = "item-" + (++items);
        shard.createItem(TENANT, free, holds);
        shard.blocking().createItem(io.lastunit.api.inventory.v1.CreateItemRequest.newBuilder().setTenantId(TENANT)
                .setItemId(limited).setTotal(holds * 2).setPerBuyerLimit(2).setHomeRegion("local").build());
        List<Hold> placed = new ArrayList<>();
        for (int i = 0; i < holds; i++) {
            for (String item : List.of(free, limited)) {
                ReserveResponse r = shard.blocking().reserve(ReserveRequest.newBuilder().setTenantId(TENANT)
                        .setItemId(item).setQuantity(1).setIdempotencyKey(item + "-" + i).setBuyerId("buyer-" + i)
                        .setRegion("local").setHoldTtlMs(3_600_000).build());
                assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
                placed.add(r.getHold());
            }
        }
        List<Answer> answers = burst(placed.size(), i -> release(placed.get(i)));
        assertThat(answers).allMatch(Answer::ok);
        assertThat(shard.checkInvariants().getDriftsList()).as("buyer usage given back").isEmpty();
        for (int i = 0; i < holds; i++) { // each buyer may hold two units again
            ReserveResponse r = shard.blocking().reserve(ReserveRequest.newBuilder().setTenantId(TENANT)
                    .setItemId(limited).setQuantity(2).setIdempotencyKey("again-" + i).setBuyerId("buyer-" + i)
                    .setRegion("local").build());
            assertThat(r.getOutcome()).as("buyer-%d", i).isEqualTo(ReserveOutcome.RESERVED);
        }
    }
}
