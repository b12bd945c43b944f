package io.lastunit.router.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.rpc.ErrorInfo;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.common.RequestValidator;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.Versioned;
import io.lastunit.router.auth.AuthInterceptor;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.reserve.ReservePipeline;
import io.lastunit.router.route.ReserveBatcher;
import io.lastunit.router.route.ReserveFlow;
import io.lastunit.router.route.Router;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.router.shed.BuyerRateLimiter;
import io.lastunit.router.shed.InFlightLimiter;
import io.lastunit.router.shed.RecentKeys;
import io.lastunit.router.shed.SoldOutCache;
import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The router's Reserve and CreateItem for items sold in several regions, through the real
 * RouterInventoryService, ReservePipeline, Router and ReserveFlow over grpc-java's in-process
 * transport (no sockets): fake shard nodes answer from a script per region, a fake balancer from
 * its own. The topology is a fixed snapshot: cell {@code shared} serving eu (home) and us, one live
 * shard each; and cell {@code solo} serving eu alone, one live shard, with tenant {@value #SOLO}
 * placed in it.
 */
class RouterInventoryServiceTest {
    static final Authenticator.Principal ADMIN = new Authenticator.Principal("ops", Set.of("*"), true);
    static final int ATTEMPTS_MAX = 3;
    static final int PULLS_MAX = 2;
    static final UUID HOLD_UUID = new UUID(1, 2);

    final String suffix = UUID.randomUUID().toString();
    final List<String> log = Collections.synchronizedList(new ArrayList<>());
    final FakeShard eu = new FakeShard("eu");
    final FakeShard us = new FakeShard("us");
    /** The one shard of cell solo, in eu. */
    final FakeShard solo = new FakeShard("solo-eu");
    static final String SOLO = "solo-shop";
    final List<PullRequest> pulls = Collections.synchronizedList(new ArrayList<>());
    final Deque<Object> pullScript = new ArrayDeque<>();
    final List<AutoCloseable> closeLast = new ArrayList<>();
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    /** The sold-out cache's clock: it stands still unless a test moves it. */
    final AtomicLong clock = new AtomicLong(System.nanoTime());
    /**
     * The buyer rate limiter's and recent keys' clock: it stands still, so a buyer's tokens refill
     * only if a test says so, however long the host takes between two Reserves.
     */
    final AtomicLong limiterClock = new AtomicLong(System.nanoTime());
    static final long SOLD_OUT_TTL = TimeUnit.MINUTES.toNanos(1);
    /** How long a test waits for an answer, in process: 10 s, scaled for slow machines. */
    static final long WAIT_MS = TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();
    /** Each buyer's Reserves per second and burst; a test may lower them before {@link #start}. */
    double buyerRate = 1_000;
    int buyerBurst = 1_000;
    RouterInventoryService service;
    ReservePipeline pipeline;
    InventoryServiceGrpc.InventoryServiceBlockingStub client;
    InventoryServiceGrpc.InventoryServiceFutureStub asyncClient;

    /** A shard node of one region that answers Reserve and CreateItem from scripts. */
    final class FakeShard extends InventoryServiceGrpc.InventoryServiceImplBase {
        final String region;
        final Deque<Object> reserveScript = new ArrayDeque<>();
        final Deque<Object> createScript = new ArrayDeque<>();
        final List<ReserveRequest> reserves = Collections.synchronizedList(new ArrayList<>());
        final List<CreateItemRequest> creates = Collections.synchronizedList(new ArrayList<>());

        FakeShard(String region) {
            this.region = region;
        }

        String address() {
            return "shard-" + region + "-" + suffix;
        }

        FakeShard reserveAnswers(Object... answers) {
            reserveScript.addAll(List.of(answers));
            return this;
        }

        FakeShard createAnswers(Object... answers) {
            createScript.addAll(List.of(answers));
            return this;
        }

        @Override
        public void reserve(ReserveRequest r, StreamObserver<ReserveResponse> out) {
            reserves.add(r);
            log.add(region + ":reserve");
            answer(reserveScript, out, r);
        }

        @Override
        public void createItem(CreateItemRequest r, StreamObserver<CreateItemResponse> out) {
            creates.add(r);
            log.add(region + ":createItem");
            answer(createScript, out, r);
        }

        @SuppressWarnings("unchecked")
        private <T> void answer(Deque<Object> script, StreamObserver<T> out, Object request) {
            Object next;
            synchronized (script) {
                next = script.poll();
            }
            if (next == null) {
                out.onError(Status.INTERNAL.withDescription("unscripted call in " + region + ": " + request)
                        .asRuntimeException());
            } else if (next instanceof Failure f) {
                out.onError(GrpcErrors.toStatus(f));
            } else if (next instanceof CompletableFuture<?> later) {
                later.whenComplete((v, err) -> { // answered when the test completes it
                    if (err != null) {
                        out.onError(Status.INTERNAL.withDescription(String.valueOf(err)).asRuntimeException());
                    } else {
                        out.onNext((T) v);
                        out.onCompleted();
                    }
                });
            } else {
                out.onNext((T) next);
                out.onCompleted();
            }
        }
    }

    void start() throws IOException {
        for (FakeShard s : List.of(eu, us, solo)) {
            Server server = InProcessServerBuilder.forName(s.address()).directExecutor().addService(s).build().start();
            closeLast.add(server::shutdownNow);
        }
        Cell cell = Cell.newBuilder().setName(Topology.SHARED_CELL).addRegions("eu").addRegions("us").build();
        Cell soloCell = Cell.newBuilder().setName("solo").addRegions("eu").build();
        List<ShardInfo> shards = List.of(
                ShardInfo.newBuilder().setShardId("eu-1").setCell(cell.getName()).setRegion("eu")
                        .setAddress(eu.address()).build(),
                ShardInfo.newBuilder().setShardId("us-1").setCell(cell.getName()).setRegion("us")
                        .setAddress(us.address()).build(),
                ShardInfo.newBuilder().setShardId("solo-eu-1").setCell(soloCell.getName()).setRegion("eu")
                        .setAddress(solo.address()).build());
        List<LiveShard> live = shards.stream()
                .map(s -> LiveShard.newBuilder().setShardId(s.getShardId()).setAddress(s.getAddress()).build()).toList();
        Topology topology = Topology.of(List.of(cell, soloCell), shards, live, Map.of(SOLO, new Versioned<>(
                TenantPlacement.newBuilder().setTenantId(SOLO).setCell(soloCell.getName())
                        .setState(TenantState.ACTIVE).build(), 0)));

        ShardChannels channels = new ShardChannels(a -> InProcessChannelBuilder.forName(a).directExecutor().build());
        closeLast.add(channels);
        Router router = new Router(() -> topology, channels, scheduler, ATTEMPTS_MAX, Duration.ofMillis(1),
                Duration.ofSeconds(5));
        ReserveFlow flow = new ReserveFlow(this::pull, Duration.ofSeconds(1), PULLS_MAX);
        // "ap" is a configured region that the tenant's cell does not serve.
        // The fake shards serve only the public API, so the batcher's first ReserveBatch to each is
        // answered UNIMPLEMENTED and it sends them unary Reserves from then on.
        ReserveBatcher batcher = new ReserveBatcher(16, 1_000, 4);
        closeLast.add(batcher);
        pipeline = new ReservePipeline(new ReservePipeline.Shedding(new SoldOutCache(SOLD_OUT_TTL, 1_000, clock::get),
                new BuyerRateLimiter(buyerRate, buyerBurst, 1_000, limiterClock::get), new InFlightLimiter(100),
                new RecentKeys(TimeUnit.MINUTES.toNanos(10), 1_000, limiterClock::get)), flow, router, batcher);
        service = new RouterInventoryService(new RequestValidator(Limits.defaults(Set.of("eu", "us", "ap"))), router,
                () -> topology, pipeline);

        String name = "router-" + suffix;
        Server server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(ServerInterceptors.intercept(service, new AsAdmin())).build().start();
        closeLast.add(server::shutdownNow);
        ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        closeLast.add(channel::shutdownNow);
        // One deadline for all of a test's calls (a stub's deadline is fixed when it is made).
        client = InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT_MS, TimeUnit.MILLISECONDS);
        asyncClient = InventoryServiceGrpc.newFutureStub(channel).withDeadlineAfter(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** What AuthInterceptor does for an admin token, without tokens. */
    static final class AsAdmin implements ServerInterceptor {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                          ServerCallHandler<Q, A> next) {
            return Contexts.interceptCall(Context.current().withValue(AuthInterceptor.PRINCIPAL, ADMIN), call, headers,
                    next);
        }
    }

    CompletableFuture<PullResponse> pull(PullRequest r, io.grpc.Deadline deadline) {
        pulls.add(r);
        log.add(r.getRegion() + ":pull");
        Object next;
        synchronized (pullScript) {
            next = pullScript.poll();
        }
        if (next instanceof Failure f) {
            return CompletableFuture.failedFuture(f);
        }
        if (next == null) {
            return CompletableFuture.failedFuture(new AssertionError("unscripted pull " + r));
        }
        return CompletableFuture.completedFuture((PullResponse) next);
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

    static ReserveRequest reserve(String key) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("sku-1").setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("buyer-1").setRegion("us").build();
    }

    static ReserveResponse reserved(String region) {
        return ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).setHold(Hold.newBuilder()
                .setHoldId(new HoldId("acme", "sku-1", region, 0, HOLD_UUID).encode()).setQuantity(1)).build();
    }

    static final ReserveResponse SOLD_OUT = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT).build();
    static final ReserveResponse DRY = SOLD_OUT.toBuilder().setRegionDry(true).build();

    static Failure forwarded(String home) {
        return Failure.of(Reason.FORWARDED, "item collapsed to " + home, Map.of("home_region", home));
    }

    static PullRequest pullOf(String region) {
        return PullRequest.newBuilder().setTenantId("acme").setItemId("sku-1").setRegion(region).setQuantity(1).build();
    }

    static PullResponse moved(long n) {
        return PullResponse.newBuilder().setMoved(n).build();
    }

    static RegionQuota quota(String region, long quantity) {
        return RegionQuota.newBuilder().setRegion(region).setQuantity(quantity).build();
    }

    static CreateItemRequest.Builder createItem() {
        return CreateItemRequest.newBuilder().setTenantId("acme").setItemId("sku-1").setTotal(10).setHomeRegion("eu");
    }

    static CreateItemResponse createdWithTotal(long total) {
        return CreateItemResponse.newBuilder().setCreated(true)
                .setStock(Stock.newBuilder().setTenantId("acme").setItemId("sku-1").setTotal(total)).build();
    }

    static StatusRuntimeException refused(Status.Code code, Reason reason, Runnable call) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call::run);
        assertThat(e).as("expected %s %s", code, reason).isNotNull();
        assertThat(e.getStatus().getCode()).isEqualTo(code);
        assertThat(GrpcErrors.errorInfo(e).map(ErrorInfo::getReason)).contains(reason.name());
        return e;
    }

    // ---- Reserve: FORWARDED -----------------------------------------------------------------

    @Test
    void reserve_forwarded_isSentOnceToTheHomeShard_withRegionSetToHome() throws IOException {
        us.reserveAnswers(forwarded("eu"));
        eu.reserveAnswers(reserved("eu"));
        start();

        ReserveResponse r = client.reserve(reserve("k1"));

        assertThat(r).isEqualTo(reserved("eu"));
        assertThat(HoldId.decode(r.getHold().getHoldId(), "hold_id").region()).isEqualTo("eu");
        assertThat(us.reserves).containsExactly(reserve("k1"));
        assertThat(eu.reserves).containsExactly(reserve("k1").toBuilder().setRegion("eu").setOriginRegion("us").build());
        assertThat(pulls).isEmpty();
    }

    @Test
    void reserve_forwardedAgainByTheHomeShard_isPassedOn_notFollowedTwice() throws IOException {
        us.reserveAnswers(forwarded("eu"));
        eu.reserveAnswers(forwarded("us"));
        start();

        StatusRuntimeException e = refused(Status.Code.ABORTED, Reason.FORWARDED, () -> client.reserve(reserve("k1")));

        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsEntry("home_region", "us");
        assertThat(log).containsExactly("us:reserve", "eu:reserve");
    }

    @Test
    void reserve_forwardedOnTheLastAttempt_isPassedOn_theForwardCountsAsAnAttempt() throws IOException {
        Failure down = Failure.retryable(Reason.SHUTTING_DOWN, "us node stopping", Duration.ofMillis(1));
        us.reserveAnswers(down, down, forwarded("eu"));
        start();

        refused(Status.Code.ABORTED, Reason.FORWARDED, () -> client.reserve(reserve("k1")));

        assertThat(us.reserves).hasSize(ATTEMPTS_MAX);
        assertThat(eu.reserves).isEmpty();
    }

    @Test
    void reserve_forwardedThenHomeUnavailable_retriesAtHome_withinTheAttemptBound() throws IOException {
        Failure down = Failure.retryable(Reason.SHUTTING_DOWN, "eu node stopping", Duration.ofMillis(1));
        us.reserveAnswers(forwarded("eu"));
        eu.reserveAnswers(down, reserved("eu"));
        start();

        assertThat(client.reserve(reserve("k1"))).isEqualTo(reserved("eu"));
        assertThat(log).containsExactly("us:reserve", "eu:reserve", "eu:reserve");
        assertThat(eu.reserves).containsOnly(reserve("k1").toBuilder().setRegion("eu").setOriginRegion("us").build());
    }

    // ---- Reserve: an empty region -----------------------------------------------------------

    /** A Reserve of tenant {@value #SOLO}, whose cell serves eu alone, without a region. */
    static ReserveRequest soloReserve(String key) {
        return ReserveRequest.newBuilder().setTenantId(SOLO).setItemId("sku-1").setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("buyer-1").build();
    }

    @Test
    void reserve_withoutRegion_onACellOfOneRegion_isSentWithThatRegion() throws IOException {
        ReserveResponse held = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).setHold(Hold.newBuilder()
                .setHoldId(new HoldId(SOLO, "sku-1", "eu", 0, HOLD_UUID).encode()).setQuantity(1)).build();
        solo.reserveAnswers(held);
        start();

        ReserveResponse r = client.reserve(soloReserve("k1"));

        assertThat(r).isEqualTo(held);
        assertThat(solo.reserves).containsExactly(soloReserve("k1").toBuilder().setRegion("eu").build());
        assertThat(eu.reserves).isEmpty();
    }

    @Test
    void reserve_withoutRegion_soldOut_isCachedUnderTheFilledRegion() throws IOException {
        solo.reserveAnswers(SOLD_OUT);
        start();

        assertThat(client.reserve(soloReserve("k1")).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        // Answered from the sold-out cache: with the region named, and without it.
        assertThat(client.reserve(soloReserve("k2").toBuilder().setRegion("eu").build()).getOutcome())
                .isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(client.reserve(soloReserve("k3")).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);

        assertThat(solo.reserves).containsExactly(soloReserve("k1").toBuilder().setRegion("eu").build());
        assertThat(pipeline.shedCount()).isEqualTo(2);
    }

    @Test
    void reserve_withoutRegion_onACellOfSeveralRegions_isRefusedNamingRegionAndTheCellsRegions() throws IOException {
        start();

        StatusRuntimeException e = refused(Status.Code.INVALID_ARGUMENT, Reason.INVALID_FIELD,
                () -> client.reserve(reserve("k1").toBuilder().clearRegion().build()));

        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsEntry("field", "region");
        assertThat(e.getStatus().getDescription()).isEqualTo("region: is required: cell shared serves regions [eu, us]");
        assertThat(log).isEmpty();
    }

    @Test
    void reserve_withoutRegion_andABadEarlierField_isRefusedNamingTheEarlierField() throws IOException {
        start();

        StatusRuntimeException oneRegion = refused(Status.Code.INVALID_ARGUMENT, Reason.INVALID_FIELD,
                () -> client.reserve(soloReserve("k1").toBuilder().setQuantity(0).build()));
        StatusRuntimeException severalRegions = refused(Status.Code.INVALID_ARGUMENT, Reason.INVALID_FIELD,
                () -> client.reserve(reserve("k1").toBuilder().clearRegion().setBuyerId("").build()));

        assertThat(GrpcErrors.errorInfo(oneRegion).orElseThrow().getMetadataMap()).containsEntry("field", "quantity");
        assertThat(GrpcErrors.errorInfo(severalRegions).orElseThrow().getMetadataMap()).containsEntry("field", "buyer_id");
        assertThat(log).isEmpty();
    }

    // ---- Reserve: a dry region --------------------------------------------------------------

    @Test
    void reserve_regionDry_pullMovesStock_sameReserveAgain_reservedWithoutRegionDry() throws IOException {
        us.reserveAnswers(DRY, reserved("us"));
        pullScript.add(moved(4));
        start();

        ReserveResponse r = client.reserve(reserve("k1"));

        assertThat(r).isEqualTo(reserved("us"));
        assertThat(r.getRegionDry()).isFalse();
        assertThat(pulls).containsExactly(pullOf("us"));
        assertThat(us.reserves).containsExactly(reserve("k1"), reserve("k1"));
        assertThat(log).containsExactly("us:reserve", "us:pull", "us:reserve");
    }

    @Test
    void reserve_regionDry_noStockAnywhere_answersSoldOut_andCachesIt() throws IOException {
        us.reserveAnswers(DRY);
        pullScript.add(moved(0));
        start();

        ReserveResponse first = client.reserve(reserve("k1"));
        ReserveResponse second = client.reserve(reserve("k2"));

        assertThat(first).isEqualTo(SOLD_OUT);
        assertThat(first.getRegionDry()).isFalse();
        assertThat(second).isEqualTo(SOLD_OUT);
        assertThat(us.reserves).as("the second is answered from the sold-out cache").hasSize(1);
        assertThat(pipeline.shedCount()).isEqualTo(1);
    }

    @Test
    void reserve_afterTheSoldOutTtl_oneProbeAsksTheShard_theRestAreAnsweredFromTheCache_andItsSoldOutRenews()
            throws Exception {
        CompletableFuture<ReserveResponse> held = new CompletableFuture<>();
        us.reserveAnswers(DRY, held);
        pullScript.add(moved(0));
        pullScript.add(moved(0));
        start();
        assertThat(client.reserve(reserve("k1"))).isEqualTo(SOLD_OUT);

        clock.addAndGet(SOLD_OUT_TTL); // the entry expires
        var probe = asyncClient.reserve(reserve("k2"));
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (us.reserves.size() < 2 && System.nanoTime() < until) {
            Thread.sleep(1);
        }
        assertThat(us.reserves).as("the probe reached the shard, which holds its answer").hasSize(2);
        assertThat(client.reserve(reserve("k3"))).isEqualTo(SOLD_OUT);
        assertThat(client.reserve(reserve("k4"))).isEqualTo(SOLD_OUT);
        assertThat(us.reserves).as("answered from the cache while the probe is out").hasSize(2);

        held.complete(DRY); // still dry, and the pull finds nothing anywhere: a final SOLD_OUT
        assertThat(probe.get(WAIT_MS, TimeUnit.MILLISECONDS)).isEqualTo(SOLD_OUT);
        assertThat(client.reserve(reserve("k5"))).isEqualTo(SOLD_OUT);
        assertThat(us.reserves).as("the probe's SOLD_OUT renewed the entry").hasSize(2);
        assertThat(pulls).hasSize(2);
        assertThat(pipeline.shedCount()).isEqualTo(3);
    }

    @Test
    void reserve_aProbeThatReserves_forgetsTheSoldOut_andTheNextReserveAsksTheShard() throws IOException {
        us.reserveAnswers(DRY, reserved("us"), SOLD_OUT);
        pullScript.add(moved(0));
        start();
        assertThat(client.reserve(reserve("k1"))).isEqualTo(SOLD_OUT);

        clock.addAndGet(SOLD_OUT_TTL);
        ReserveResponse probe = client.reserve(reserve("k2")); // a unit came back (an expiry, a Release elsewhere)
        ReserveResponse next = client.reserve(reserve("k3"));

        assertThat(probe.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(next).isEqualTo(SOLD_OUT);
        assertThat(us.reserves).as("k3 asked the shard: the probe's answer cleared the entry").hasSize(3);
        assertThat(pipeline.shedCount()).isZero();
    }

    @Test
    void reserve_aProbeRefusedBeforeItIsSent_clearsTheSoldOut_andTheNextReserveAsksTheShard() throws IOException {
        buyerRate = 1;
        buyerBurst = 1; // buyer-1's second Reserve is refused: the limiter's clock stands still
        us.reserveAnswers(DRY, SOLD_OUT);
        pullScript.add(moved(0));
        start();
        assertThat(client.reserve(reserve("k1"))).isEqualTo(SOLD_OUT);

        clock.addAndGet(SOLD_OUT_TTL);
        refused(Status.Code.RESOURCE_EXHAUSTED, Reason.RATE_LIMITED, () -> client.reserve(reserve("k2")));
        ReserveResponse other = client.reserve(reserve("k3").toBuilder().setBuyerId("buyer-2").build());

        assertThat(other).isEqualTo(SOLD_OUT);
        assertThat(us.reserves).as("buyer-2 asked the shard: the refused probe cleared the entry").hasSize(2);
    }

    @Test
    void reserve_regionStaysDryThroughEveryPull_asksForARetry_andCachesNothing() throws IOException {
        us.reserveAnswers(DRY, DRY, DRY, reserved("us"));
        pullScript.addAll(List.of(moved(1), moved(1)));
        start();

        io.grpc.StatusRuntimeException busy = org.junit.jupiter.api.Assertions.assertThrows(
                io.grpc.StatusRuntimeException.class, () -> client.reserve(reserve("k1")));
        ReserveResponse second = client.reserve(reserve("k2"));

        assertThat(busy.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED);
        assertThat(GrpcErrors.errorInfo(busy).orElseThrow().getReason()).isEqualTo("ITEM_BUSY");
        assertThat(pulls).hasSize(PULLS_MAX);
        assertThat(second).isEqualTo(reserved("us"));
        assertThat(us.reserves).hasSize(PULLS_MAX + 2);
        assertThat(pipeline.shedCount()).isZero();
    }

    @Test
    void reserve_regionDry_noBalancer_answersUnavailableWithRetryInfo_neverSoldOut_andCachesNothing()
            throws IOException {
        us.reserveAnswers(DRY, reserved("us"));
        pullScript.add(Failure.retryable(Reason.BALANCER_UNAVAILABLE, "no balancer leader", Duration.ofMillis(500)));
        start();

        StatusRuntimeException e = refused(Status.Code.UNAVAILABLE, Reason.BALANCER_UNAVAILABLE,
                () -> client.reserve(reserve("k1")));
        ReserveResponse next = client.reserve(reserve("k2"));

        assertThat(GrpcErrors.retryAfterMs(e)).isEqualTo(500);
        assertThat(next).isEqualTo(reserved("us"));
        assertThat(us.reserves).hasSize(2);
    }

    @Test
    void reserve_regionDry_collapsed_sendsTheReserveToTheHomeShard() throws IOException {
        us.reserveAnswers(DRY);
        eu.reserveAnswers(reserved("eu"));
        pullScript.add(PullResponse.newBuilder().setCollapsed(true).setHomeRegion("eu").build());
        start();

        assertThat(client.reserve(reserve("k1"))).isEqualTo(reserved("eu"));
        assertThat(eu.reserves).containsExactly(reserve("k1").toBuilder().setRegion("eu").setOriginRegion("us").build());
        assertThat(log).containsExactly("us:reserve", "us:pull", "eu:reserve");
    }

    // ---- CreateItem -------------------------------------------------------------------------

    @Test
    void createItem_withQuotas_createsInEveryQuotaRegion_homeLast_andAnswersHomesResponse() throws IOException {
        CreateItemRequest r = createItem().addRegionQuotas(quota("eu", 6)).addRegionQuotas(quota("us", 4)).build();
        us.createAnswers(createdWithTotal(4));
        eu.createAnswers(createdWithTotal(10));
        start();

        assertThat(client.createItem(r)).isEqualTo(createdWithTotal(10));
        assertThat(log).containsExactly("us:createItem", "eu:createItem");
        assertThat(us.creates).containsExactly(r);
        assertThat(eu.creates).containsExactly(r);
    }

    @Test
    void createItem_withoutQuotas_createsInTheHomeRegionOnly() throws IOException {
        eu.createAnswers(createdWithTotal(10));
        start();

        assertThat(client.createItem(createItem().build())).isEqualTo(createdWithTotal(10));
        assertThat(log).containsExactly("eu:createItem");
    }

    @Test
    void createItem_nonHomeRegionUnavailable_failsRetryable_andHomeIsNeverCalled() throws IOException {
        Failure down = Failure.retryable(Reason.STORE_UNAVAILABLE, "us database down", Duration.ofMillis(1));
        us.createAnswers(down, down, down);
        start();

        StatusRuntimeException e = refused(Status.Code.UNAVAILABLE, Reason.STORE_UNAVAILABLE, () -> client.createItem(
                createItem().addRegionQuotas(quota("eu", 6)).addRegionQuotas(quota("us", 4)).build()));

        assertThat(GrpcErrors.retryAfterMs(e)).isEqualTo(1);
        assertThat(us.creates).hasSize(ATTEMPTS_MAX);
        assertThat(eu.creates).isEmpty();
    }

    @Test
    void createItem_quotaInARegionTheCellDoesNotServe_isRefusedNamingTheQuotaRegion() throws IOException {
        start();

        StatusRuntimeException e = refused(Status.Code.INVALID_ARGUMENT, Reason.INVALID_FIELD, () -> client.createItem(
                createItem().addRegionQuotas(quota("eu", 6)).addRegionQuotas(quota("ap", 4)).build()));

        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsEntry("field", "region_quotas.region");
        assertThat(e.getStatus().getDescription()).isEqualTo(
                "region_quotas.region: 'ap' is not served by cell shared of tenant acme, which serves [eu, us]");
        assertThat(log).isEmpty();
    }

    @Test
    void reserve_withOriginRegionFromAClient_isRefusedNamingTheField_andSendsNothing() throws IOException {
        start();

        StatusRuntimeException e = refused(Status.Code.INVALID_ARGUMENT, Reason.INVALID_FIELD,
                () -> client.reserve(reserve("k1").toBuilder().setOriginRegion("eu").build()));

        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsEntry("field", "origin_region");
        assertThat(us.reserves).isEmpty();
        assertThat(eu.reserves).isEmpty();
    }
}
