package io.lastunit.router.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** ReserveFlow against scripted shard and balancer answers: no I/O, a fake ticker for deadlines. */
class ReserveFlowTest {
    static final Duration PULL_WAIT = Duration.ofMillis(1_000);
    static final int PULLS_MAX = 3;

    static final ReserveRequest REQUEST = ReserveRequest.newBuilder().setTenantId("acme").setItemId("sku-1")
            .setQuantity(2).setIdempotencyKey("key-1").setBuyerId("buyer-1").setRegion("us").build();
    static final ReserveResponse RESERVED = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
            .setHold(Hold.newBuilder().setHoldId("hold-us").setQuantity(2)).build();
    static final ReserveResponse SOLD_OUT = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).build();
    static final ReserveResponse DRY = SOLD_OUT.toBuilder().setRegionDry(true).build();

    final FakeTicker ticker = new FakeTicker();
    final Deadline deadline = Deadline.after(10, TimeUnit.SECONDS, ticker);
    final Scripted<ReserveRequest, ReserveResponse> shard = new Scripted<>();
    final Scripted<PullRequest, PullResponse> balancer = new Scripted<>();
    final ReserveFlow flow = new ReserveFlow(balancer::call, PULL_WAIT, PULLS_MAX);

    static final class FakeTicker extends Deadline.Ticker {
        long nanos = 1_000_000_000L;

        @Override
        public long nanoTime() {
            return nanos;
        }
    }

    /** Answers calls from a script, in order; records every request and the deadline it came with. */
    static final class Scripted<Q, A> {
        final Deque<Object> script = new ArrayDeque<>();
        final List<Q> requests = new ArrayList<>();
        final List<Deadline> deadlines = new ArrayList<>();

        Scripted<Q, A> then(Object answerOrFailure) {
            script.add(answerOrFailure);
            return this;
        }

        @SuppressWarnings("unchecked")
        CompletableFuture<A> call(Q request, Deadline deadline) {
            requests.add(request);
            deadlines.add(deadline);
            Object next = script.poll();
            if (next == null) {
                throw new AssertionError("unexpected call " + request);
            }
            if (next instanceof RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
            return CompletableFuture.completedFuture((A) next);
        }
    }

    static PullResponse moved(long n) {
        return PullResponse.newBuilder().setMoved(n).build();
    }

    static PullRequest expectedPull(String region) {
        return PullRequest.newBuilder().setTenantId("acme").setItemId("sku-1").setRegion(region).setQuantity(2).build();
    }

    ReserveFlow.Answer reserve() {
        CompletableFuture<ReserveFlow.Answer> f = flow.reserve(REQUEST, deadline, shard::call);
        assertThat(f).as("every scripted answer is immediate").isDone();
        return f.join();
    }

    Failure reserveFails() {
        return failureOf(flow.reserve(REQUEST, deadline, shard::call));
    }

    static Failure failureOf(CompletableFuture<?> f) {
        assertThat(f).isCompletedExceptionally();
        Throwable e = f.handle((a, err) -> err).join();
        Throwable cause = e instanceof CompletionException ? e.getCause() : e;
        assertThat(cause).isInstanceOf(Failure.class);
        return (Failure) cause;
    }

    static void assertBalancerUnavailable(Failure f, Duration retryAfter) {
        assertThat(f.reason()).isEqualTo(Reason.BALANCER_UNAVAILABLE);
        assertThat(f.retryAfter()).isEqualTo(retryAfter);
        StatusRuntimeException status = GrpcErrors.toStatus(f);
        assertThat(status.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(GrpcErrors.retryAfterMs(status)).isEqualTo(retryAfter.toMillis());
    }

    @Test
    void reserve_passesReservedThrough_withoutPull() {
        shard.then(RESERVED);

        ReserveFlow.Answer a = reserve();

        assertThat(a.response()).isEqualTo(RESERVED);
        assertThat(a.soldOutFinal()).isFalse();
        assertThat(shard.requests).containsExactly(REQUEST);
        assertThat(shard.deadlines).containsExactly(deadline);
        assertThat(balancer.requests).isEmpty();
    }

    @Test
    void reserve_soldOutWithoutRegionDry_isFinal_withoutPull() {
        shard.then(SOLD_OUT);

        ReserveFlow.Answer a = reserve();

        assertThat(a.response()).isEqualTo(SOLD_OUT);
        assertThat(a.soldOutFinal()).isTrue();
        assertThat(balancer.requests).isEmpty();
    }

    @Test
    void reserve_regionDry_pullsOnce_thenSendsTheSameReserveAgain_andAnswersItsHold() {
        shard.then(DRY).then(RESERVED);
        balancer.then(moved(5));

        ReserveFlow.Answer a = reserve();

        assertThat(a.response()).isEqualTo(RESERVED);
        assertThat(a.response().getRegionDry()).isFalse();
        assertThat(a.soldOutFinal()).isFalse();
        assertThat(balancer.requests).containsExactly(expectedPull("us"));
        assertThat(shard.requests).containsExactly(REQUEST, REQUEST); // same key, same region
        assertThat(shard.deadlines).containsExactly(deadline, deadline);
    }

    @Test
    void reserve_regionDry_pullMovesNothing_answersFinalSoldOut_withRegionDryCleared() {
        shard.then(DRY);
        balancer.then(moved(0));

        ReserveFlow.Answer a = reserve();

        assertThat(a.response()).isEqualTo(SOLD_OUT);
        assertThat(a.response().getRegionDry()).isFalse();
        assertThat(a.soldOutFinal()).isTrue();
        assertThat(shard.requests).hasSize(1);
        assertThat(balancer.requests).hasSize(1);
    }

    @Test
    void reserve_regionDry_collapsed_sendsTheReserveToTheHomeRegion() {
        ReserveResponse home = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                .setHold(Hold.newBuilder().setHoldId("hold-eu")).build();
        shard.then(DRY).then(home);
        balancer.then(PullResponse.newBuilder().setCollapsed(true).setHomeRegion("eu").build());

        ReserveFlow.Answer a = reserve();

        assertThat(a.response()).isEqualTo(home);
        assertThat(shard.requests).containsExactly(REQUEST,
                REQUEST.toBuilder().setRegion("eu").setOriginRegion("us").build());
    }

    @Test
    void reserve_regionDry_collapsedAndSoldOutAtHome_isFinal() {
        shard.then(DRY).then(SOLD_OUT);
        balancer.then(PullResponse.newBuilder().setCollapsed(true).setHomeRegion("eu").build());

        ReserveFlow.Answer a = reserve();

        assertThat(a.response()).isEqualTo(SOLD_OUT);
        assertThat(a.soldOutFinal()).isTrue();
    }

    @Test
    void reserve_regionStaysDry_pullsExactlyPullAttemptsMax_thenAsksForARetry_neverSoldOut() {
        shard.then(DRY).then(DRY).then(DRY).then(DRY);
        balancer.then(moved(2)).then(moved(2)).then(moved(2));

        Failure f = reserveFails();

        assertThat(f.reason()).isEqualTo(Reason.ITEM_BUSY);
        assertThat(f.retryAfter()).isNotNull();
        assertThat(balancer.requests).hasSize(PULLS_MAX).containsOnly(expectedPull("us"));
        assertThat(shard.requests).hasSize(PULLS_MAX + 1).containsOnly(REQUEST);
    }

    @Test
    void reserve_homeRegionDry_andItemCollapsedHome_isAFinalSoldOut() {
        ReserveRequest home = REQUEST.toBuilder().setRegion("us").build();
        shard.then(DRY);
        balancer.then(PullResponse.newBuilder().setCollapsed(true).setHomeRegion("us").build());

        ReserveFlow.Answer a = reserve();

        assertThat(a.response()).isEqualTo(SOLD_OUT);
        assertThat(a.soldOutFinal()).isTrue();
        assertThat(shard.requests).as("no second call to the home shard").hasSize(1).containsOnly(home);
    }

    @Test
    void reserve_regionDryTwiceThenReserved_stopsPulling() {
        shard.then(DRY).then(DRY).then(RESERVED);
        balancer.then(moved(1)).then(moved(3));

        assertThat(reserve().response()).isEqualTo(RESERVED);
        assertThat(balancer.requests).hasSize(2);
    }

    @Test
    void reserve_pullFailsAsBalancerUnavailable_passesThatFailureOn() {
        Failure noLeader = Failure.retryable(Reason.BALANCER_UNAVAILABLE, "no leader", Duration.ofMillis(700));
        shard.then(DRY);
        balancer.then(noLeader);

        assertThat(reserveFails()).isSameAs(noLeader);
        assertThat(shard.requests).hasSize(1);
    }

    @Test
    void reserve_pullTimesOut_answersBalancerUnavailableWithRetryHint_neverSoldOut() {
        shard.then(DRY);
        balancer.then(Status.DEADLINE_EXCEEDED.withDescription("late").asRuntimeException());

        Failure f = reserveFails();

        assertBalancerUnavailable(f, ReserveFlow.RETRY_AFTER);
        assertThat(f.getMessage()).isEqualTo("no balancer answer to Pull(acme/sku-1 into us, quantity=2): "
                + "DEADLINE_EXCEEDED: late");
    }

    @Test
    void reserve_pullRefusedWithRetryInfo_keepsTheBalancersHint() {
        com.google.rpc.Status notLeader = com.google.rpc.Status.newBuilder()
                .setCode(Status.Code.UNAVAILABLE.value()).setMessage("standby")
                .addDetails(Any.pack(ErrorInfo.newBuilder().setReason(Reason.NOT_LEADER.name()).build()))
                .addDetails(Any.pack(RetryInfo.newBuilder()
                        .setRetryDelay(com.google.protobuf.Duration.newBuilder().setNanos(200_000_000)).build()))
                .build();
        shard.then(DRY);
        balancer.then(StatusProto.toStatusRuntimeException(notLeader));

        assertBalancerUnavailable(reserveFails(), Duration.ofMillis(200));
    }

    @Test
    void reserve_pullThrows_answersBalancerUnavailable() {
        ReserveFlow throwing = new ReserveFlow((r, d) -> {
            throw new IllegalStateException("channel closed");
        }, PULL_WAIT, PULLS_MAX);
        shard.then(DRY);

        Failure f = failureOf(throwing.reserve(REQUEST, deadline, shard::call));

        assertBalancerUnavailable(f, ReserveFlow.RETRY_AFTER);
        assertThat(f.getMessage()).isEqualTo("no balancer answer to Pull(acme/sku-1 into us, quantity=2): "
                + "java.lang.IllegalStateException: channel closed");
    }

    @Test
    void reserve_collapsedWithoutHomeRegion_answersBalancerUnavailable() {
        shard.then(DRY);
        balancer.then(PullResponse.newBuilder().setCollapsed(true).build());

        Failure f = reserveFails();

        assertBalancerUnavailable(f, ReserveFlow.RETRY_AFTER);
        assertThat(shard.requests).hasSize(1);
    }

    @Test
    void reserve_shardFailure_passesThroughUnchanged_withoutPull() {
        Failure down = Failure.retryable(Reason.SHARD_UNAVAILABLE, "down", Duration.ofMillis(500));
        shard.then(down);

        assertThat(reserveFails()).isSameAs(down);
        assertThat(balancer.requests).isEmpty();
    }

    @Test
    void reserve_shardFailureAfterPull_passesThroughUnchanged() {
        Failure down = Failure.retryable(Reason.SHARD_UNAVAILABLE, "down", Duration.ofMillis(500));
        shard.then(DRY).then(down);
        balancer.then(moved(1));

        assertThat(reserveFails()).isSameAs(down);
    }

    @Test
    void pullDeadline_isPullWaitFromNow_whenTheCallerHasMoreTime() {
        shard.then(DRY).then(RESERVED);
        balancer.then(moved(1));

        reserve();

        Deadline pull = balancer.deadlines.get(0);
        assertThat(pull.timeRemaining(TimeUnit.NANOSECONDS)).isEqualTo(PULL_WAIT.toNanos());
        ticker.nanos += PULL_WAIT.toNanos();
        assertThat(pull.isExpired()).isTrue();
        assertThat(deadline.isExpired()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(longs = {300, 1_000})
    void pullDeadline_isTheCallersDeadline_whenThatComesFirst(long callerRemainingMs) {
        Deadline soon = Deadline.after(callerRemainingMs, TimeUnit.MILLISECONDS, ticker);
        shard.then(DRY).then(RESERVED);
        balancer.then(moved(1));

        flow.reserve(REQUEST, soon, shard::call).join();

        assertThat(balancer.deadlines).containsExactly(soon);
    }

    @Test
    void constructor_refusesNoPullsAndNoWait() {
        assertThatThrownBy(() -> new ReserveFlow(balancer::call, PULL_WAIT, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("pullAttemptsMax must be >= 1, got 0");
        assertThatThrownBy(() -> new ReserveFlow(balancer::call, Duration.ZERO, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("pullWait must be positive, got PT0S");
    }

    /** A scripted claim that succeeds. */
    static final Object CLAIMED = "claimed";

    /** Records claims and give-backs; answers claims from a script like the shard's. */
    static final class Claims implements ReserveFlow.KeyClaims {
        final Scripted<ReserveRequest, Object> claims = new Scripted<>();
        final List<String> homes = new ArrayList<>();
        final List<String> givenBack = new ArrayList<>();

        @Override
        public CompletableFuture<Void> claim(ReserveRequest placed, String homeRegion, Deadline deadline) {
            homes.add(homeRegion);
            return claims.call(placed, deadline).thenApply(claimed -> null);
        }

        @Override
        public void giveBack(String holdId) {
            givenBack.add(holdId);
        }
    }

    static final ReserveResponse RESERVED_AWAY = RESERVED.toBuilder().setKeyHomeRegion("eu").build();

    @Test
    void reserve_reservedAwayFromHome_claimsTheKeyAtHome_thenAnswersWithoutTheInternalField() {
        Claims claims = new Claims();
        claims.claims.then(CLAIMED);
        ReserveFlow claiming = new ReserveFlow(balancer::call, claims, PULL_WAIT, PULLS_MAX);
        shard.then(RESERVED_AWAY);

        ReserveFlow.Answer a = claiming.reserve(REQUEST, deadline, shard::call).join();

        assertThat(a.response()).isEqualTo(RESERVED);
        assertThat(a.response().getKeyHomeRegion()).isEmpty();
        assertThat(claims.claims.requests).containsExactly(REQUEST);
        assertThat(claims.homes).containsExactly("eu");
        assertThat(claims.claims.deadlines).containsExactly(deadline);
        assertThat(claims.givenBack).isEmpty();
    }

    @Test
    void reserve_claimTakenByAnotherUse_givesTheHoldBack_andAnswersKeyReused() {
        Claims claims = new Claims();
        claims.claims.then(GrpcErrors.toStatus(Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "first used in us")));
        ReserveFlow claiming = new ReserveFlow(balancer::call, claims, PULL_WAIT, PULLS_MAX);
        shard.then(RESERVED_AWAY);

        CompletableFuture<ReserveFlow.Answer> f = claiming.reserve(REQUEST, deadline, shard::call);

        Throwable e = f.handle((a, err) -> err).join();
        Throwable cause = e instanceof CompletionException ? e.getCause() : e;
        assertThat(Status.fromThrowable(cause).getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
        assertThat(GrpcErrors.errorInfo(cause).orElseThrow().getReason()).isEqualTo("IDEMPOTENCY_KEY_REUSED");
        assertThat(claims.givenBack).containsExactly("hold-us");
    }

    @Test
    void reserve_claimNotMade_passesItsFailureOn_andKeepsTheHoldForTheRetry() {
        Claims claims = new Claims();
        claims.claims.then(Failure.retryable(Reason.SHARD_UNAVAILABLE, "home shard down", Duration.ofMillis(500)));
        ReserveFlow claiming = new ReserveFlow(balancer::call, claims, PULL_WAIT, PULLS_MAX);
        shard.then(RESERVED_AWAY);

        Failure f = failureOf(claiming.reserve(REQUEST, deadline, shard::call));

        assertThat(f.reason()).isEqualTo(Reason.SHARD_UNAVAILABLE);
        assertThat(claims.givenBack).as("the retry finds the hold and claims again").isEmpty();
    }

    @Test
    void reserve_reservedAtHome_claimsNothing() {
        Claims claims = new Claims();
        ReserveFlow claiming = new ReserveFlow(balancer::call, claims, PULL_WAIT, PULLS_MAX);
        shard.then(RESERVED);

        assertThat(claiming.reserve(REQUEST, deadline, shard::call).join().response()).isEqualTo(RESERVED);
        assertThat(claims.claims.requests).isEmpty();
    }

    @Test
    void sentTo_anotherRegion_keepsTheRegionTheClientNamed_once() {
        ReserveRequest home = ReserveFlow.sentTo(REQUEST, "eu");
        assertThat(home.getRegion()).isEqualTo("eu");
        assertThat(home.getOriginRegion()).isEqualTo("us");
        assertThat(ReserveFlow.sentTo(home, "ap").getOriginRegion()).isEqualTo("us");
        assertThat(ReserveFlow.sentTo(REQUEST, "us")).isSameAs(REQUEST);
    }
}
