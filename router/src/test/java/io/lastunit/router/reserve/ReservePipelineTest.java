package io.lastunit.router.reserve;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.ErrorInfo;
import io.grpc.Context;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.shard.v1.ReserveBatchRequest;
import io.lastunit.api.shard.v1.ReserveBatchResponse;
import io.lastunit.api.shard.v1.ReserveResult;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.common.topology.Topology;
import io.lastunit.router.route.ReserveBatcher;
import io.lastunit.router.route.ReserveFlow;
import io.lastunit.router.route.Router;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.router.shed.BuyerRateLimiter;
import io.lastunit.router.shed.InFlightLimiter;
import io.lastunit.router.shed.RecentKeys;
import io.lastunit.router.shed.SoldOutCache;
import io.lastunit.testkit.ManualClock;
import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Reserve pipeline on its own, from shedding to a shard's ReserveBatch: the real
 * {@link ReservePipeline}, {@link ReserveFlow}, {@link Router} and {@link ReserveBatcher} over
 * grpc-java's in-process transport (no sockets, every call answered on the calling thread). One
 * cell serves region eu with one live shard, a fake that answers each ReserveBatch entry from a
 * script; a fake balancer answers pulls from its own. The sold-out cache reads one
 * {@link ManualClock}, the buyer rate limiter and the recent keys another: each stands still unless
 * a test moves it (a buyer's tokens never refill), so no answer depends on how fast the host runs.
 */
class ReservePipelineTest {
    static final Duration SOLD_OUT_TTL = Duration.ofMinutes(1);
    static final int PULLS_MAX = 2;
    /** How long a test waits for an answer, in process: 10 s, scaled for slow machines. */
    static final long WAIT_MS = TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();

    final String suffix = UUID.randomUUID().toString();
    /** The sold-out cache's clock. */
    final ManualClock clock = new ManualClock();
    /** The buyer rate limiter's and the recent keys' clock: never moved. */
    final ManualClock limiterClock = new ManualClock();
    final FakeShard shard = new FakeShard();
    final Deque<PullResponse> pullScript = new ArrayDeque<>();
    final List<PullRequest> pulls = Collections.synchronizedList(new ArrayList<>());
    final List<AutoCloseable> closeLast = new ArrayList<>();
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    /** Each buyer's tokens (they never refill); a test may change it before {@link #start}. */
    int buyerBurst = 100;
    /** Calls in flight per item; a test may lower it before {@link #start}. */
    int inFlightMax = 100;
    InFlightLimiter inFlight;
    ReservePipeline pipeline;

    /** A shard node that answers each entry of a ReserveBatch from its script, in order. */
    final class FakeShard extends ShardServiceGrpc.ShardServiceImplBase {
        final Deque<Object> script = new ArrayDeque<>();
        final List<ReserveRequest> reserves = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger batches = new AtomicInteger();

        String address() {
            return "pipeline-shard-" + suffix;
        }

        FakeShard answers(Object... answers) {
            script.addAll(List.of(answers));
            return this;
        }

        @Override
        public void reserveBatch(ReserveBatchRequest request, StreamObserver<ReserveBatchResponse> out) {
            batches.incrementAndGet();
            List<CompletableFuture<ReserveResponse>> answers = new ArrayList<>();
            for (ReserveRequest r : request.getRequestsList()) {
                reserves.add(r);
                answers.add(next(r));
            }
            CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).whenComplete((ignored, err) -> {
                ReserveBatchResponse.Builder b = ReserveBatchResponse.newBuilder();
                for (CompletableFuture<ReserveResponse> a : answers) {
                    b.addResults(a.isCompletedExceptionally()
                            ? ReserveResult.newBuilder().setError(errorOf(a))
                            : ReserveResult.newBuilder().setResponse(a.join()));
                }
                out.onNext(b.build());
                out.onCompleted();
            });
        }

        @SuppressWarnings("unchecked")
        private CompletableFuture<ReserveResponse> next(ReserveRequest r) {
            Object next;
            synchronized (script) {
                next = script.poll();
            }
            if (next == null) {
                return CompletableFuture.failedFuture(new AssertionError("unscripted Reserve " + r));
            }
            if (next instanceof Failure f) {
                return CompletableFuture.failedFuture(f);
            }
            if (next instanceof CompletableFuture<?> later) {
                return (CompletableFuture<ReserveResponse>) later; // answered when the test completes it
            }
            return CompletableFuture.completedFuture((ReserveResponse) next);
        }

        private com.google.rpc.Status errorOf(CompletableFuture<ReserveResponse> failed) {
            try {
                failed.join();
                throw new IllegalStateException("not failed");
            } catch (java.util.concurrent.CompletionException e) {
                return StatusProto.fromThrowable(GrpcErrors.toStatus(e.getCause()));
            }
        }
    }

    void start() throws IOException {
        Server server = InProcessServerBuilder.forName(shard.address()).directExecutor().addService(shard).build()
                .start();
        closeLast.add(server::shutdownNow);
        Cell cell = Cell.newBuilder().setName(Topology.SHARED_CELL).addRegions("eu").build();
        ShardInfo info = ShardInfo.newBuilder().setShardId("eu-1").setCell(cell.getName()).setRegion("eu")
                .setAddress(shard.address()).build();
        Topology topology = Topology.of(List.of(cell), List.of(info), List.of(LiveShard.newBuilder()
                .setShardId(info.getShardId()).setAddress(info.getAddress()).build()), Map.of());
        ShardChannels channels = new ShardChannels(a -> InProcessChannelBuilder.forName(a).directExecutor().build());
        closeLast.add(channels);
        Router router = new Router(() -> topology, channels, scheduler, 3, Duration.ofMillis(1), Duration.ofSeconds(5));
        ReserveFlow flow = new ReserveFlow(this::pull, Duration.ofSeconds(1), PULLS_MAX);
        ReserveBatcher batcher = new ReserveBatcher(16, 1_000, 4);
        closeLast.add(batcher);
        inFlight = new InFlightLimiter(inFlightMax);
        pipeline = new ReservePipeline(new ReservePipeline.Shedding(
                new SoldOutCache(SOLD_OUT_TTL.toNanos(), 1_000, clock::nanoTime),
                new BuyerRateLimiter(1, buyerBurst, 1_000, limiterClock::nanoTime), inFlight,
                new RecentKeys(TimeUnit.MINUTES.toNanos(10), 1_000, limiterClock::nanoTime)), flow, router, batcher);
    }

    CompletableFuture<PullResponse> pull(PullRequest r, io.grpc.Deadline deadline) {
        pulls.add(r);
        PullResponse next;
        synchronized (pullScript) {
            next = pullScript.poll();
        }
        return next == null ? CompletableFuture.failedFuture(new AssertionError("unscripted pull " + r))
                : CompletableFuture.completedFuture(next);
    }

    @AfterEach
    void closeAll() throws Exception {
        Collections.reverse(closeLast);
        for (AutoCloseable c : closeLast) {
            c.close();
        }
        scheduler.shutdownNow();
    }

    // ---- fixtures ---------------------------------------------------------------------------

    static ReserveRequest reserve(String key, String buyer) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("sku-1").setQuantity(1)
                .setIdempotencyKey(key).setBuyerId(buyer).setRegion("eu").build();
    }

    static ReserveRequest reserve(String key) {
        return reserve(key, "buyer-" + key);
    }

    static ReserveResponse reserved(String key) {
        return ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).setHold(Hold.newBuilder()
                .setHoldId(new HoldId("acme", "sku-1", "eu", 0, UUID.nameUUIDFromBytes(key.getBytes())).encode())
                .setQuantity(1)).build();
    }

    static final ReserveResponse SOLD_OUT = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).build();
    static final ReserveResponse DRY = SOLD_OUT.toBuilder().setRegionDry(true).build();

    static PullResponse moved(long n) {
        return PullResponse.newBuilder().setMoved(n).build();
    }

    CompletableFuture<ReserveResponse> send(ReserveRequest r) {
        return pipeline.reserve(r, Context.ROOT);
    }

    ReserveResponse answer(ReserveRequest r) throws Exception {
        return send(r).get(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** The reason {@code r} was refused with (the ErrorInfo reason its client would read). */
    String refusal(ReserveRequest r) throws Exception {
        try {
            ReserveResponse unexpected = answer(r);
            throw new AssertionError("expected a refusal, got " + unexpected);
        } catch (ExecutionException e) {
            StatusRuntimeException s = GrpcErrors.toStatus(e.getCause());
            return GrpcErrors.errorInfo(s).map(ErrorInfo::getReason).orElse(s.getStatus().getCode().name());
        }
    }

    List<String> keysAtTheShard() {
        return shard.reserves.stream().map(ReserveRequest::getIdempotencyKey).toList();
    }

    // ---- the sold-out rule ------------------------------------------------------------------

    @Test
    void reserve_soldOutFromTheShard_isCached_andTheNextReserveIsAnsweredWithoutACall() throws Exception {
        shard.answers(SOLD_OUT);
        start();

        assertThat(answer(reserve("k1"))).isEqualTo(SOLD_OUT);
        assertThat(answer(reserve("k2"))).isEqualTo(SOLD_OUT);

        assertThat(keysAtTheShard()).containsExactly("k1");
        assertThat(shard.batches).as("the shard is asked in a ReserveBatch").hasValue(1);
        assertThat(pipeline.shedCount()).isEqualTo(1);
    }

    @Test
    void reserve_soldOutToSeveralUnits_isNotCached() throws Exception {
        shard.answers(SOLD_OUT, SOLD_OUT);
        start();

        assertThat(answer(reserve("k1").toBuilder().setQuantity(2).build())).isEqualTo(SOLD_OUT);
        assertThat(answer(reserve("k2"))).isEqualTo(SOLD_OUT);

        assertThat(keysAtTheShard()).as("one unit may be left: k2 asks the shard").containsExactly("k1", "k2");
        assertThat(pipeline.shedCount()).isZero();
    }

    @Test
    void reserve_cachedSoldOut_isSkipped_forAKeyThisRouterSentOn_soItsRetryGetsItsHold() throws Exception {
        shard.answers(reserved("k1"), SOLD_OUT, reserved("k1"));
        start();

        assertThat(answer(reserve("k1"))).isEqualTo(reserved("k1"));
        assertThat(answer(reserve("k2"))).isEqualTo(SOLD_OUT);
        assertThat(answer(reserve("k1"))).as("the retry of a placed key").isEqualTo(reserved("k1"));
        assertThat(answer(reserve("k3"))).isEqualTo(SOLD_OUT);

        assertThat(keysAtTheShard()).containsExactly("k1", "k2", "k1");
        assertThat(pipeline.shedCount()).isEqualTo(1);
    }

    @Test
    void reserve_failedAtTheShard_remembersTheKey_asItsOutcomeIsUnknown_andGivesBackItsSlot() throws Exception {
        shard.answers(Failure.of(Reason.INTERNAL_ERROR, "lane crashed"), SOLD_OUT, reserved("k1"));
        start();

        assertThat(refusal(reserve("k1"))).isEqualTo(Reason.INTERNAL_ERROR.name());
        assertThat(answer(reserve("k2"))).isEqualTo(SOLD_OUT);
        assertThat(answer(reserve("k1"))).isEqualTo(reserved("k1"));

        assertThat(keysAtTheShard()).containsExactly("k1", "k2", "k1");
        assertThat(inFlight.inFlight(SoldOutCache.key("acme", "sku-1", "eu"))).isZero();
    }

    @Test
    void reserve_dryRegion_soldOutMadeFinalByAPull_isCached() throws Exception {
        shard.answers(DRY);
        pullScript.add(moved(0));
        start();

        assertThat(answer(reserve("k1"))).isEqualTo(SOLD_OUT);
        assertThat(answer(reserve("k2"))).isEqualTo(SOLD_OUT);

        assertThat(keysAtTheShard()).containsExactly("k1");
        assertThat(pulls).hasSize(1);
        assertThat(pipeline.shedCount()).isEqualTo(1);
    }

    @Test
    void reserve_dryRegionThroughEveryPull_isItemBusy_andCachesNothing() throws Exception {
        shard.answers(DRY, DRY, DRY, SOLD_OUT);
        pullScript.addAll(List.of(moved(1), moved(1)));
        start();

        assertThat(refusal(reserve("k1"))).isEqualTo(Reason.ITEM_BUSY.name());
        assertThat(answer(reserve("k2"))).isEqualTo(SOLD_OUT);

        assertThat(keysAtTheShard()).containsExactly("k1", "k1", "k1", "k2");
        assertThat(pulls).hasSize(PULLS_MAX);
        assertThat(pipeline.shedCount()).isZero();
    }

    @Test
    void stockReturned_forgetsTheCachedSoldOut() throws Exception {
        shard.answers(SOLD_OUT, reserved("k3"));
        start();
        assertThat(answer(reserve("k1"))).isEqualTo(SOLD_OUT);
        assertThat(answer(reserve("k2"))).isEqualTo(SOLD_OUT);

        pipeline.stockReturned("acme", "sku-1", "eu");

        assertThat(answer(reserve("k3"))).isEqualTo(reserved("k3"));
        assertThat(keysAtTheShard()).containsExactly("k1", "k3");
    }

    // ---- the probe after the TTL ------------------------------------------------------------

    @Test
    void reserve_afterTheTtl_oneProbeAsksTheShard_theOthersAreAnsweredFromTheCache_untilItsAnswer()
            throws Exception {
        CompletableFuture<ReserveResponse> held = new CompletableFuture<>();
        shard.answers(SOLD_OUT, held, SOLD_OUT);
        start();
        assertThat(answer(reserve("k1"))).isEqualTo(SOLD_OUT);

        clock.advance(SOLD_OUT_TTL);
        CompletableFuture<ReserveResponse> probe = send(reserve("k2"));
        assertThat(answer(reserve("k3"))).as("answered from the cache while the probe is out").isEqualTo(SOLD_OUT);
        held.complete(reserved("k2")); // a unit came back (an expiry, a Release through another router)

        assertThat(probe.get(WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(reserved("k2"));
        assertThat(answer(reserve("k4"))).as("the probe's hold forgot the entry").isEqualTo(SOLD_OUT);
        assertThat(keysAtTheShard()).containsExactly("k1", "k2", "k4");
    }

    @Test
    void reserve_aProbeRefusedBeforeItIsSent_forgetsTheEntry() throws Exception {
        buyerBurst = 1;
        shard.answers(SOLD_OUT, SOLD_OUT);
        start();
        assertThat(answer(reserve("k1", "buyer-1"))).isEqualTo(SOLD_OUT);

        clock.advance(SOLD_OUT_TTL);
        assertThat(refusal(reserve("k2", "buyer-1"))).isEqualTo(Reason.RATE_LIMITED.name());

        assertThat(answer(reserve("k3", "buyer-2"))).isEqualTo(SOLD_OUT);
        assertThat(keysAtTheShard()).as("buyer-2 asked the shard").containsExactly("k1", "k3");
    }

    // ---- the order of the shedding ----------------------------------------------------------

    @Test
    void reserve_shedsBySoldOutFirst_thenByTheBuyersRate_thenByTheItemsCallsInFlight() throws Exception {
        buyerBurst = 1;
        inFlightMax = 1;
        CompletableFuture<ReserveResponse> held = new CompletableFuture<>();
        shard.answers(held);
        start();

        CompletableFuture<ReserveResponse> first = send(reserve("k1", "buyer-1")); // takes the item's one slot
        assertThat(refusal(reserve("k2", "buyer-1"))).as("over its rate, and the item is busy too")
                .isEqualTo(Reason.RATE_LIMITED.name());
        assertThat(refusal(reserve("k3", "buyer-2"))).isEqualTo(Reason.ITEM_BUSY.name());
        held.complete(SOLD_OUT);
        assertThat(first.get(WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(SOLD_OUT);
        assertThat(answer(reserve("k4", "buyer-1"))).as("over its rate, but sold out first").isEqualTo(SOLD_OUT);

        assertThat(keysAtTheShard()).containsExactly("k1");
        assertThat(pipeline.shedCount()).isEqualTo(3);
    }

    @Test
    void reserve_answeredFromTheSoldOutCache_costsNoTokenOfTheBuyersRate() throws Exception {
        buyerBurst = 2;
        shard.answers(SOLD_OUT, reserved("k7"));
        start();
        assertThat(answer(reserve("k1", "buyer-1"))).isEqualTo(SOLD_OUT); // the first token
        for (String key : List.of("k2", "k3", "k4", "k5", "k6")) {
            assertThat(answer(reserve(key, "buyer-1"))).isEqualTo(SOLD_OUT);
        }
        pipeline.stockReturned("acme", "sku-1", "eu");

        assertThat(answer(reserve("k7", "buyer-1"))).as("the second token").isEqualTo(reserved("k7"));
        assertThat(refusal(reserve("k8", "buyer-1"))).isEqualTo(Reason.RATE_LIMITED.name());
        assertThat(keysAtTheShard()).containsExactly("k1", "k7");
    }

    @Test
    void reserve_refusedForItsRate_takesNoSlotOfTheItem() throws Exception {
        buyerBurst = 1;
        inFlightMax = 1;
        shard.answers(reserved("k1"), reserved("k3"));
        start();
        assertThat(answer(reserve("k1", "buyer-1"))).isEqualTo(reserved("k1"));

        assertThat(refusal(reserve("k2", "buyer-1"))).isEqualTo(Reason.RATE_LIMITED.name());

        assertThat(inFlight.inFlight(SoldOutCache.key("acme", "sku-1", "eu"))).isZero();
        assertThat(answer(reserve("k3", "buyer-2"))).isEqualTo(reserved("k3"));
    }
}
