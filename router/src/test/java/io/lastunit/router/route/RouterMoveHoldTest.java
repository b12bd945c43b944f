package io.lastunit.router.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.Versioned;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The router's hold of calls of a tenant that is moving between cells: the real {@link Router}
 * over grpc-java's in-process transport to two fake shard nodes, one in cell {@code shared} (the
 * source) and one in cell {@code solo} (the target), with a topology snapshot the test replaces
 * as a mover would change ZooKeeper. Waits are on conditions, bounded by {@link TestTimeouts}.
 */
class RouterMoveHoldTest {
    private static final String TENANT = "acme";
    private final String suffix = UUID.randomUUID().toString();
    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final AtomicReference<Topology> topology = new AtomicReference<>();
    private final Shard source = new Shard("source");
    private final Shard target = new Shard("target");
    private ShardChannels channels;

    /** A shard that answers TENANT_MOVING for its first {@code refusals} Reserves, then RESERVED. */
    final class Shard extends InventoryServiceGrpc.InventoryServiceImplBase {
        final String name;
        final AtomicInteger refusals = new AtomicInteger();
        final AtomicInteger calls = new AtomicInteger();

        Shard(String name) {
            this.name = name;
        }

        String address() {
            return name + "-" + suffix;
        }

        @Override
        public void reserve(ReserveRequest r, StreamObserver<ReserveResponse> out) {
            calls.incrementAndGet();
            if (refusals.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                out.onError(GrpcErrors.toStatus(Failure.retryable(Reason.TENANT_MOVING, "frozen here",
                        Duration.ofSeconds(1))));
                return;
            }
            out.onNext(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).build());
            out.onCompleted();
        }
    }

    @BeforeEach
    void start() throws Exception {
        for (Shard s : List.of(source, target)) {
            Server server = InProcessServerBuilder.forName(s.address()).directExecutor().addService(s).build().start();
            closeLast.add(server::shutdownNow);
        }
        channels = new ShardChannels(a -> InProcessChannelBuilder.forName(a).directExecutor().build());
        closeLast.add(channels);
        topology.set(snapshot("shared", TenantState.ACTIVE, 0));
    }

    @AfterEach
    void close() throws Exception {
        scheduler.shutdownNow();
        Collections.reverse(closeLast);
        for (AutoCloseable c : closeLast) {
            c.close();
        }
    }

    private Topology snapshot(String cell, TenantState state, int epoch) {
        Cell shared = Cell.newBuilder().setName(Topology.SHARED_CELL).addRegions("eu").build();
        Cell solo = Cell.newBuilder().setName("solo").addRegions("eu").build();
        List<ShardInfo> shards = List.of(
                ShardInfo.newBuilder().setShardId("shared-eu-1").setCell("shared").setRegion("eu")
                        .setAddress(source.address()).build(),
                ShardInfo.newBuilder().setShardId("solo-eu-1").setCell("solo").setRegion("eu")
                        .setAddress(target.address()).build());
        List<LiveShard> live = shards.stream()
                .map(s -> LiveShard.newBuilder().setShardId(s.getShardId()).setAddress(s.getAddress()).build()).toList();
        TenantPlacement p = TenantPlacement.newBuilder().setTenantId(TENANT).setCell(cell).setState(state)
                .setMoveId(state == TenantState.MOVING ? "m1" : "").build();
        return Topology.of(List.of(shared, solo), shards, live, Map.of(TENANT, new Versioned<>(p, epoch)));
    }

    private Router router(Duration holdMax) {
        return new Router(topology::get, channels, scheduler, 3, Duration.ofMillis(1), Duration.ofSeconds(5), holdMax);
    }

    private CompletableFuture<ReserveResponse> reserve(Router router, Duration deadline) {
        return router.call(Context.ROOT, Deadline.after(deadline.toMillis(), TimeUnit.MILLISECONDS), TENANT, "sku",
                "eu", true, (ch, o) -> InventoryServiceGrpc.newFutureStub(ch).withDeadline(o.getDeadline())
                        .reserve(ReserveRequest.newBuilder().setTenantId(TENANT).setItemId("sku").build()));
    }

    private static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(10)).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(2);
        }
    }

    private static Reason reasonOf(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("expected a failure, got " + f.join());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Failure failure) {
                return failure.reason();
            }
            String name = GrpcErrors.errorInfo(e.getCause()).map(i -> i.getReason()).orElse("?");
            return Reason.valueOf(name);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no answer", e);
        }
    }

    @Test
    void aCallOfAMovingTenantWaitsForTheFlipAndGoesToTheTargetCell() throws Exception {
        Router router = router(TestTimeouts.scaled(Duration.ofSeconds(20)));
        topology.set(snapshot("shared", TenantState.MOVING, 1));

        CompletableFuture<ReserveResponse> held = reserve(router, TestTimeouts.scaled(Duration.ofSeconds(20)));
        await("the call parked", () -> router.heldForMoves() == 1);
        assertThat(held).isNotDone();
        assertThat(source.calls.get() + target.calls.get()).isZero();

        topology.set(snapshot("solo", TenantState.ACTIVE, 2));
        router.onTopology(topology.get());

        assertThat(held.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                .getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(target.calls.get()).isEqualTo(1);
        assertThat(source.calls.get()).isZero();
        assertThat(router.heldForMoves()).isZero();
    }

    @Test
    void aRolledBackMoveSendsTheHeldCallToTheSource() throws Exception {
        Router router = router(TestTimeouts.scaled(Duration.ofSeconds(20)));
        topology.set(snapshot("shared", TenantState.MOVING, 1));
        CompletableFuture<ReserveResponse> held = reserve(router, TestTimeouts.scaled(Duration.ofSeconds(20)));
        await("the call parked", () -> router.heldForMoves() == 1);

        topology.set(snapshot("shared", TenantState.ACTIVE, 2));
        router.onTopology(topology.get());

        assertThat(held.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                .getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(source.calls.get()).isEqualTo(1);
        assertThat(target.calls.get()).isZero();
    }

    @Test
    void aHoldThatRunsOutAnswersTenantMovingAndSendsNothing() throws Exception {
        Router router = router(Duration.ofMillis(200));
        topology.set(snapshot("shared", TenantState.MOVING, 1));

        assertThat(reasonOf(reserve(router, TestTimeouts.scaled(Duration.ofSeconds(20)))))
                .isEqualTo(Reason.TENANT_MOVING);
        assertThat(router.heldForMoves()).isZero();
        assertThat(source.calls.get() + target.calls.get()).isZero();
    }

    @Test
    void theCallersDeadlineBoundsTheHold() throws Exception {
        Router router = router(TestTimeouts.scaled(Duration.ofSeconds(60)));
        topology.set(snapshot("shared", TenantState.MOVING, 1));

        CompletableFuture<ReserveResponse> f = reserve(router, Duration.ofMillis(400));
        assertThat(reasonOf(f)).isEqualTo(Reason.TENANT_MOVING);
        assertThat(router.heldForMoves()).isZero();
    }

    @Test
    void withoutAHoldTenantMovingIsAnsweredAtOnce() throws Exception {
        Router router = router(Duration.ZERO);
        topology.set(snapshot("shared", TenantState.MOVING, 1));

        assertThat(reasonOf(reserve(router, TestTimeouts.scaled(Duration.ofSeconds(20)))))
                .isEqualTo(Reason.TENANT_MOVING);
        assertThat(router.heldForMoves()).isZero();
    }

    @Test
    void aShardsTenantMovingIsSentAgainWhileTheRouterSeesTheTenantPlaced() throws Exception {
        // The target answers TENANT_MOVING until its items are activated (after the flip).
        Router router = router(TestTimeouts.scaled(Duration.ofSeconds(20)));
        topology.set(snapshot("solo", TenantState.ACTIVE, 2));
        target.refusals.set(3);

        assertThat(reserve(router, TestTimeouts.scaled(Duration.ofSeconds(20)))
                .get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS).getOutcome())
                .isEqualTo(ReserveOutcome.RESERVED);
        assertThat(target.calls.get()).isEqualTo(4);
    }

    @Test
    void aShardsTenantMovingParksTheCallOnceTheRouterSeesTheMove() throws Exception {
        // The source froze the tenant; this router's topology then shows it MOVING.
        Router router = router(TestTimeouts.scaled(Duration.ofSeconds(20)));
        source.refusals.set(1);
        topology.set(snapshot("shared", TenantState.MOVING, 1));
        CompletableFuture<ReserveResponse> held = router.call(Context.ROOT,
                Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS),
                TENANT, "sku", "eu", true, (ch, o) -> InventoryServiceGrpc.newFutureStub(ch).withDeadline(o.getDeadline())
                        .reserve(ReserveRequest.newBuilder().setTenantId(TENANT).setItemId("sku").build()));
        await("the call parked", () -> router.heldForMoves() == 1);

        topology.set(snapshot("solo", TenantState.ACTIVE, 2));
        router.onTopology(topology.get());
        assertThat(held.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                .getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(target.calls.get()).isEqualTo(1);
    }

    @Test
    void moveHoldRefusesPastItsBoundAndWakesEachCallOnce() {
        AtomicReference<Topology> t = new AtomicReference<>(snapshot("shared", TenantState.MOVING, 1));
        MoveHold hold = new MoveHold(2, t::get);
        AtomicInteger woken = new AtomicInteger();
        MoveHold.Parked a = new MoveHold.Parked(woken::incrementAndGet);
        MoveHold.Parked b = new MoveHold.Parked(woken::incrementAndGet);

        assertThat(hold.park(TENANT, a)).isTrue();
        assertThat(hold.park(TENANT, b)).isTrue();
        assertThat(hold.park(TENANT, new MoveHold.Parked(woken::incrementAndGet))).isFalse();
        assertThat(hold.parked()).isEqualTo(2);

        assertThat(b.claim()).isTrue(); // b's owner timed out first
        hold.forget(TENANT, b);
        assertThat(hold.parked()).isEqualTo(1);

        t.set(snapshot("solo", TenantState.ACTIVE, 2));
        hold.onTopology(t.get());
        hold.onTopology(t.get());
        assertThat(woken.get()).isEqualTo(1);
        assertThat(hold.parked()).isZero();
        assertThatThrownBy(() -> new MoveHold(0, t::get)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTenantPlacedAgainWhileParkingIsWokenAtOnce() {
        AtomicReference<Topology> t = new AtomicReference<>(snapshot("solo", TenantState.ACTIVE, 2));
        MoveHold hold = new MoveHold(10, t::get);
        AtomicInteger woken = new AtomicInteger();

        assertThat(hold.park(TENANT, new MoveHold.Parked(woken::incrementAndGet))).isTrue();
        assertThat(woken.get()).isEqualTo(1);
        assertThat(hold.parked()).isZero();
        assertThat(Status.Code.UNAVAILABLE).isEqualTo(Reason.TENANT_MOVING.code());
    }
}
