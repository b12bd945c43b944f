package io.lastunit.admin.move;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.Status;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.MoveLease;
import io.lastunit.common.topology.Placement;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The mover through every step, every crash and every refusal, against real ZooKeeper and real
 * gRPC sockets, with shard nodes whose move RPCs are {@link FakeShard}s (in memory, the contract of
 * {@code shard.proto}): cell a and cell b, each with two shards in region r1 and one in r2. Each
 * test moves a tenant of its own (items in both regions, buckets and holds) while a writer keeps
 * changing the tenant's rows on the source, and checks the end: rolled forward (every write that
 * was accepted is on the target, by the target's placement, ACTIVE; nothing left at the source;
 * the tenant in cell b) or rolled back (everything on the source, ACTIVE; nothing at the target;
 * the tenant in cell a, as before).
 */
class MoverIT {
    private static final List<String> REGIONS = List.of("r1", "r2");
    private static final int ITEMS = 12;
    private static final MoverSettings SETTINGS = new MoverSettings(Duration.ofSeconds(5), Duration.ofSeconds(30), 3,
            Duration.ofMillis(10), 7, 10, 1_024, 2, Duration.ofMillis(300), Duration.ofMillis(20), Duration.ofMillis(10),
            Duration.ZERO);
    private static final AtomicInteger TENANTS = new AtomicInteger();

    private static TestingServer zookeeper;
    private static CuratorFramework client;
    private static TopologyStore store;
    private static ShardChannels channels;
    /** An operator's view of the moves (abort requests). */
    private static Moves operator;
    private static final Map<String, FakeShard> SHARDS = new LinkedHashMap<>();

    private Writer writer;

    @BeforeAll
    static void start() throws Exception {
        zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"), true);
        client = connect();
        store = new TopologyStore(client, TopologyStore.ROOT_DEFAULT, InstantSource.system());
        for (String cell : List.of("a", "b")) {
            List<ShardInfo> infos = new ArrayList<>();
            for (String id : List.of(cell + "-r1-1", cell + "-r1-2", cell + "-r2-1")) {
                FakeShard s = new FakeShard(id, cell, id.substring(2, 4));
                SHARDS.put(id, s);
                infos.add(s.info);
            }
            store.createCell(cell, REGIONS, infos);
        }
        channels = new ShardChannels(new ShardChannels.Dial(io.lastunit.common.tls.ClientTls.PLAINTEXT, 16 << 20, false, true), Duration.ofSeconds(1));
        operator = new Moves(store, client, TopologyStore.ROOT_DEFAULT, channels, MovePolicy.defaults(), SETTINGS,
                InstantSource.system(), MoveFaults.NONE, "operator", 1);
    }

    @AfterAll
    static void stop() throws Exception {
        if (operator != null) {
            operator.close();
        }
        if (channels != null) {
            channels.close();
        }
        SHARDS.values().forEach(FakeShard::close);
        if (client != null) {
            client.close();
        }
        if (zookeeper != null) {
            zookeeper.close();
        }
    }

    @AfterEach
    void stopWriter() throws InterruptedException {
        if (writer != null) {
            writer.stop();
        }
        for (FakeShard s : SHARDS.values()) {
            s.corrupt(false);
        }
    }

    private static CuratorFramework connect() throws InterruptedException {
        CuratorFramework c = Curators.newClient(zookeeper.getConnectString(), Duration.ofSeconds(5));
        c.start();
        if (!c.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("no ZooKeeper");
        }
        return c;
    }

    private static Mover mover(CuratorFramework zk, MoveFaults faults, InstantSource clock, String owner) {
        return new Mover(new TopologyStore(zk, TopologyStore.ROOT_DEFAULT, clock), zk, TopologyStore.ROOT_DEFAULT,
                channels, new io.lastunit.admin.move.plan.MovePlanner(new MovePolicy(20, 4, 50)), SETTINGS, clock,
                faults, owner);
    }

    private static Mover mover(MoveFaults faults) {
        return mover(client, faults, InstantSource.system(), "mover-" + TENANTS.get());
    }

    private static MoveStarter starter() {
        return new MoveStarter(store, new TenantShards(channels, SETTINGS), InstantSource.system(), "test");
    }

    /** A new tenant with items in both regions of cell a, each with buckets and holds; a writer on it. */
    private String tenantInA() {
        String tenant = "t" + TENANTS.incrementAndGet();
        store.assignTenant(tenant, "a", -1);
        writer = new Writer(tenant);
        for (int i = 0; i < ITEMS; i++) {
            String item = "item-" + i;
            String region = i % 3 == 2 ? "r2" : "r1";
            writer.items.put(item, region);
            FakeShard s = owner("a", tenant, item, region);
            s.create(tenant, item, "buckets", "b0", 10);
            s.create(tenant, item, "buckets", "b1", 10);
            for (int h = 0; h < 3; h++) {
                s.create(tenant, item, "holds", "h" + h, 1);
            }
        }
        return tenant;
    }

    private static FakeShard owner(String cell, String tenant, String item, String region) {
        List<ShardInfo> candidates = SHARDS.values().stream().map(s -> s.info)
                .filter(i -> i.getCell().equals(cell) && i.getRegion().equals(region)).toList();
        return SHARDS.get(Placement.pick(tenant, item, candidates).getShardId());
    }

    private static Move plan(String tenant, String toCell, long maxPauseMs) throws InterruptedException {
        return starter().start(tenant, toCell, maxPauseMs, "").value();
    }

    /** Keeps writing the tenant's holds at its source, remembering each write that was accepted. */
    private static final class Writer {
        final String tenant;
        final Map<String, String> items = new TreeMap<>();
        final Map<String, Long> accepted = new ConcurrentHashMap<>();
        final AtomicLong refused = new AtomicLong();
        private final AtomicBoolean running = new AtomicBoolean();
        private Thread thread;
        private String cell = "a";

        Writer(String tenant) {
            this.tenant = tenant;
        }

        Writer start() {
            running.set(true);
            thread = new Thread(() -> {
                long n = 0;
                while (running.get()) {
                    n++;
                    String item = "item-" + (n % ITEMS);
                    String key = "w" + (n % 40);
                    if (owner(cell, tenant, item, items.get(item)).update(tenant, item, "holds", key, n)) {
                        accepted.put(item + "/" + key, n);
                    } else {
                        refused.incrementAndGet();
                    }
                    if (n % 50 == 0) {
                        Thread.onSpinWait();
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }, "writer-" + tenant);
            thread.setDaemon(true);
            thread.start();
            return this;
        }

        void stop() throws InterruptedException {
            running.set(false);
            if (thread != null) {
                thread.join(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis());
            }
        }

        /** Where the writer writes from now on (after a move, the tenant's new cell). */
        void writeTo(String c) {
            this.cell = c;
        }
    }

    /** Every accepted write is in {@code cell}, on the shard placement gives its item, ACTIVE; nothing elsewhere. */
    private void assertAllIn(String tenant, String cell) throws InterruptedException {
        writer.stop();
        String other = cell.equals("a") ? "b" : "a";
        for (Map.Entry<String, String> e : writer.items.entrySet()) {
            String item = e.getKey();
            FakeShard home = owner(cell, tenant, item, e.getValue());
            Map<String, Map<String, Long>> rows = home.rows(tenant, "ACTIVE");
            assertThat(rows).as("%s/%s ACTIVE on %s", tenant, item, home.info.getShardId()).containsKey(item);
            Map<String, Long> r = rows.get(item);
            assertThat(r).as("the rows it was created with").containsEntry("buckets:b0", 10L).containsEntry("holds:h2", 1L);
            writer.accepted.forEach((k, v) -> {
                if (k.startsWith(item + "/")) {
                    assertThat(r).as("accepted write %s", k).containsEntry("holds:" + k.substring(k.indexOf('/') + 1), v);
                }
            });
        }
        for (FakeShard s : SHARDS.values()) {
            if (s.info.getCell().equals(other)) {
                assertThat(s.states(tenant)).as("%s's items on %s", tenant, s.info.getShardId()).isEmpty();
            } else {
                assertThat(s.states(tenant).values()).as("states on %s", s.info.getShardId()).allMatch("ACTIVE"::equals);
            }
        }
        TenantPlacement p = store.placement(tenant).orElseThrow().value();
        assertThat(p.getCell()).isEqualTo(cell);
        assertThat(p.getState()).isEqualTo(TenantState.ACTIVE);
        assertThat(p.getMoveId()).isEmpty();
    }

    @Test
    void move_rollsForwardThroughEveryStep_whileTheTenantWrites_andLosesNoAcceptedWrite() throws Exception {
        String tenant = tenantInA();
        writer.start();
        Move planned = plan(tenant, "b", 10_000);
        List<MoveStep> steps = Collections.synchronizedList(new ArrayList<>());

        Mover.Outcome o = mover(MoveFaults.NONE).run(planned.getMoveId(), m -> steps.add(m.getStep()));

        assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.CLEANED);
        assertThat(steps).startsWith(MoveStep.PLANNED, MoveStep.COPYING, MoveStep.CATCHING_UP)
                .endsWith(MoveStep.FENCED, MoveStep.VERIFIED, MoveStep.FLIPPED, MoveStep.CLEANED, MoveStep.CLEANED);
        Move end = o.move();
        assertThat(end.getFinishedAtMs()).isPositive();
        assertThat(end.getFencedEpoch()).isEqualTo(planned.getPlannedEpoch() + 1);
        assertThat(end.getCopied().getItems()).isGreaterThanOrEqualTo(ITEMS);
        assertThat(end.getCopied().getHolds()).isGreaterThanOrEqualTo(3L * ITEMS);
        assertThat(end.getPauseMs()).isBetween(0L, end.getFinishedAtMs() - end.getFencedAtMs());
        assertThat(end.getCatchUpRounds()).isBetween(1, 4);
        assertThat(MoveLease.holder(client, TopologyStore.ROOT_DEFAULT, end.getMoveId())).isEmpty();
        assertAllIn(tenant, "b");
        assertThat(store.placement(tenant).orElseThrow().version()).as("assign, start, fence, flip, clean")
                .isEqualTo(planned.getPlannedEpoch() + 3);
        assertThat(planned.getPlannedEpoch()).isEqualTo(1);

        // And back again: the same operation, from b to a.
        writer = new Writer(tenant);
        writer.items.putAll(Map.copyOf(itemsOf(tenant)));
        writer.writeTo("b");
        writer.start();
        Move back = plan(tenant, "a", 10_000);
        assertThat(back.getFromCell()).isEqualTo("b");
        assertThat(mover(MoveFaults.NONE).run(back.getMoveId(), m -> { }).result()).isEqualTo(Mover.Result.CLEANED);
        assertAllIn(tenant, "a");
    }

    private Map<String, String> itemsOf(String tenant) {
        Map<String, String> items = new TreeMap<>();
        for (int i = 0; i < ITEMS; i++) {
            items.put("item-" + i, i % 3 == 2 ? "r2" : "r1");
        }
        return items;
    }

    /** The injected death of a mover right after it recorded a step. */
    static final class Crash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Crash(String m) {
            super(m);
        }
    }

    /** Where a mover dies: right after recording the first {@code step} (for CLEANED: its finish too). */
    enum CrashPoint {
        COPYING, CATCHING_UP, FENCED, VERIFIED, FLIPPED, CLEANED, CLEANED_FINISHED, ABORTING, ABORTED
    }

    @ParameterizedTest
    @EnumSource(CrashPoint.class)
    void aMoverKilledAfterARecordedStep_isResumedByAnother_andTheMoveEndsWholeOneWayOrTheOther(CrashPoint point)
            throws Exception {
        String tenant = tenantInA();
        writer.start();
        boolean abortPath = point == CrashPoint.ABORTING || point == CrashPoint.ABORTED;
        Move planned = plan(tenant, "b", 10_000);
        AtomicBoolean crashed = new AtomicBoolean();
        MoveFaults crashAt = recorded -> {
            if (abortPath && recorded.getStep() == MoveStep.CATCHING_UP && !recorded.getAbortRequested()) {
                operator.requestAbort(recorded.getMoveId(), "test");
            }
            boolean hit = switch (point) {
                case CLEANED_FINISHED -> recorded.getStep() == MoveStep.CLEANED && recorded.getFinishedAtMs() != 0;
                default -> recorded.getStep().name().equals(point.name());
            };
            if (hit && crashed.compareAndSet(false, true)) {
                throw new Crash("mover dies after recording " + point);
            }
        };

        Throwable died = catchThrowable(() -> mover(crashAt).run(planned.getMoveId(), m -> { }));

        assertThat(died).isInstanceOf(Crash.class);
        Move atCrash = store.move(planned.getMoveId()).orElseThrow().value();
        assertThat(MoveLease.holder(client, TopologyStore.ROOT_DEFAULT, planned.getMoveId()))
                .as("a dead mover holds no lease").isEmpty();

        Mover.Outcome o = mover(connect(), MoveFaults.NONE, InstantSource.system(), "resumer")
                .run(planned.getMoveId(), m -> { });

        // Before the fence and after the flip the way is certain; fenced, a resumed mover may find the
        // pause budget spent (on a slow host) and roll back.
        boolean fenced = atCrash.getStep() == MoveStep.FENCED || atCrash.getStep() == MoveStep.VERIFIED;
        Mover.Result expected = abortPath ? Mover.Result.ABORTED : fenced ? null : Mover.Result.CLEANED;
        if (expected != null) {
            assertThat(o.result()).as("%s after a crash at %s: %s", o.move().getStep(), point, o.detail())
                    .isEqualTo(expected);
        } else {
            assertThat(o.result()).as(o.detail()).isIn(Mover.Result.CLEANED, Mover.Result.ABORTED);
        }
        if (!io.lastunit.admin.move.plan.MovePlanner.finished(atCrash)) {
            assertThat(o.move().getOwner()).as("the resumer took it over").isEqualTo("resumer");
        }
        assertAllIn(tenant, o.result() == Mover.Result.CLEANED ? "b" : "a");
    }

    @Test
    void anAbortRequestedWhileCopying_rollsBack_andTheTenantWritesOnTheSourceAgain() throws Exception {
        String tenant = tenantInA();
        writer.start();
        Move planned = plan(tenant, "b", 10_000);
        CountDownLatch atCopying = new CountDownLatch(1);
        CountDownLatch asked = new CountDownLatch(1);
        MoveFaults hold = recorded -> {
            if (recorded.getStep() == MoveStep.COPYING && atCopying.getCount() > 0) {
                atCopying.countDown();
                await(asked);
            }
        };
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Mover.Outcome> run = pool.submit(() -> mover(hold).run(planned.getMoveId(), m -> { }));
            await(atCopying);
            Move asking = operator.requestAbort(planned.getMoveId(), "changed my mind");
            assertThat(asking.getAbortRequested()).isTrue();
            asked.countDown();

            Mover.Outcome o = run.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);

            assertThat(o.result()).isEqualTo(Mover.Result.ABORTED);
            assertThat(o.move().getReason()).contains("abort requested").contains("changed my mind");
            assertThat(writer.refused.get()).as("nothing was frozen: no write refused").isZero();
            assertThat(owner("a", tenant, "item-0", "r1").update(tenant, "item-0", "holds", "after", 7)).isTrue();
            assertAllIn(tenant, "a");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aDifferenceFoundByVerification_rollsBackBeforeTheFlip() throws Exception {
        String tenant = tenantInA();
        SHARDS.values().stream().filter(s -> s.info.getCell().equals("b")).findFirst().orElseThrow().corrupt(true);
        Move planned = plan(tenant, "b", 10_000);

        Mover.Outcome o = mover(MoveFaults.NONE).run(planned.getMoveId(), m -> { });

        assertThat(o.result()).isEqualTo(Mover.Result.ABORTED);
        assertThat(o.move().getReason()).contains("verification found").contains("injected drift");
        assertAllIn(tenant, "a");
    }

    @Test
    void aMoveFencedPastItsPauseBudget_rollsBack_andTheTenantKeepsWritingOnTheSource() throws Exception {
        String tenant = tenantInA();
        writer.start();
        JumpClock clock = new JumpClock();
        Move planned = plan(tenant, "b", 500);
        FakeShard source = owner("a", tenant, "item-0", "r1");
        AtomicBoolean refusedWhileFenced = new AtomicBoolean();
        // The verification takes "10 s" by the mover's clock: far over the 500 ms budget.
        MoveFaults slow = recorded -> {
            if (recorded.getStep() == MoveStep.VERIFIED) {
                refusedWhileFenced.set(!source.update(tenant, "item-0", "holds", "fenced", 1));
                clock.jump(Duration.ofSeconds(10));
            }
        };

        Mover.Outcome o = mover(client, slow, clock, "mover").run(planned.getMoveId(), m -> { });

        assertThat(o.result()).isEqualTo(Mover.Result.ABORTED);
        assertThat(o.move().getReason()).contains("over the pause budget of 500 ms");
        assertThat(o.move().getFencedAtMs()).isPositive();
        assertThat(refusedWhileFenced).as("a write while the tenant was fenced is refused").isTrue();
        assertThat(source.update(tenant, "item-0", "holds", "after", 2)).as("and accepted after the roll-back").isTrue();
        assertAllIn(tenant, "a");
    }

    @Test
    void pendingTransfers_areWaitedFor_andAMoveWhoseTransfersStayPending_rollsBack() throws Exception {
        String tenant = tenantInA();
        FakeShard source = owner("a", tenant, "item-0", "r1");
        source.pendingTransfers("item-0", 1, Integer.MAX_VALUE);
        try {
            Move planned = plan(tenant, "b", 10_000);
            Mover.Outcome o = mover(MoveFaults.NONE).run(planned.getMoveId(), m -> { });
            assertThat(o.result()).isEqualTo(Mover.Result.ABORTED);
            assertThat(o.move().getReason()).contains("1 transfers of the tenant are still pending on a");
            assertAllIn(tenant, "a");

            // Once they finish during the wait (pending in the pass's summary and the first poll), the move goes on.
            writer = new Writer(tenant);
            writer.items.putAll(itemsOf(tenant));
            source.pendingTransfers("item-0", 1, 2);
            Move again = plan(tenant, "b", 10_000);
            Mover.Outcome done = mover(MoveFaults.NONE).run(again.getMoveId(), m -> { });
            assertThat(done.result()).as(done.detail()).isEqualTo(Mover.Result.CLEANED);
            assertThat(done.move().getCatchUpRounds()).as("a pass after the wait").isGreaterThanOrEqualTo(2);
            assertAllIn(tenant, "b");
        } finally {
            source.pendingTransfers("item-0", 0, 0);
        }
    }

    @Test
    void retryableShardFailures_areRetried_andARefusalForGood_rollsBack() throws Exception {
        String tenant = tenantInA();
        for (FakeShard s : SHARDS.values()) {
            s.failNext("ImportTenant", Status.UNAVAILABLE, 2);
            s.failNext("FreezeTenant", Status.DEADLINE_EXCEEDED, 1);
        }
        Move planned = plan(tenant, "b", 5_000);
        assertThat(mover(MoveFaults.NONE).run(planned.getMoveId(), m -> { }).result()).isEqualTo(Mover.Result.CLEANED);
        assertAllIn(tenant, "b");

        String other = tenantInA();
        for (FakeShard s : SHARDS.values()) {
            s.failNext("ImportTenant", Status.FAILED_PRECONDITION, 1);
        }
        Move refused = plan(other, "b", 10_000);
        Mover.Outcome o = mover(MoveFaults.NONE).run(refused.getMoveId(), m -> { });
        for (FakeShard s : SHARDS.values()) {
            s.failNext("ImportTenant", Status.FAILED_PRECONDITION, 0);
        }
        assertThat(o.result()).isEqualTo(Mover.Result.ABORTED);
        assertThat(o.move().getReason()).contains("COPYING failed: ImportTenant on shard").contains("FAILED_PRECONDITION");
        assertAllIn(other, "a");
    }

    @Test
    void afterTheFlip_aFailingStepHalts_andAResumeRollsForward() throws Exception {
        String tenant = tenantInA();
        for (FakeShard s : SHARDS.values()) {
            if (s.info.getCell().equals("b")) {
                s.failNext("ActivateTenant", Status.UNAVAILABLE, 100);
            }
        }
        Move planned = plan(tenant, "b", 10_000);
        Mover.Outcome halted = mover(MoveFaults.NONE).run(planned.getMoveId(), m -> { });
        assertThat(halted.result()).isEqualTo(Mover.Result.HALTED);
        assertThat(halted.move().getStep()).isEqualTo(MoveStep.FLIPPED);
        assertThat(halted.move().getReason()).contains("ActivateTenant").contains("rolls forward");
        assertThat(store.placement(tenant).orElseThrow().value().getCell()).as("flipped").isEqualTo("b");
        Moves moves = new Moves(store, client, TopologyStore.ROOT_DEFAULT, channels, MovePolicy.defaults(), SETTINGS,
                InstantSource.system(), MoveFaults.NONE, "operator", 1);
        Throwable pastCommit = catchThrowable(() -> moves.requestAbort(planned.getMoveId(), "too late"));
        assertThat(pastCommit).hasMessageContaining("rolls forward");

        for (FakeShard s : SHARDS.values()) {
            s.failNext("ActivateTenant", Status.UNAVAILABLE, 0);
        }
        Mover.Outcome resumed = mover(MoveFaults.NONE).run(planned.getMoveId(), m -> { });
        assertThat(resumed.result()).isEqualTo(Mover.Result.CLEANED);
        assertThat(resumed.move().getPauseMs()).isPositive();
        assertAllIn(tenant, "b");
    }

    @Test
    void aSecondMover_onAMoveThatIsRunning_isBusy_andAStaleMoverStopsAtItsNextWrite() throws Exception {
        String tenant = tenantInA();
        Move planned = plan(tenant, "b", 10_000);
        CuratorFramework first = connect();
        CountDownLatch atCopying = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        MoveFaults hold = recorded -> {
            if (recorded.getStep() == MoveStep.COPYING && atCopying.getCount() > 0) {
                atCopying.countDown();
                await(goOn);
            }
        };
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Mover.Outcome> stale = pool.submit(() -> mover(first, hold, InstantSource.system(), "first")
                    .run(planned.getMoveId(), m -> { }));
            await(atCopying);

            Mover.Outcome busy = mover(connect(), MoveFaults.NONE, InstantSource.system(), "second")
                    .run(planned.getMoveId(), m -> { });
            assertThat(busy.result()).isEqualTo(Mover.Result.BUSY);
            assertThat(busy.detail()).contains("first");

            // The first mover's session ends (a long pause, a partition): its lease goes, a third takes over.
            expireOnServer(first.getZookeeperClient().getZooKeeper());
            awaitNoLease(planned.getMoveId());
            Mover.Outcome third = mover(connect(), MoveFaults.NONE, InstantSource.system(), "third")
                    .run(planned.getMoveId(), m -> { });
            assertThat(third.result()).isEqualTo(Mover.Result.CLEANED);

            goOn.countDown();
            Mover.Outcome o = stale.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.STOPPED);
            assertThat(store.move(planned.getMoveId()).orElseThrow().value().getOwner()).isEqualTo("third");
            assertAllIn(tenant, "b");
        } finally {
            goOn.countDown();
            pool.shutdownNow();
            first.close();
        }
    }

    @Test
    void aStaleMoversImportInFlight_isRefusedByTheTargets_andItStops_leavingTheMoveToItsSuccessor()
            throws Exception {
        String tenant = tenantInA();
        Move planned = plan(tenant, "b", 10_000);
        CountDownLatch staleImporting = new CountDownLatch(1);
        CountDownLatch staleGoOn = new CountDownLatch(1);
        MoveFaults pauseAtImport = new MoveFaults() {
            @Override
            public void afterRecorded(Move recorded) {
            }

            @Override
            public void beforeImport(String moveId, ShardInfo target) {
                staleImporting.countDown();
                await(staleGoOn); // a long pause of the stale mover's process, its rows exported and in hand
            }
        };
        CountDownLatch successorCaughtUp = new CountDownLatch(1);
        CountDownLatch successorGoOn = new CountDownLatch(1);
        MoveFaults holdAtCatchingUp = recorded -> {
            if (recorded.getStep() == MoveStep.CATCHING_UP && successorCaughtUp.getCount() > 0) {
                successorCaughtUp.countDown();
                await(successorGoOn);
            }
        };
        CuratorFramework first = connect();
        CuratorFramework second = connect();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Mover.Outcome> stale = pool.submit(() -> mover(first, pauseAtImport, InstantSource.system(), "stale")
                    .run(planned.getMoveId(), m -> { }));
            await(staleImporting);
            // Its session expired while it was paused: ZooKeeper took the lease away, and it has not heard yet.
            client.delete().forPath(TopologyStore.ROOT_DEFAULT + "/moves/" + planned.getMoveId() + "/lease");
            Future<Mover.Outcome> successor = pool.submit(() -> mover(second, holdAtCatchingUp,
                    InstantSource.system(), "successor").run(planned.getMoveId(), m -> { }));
            await(successorCaughtUp); // it adopted the move and copied every row into the targets

            staleGoOn.countDown();
            Mover.Outcome o = stale.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(o.result()).as(o.detail()).isEqualTo(Mover.Result.STOPPED);
            assertThat(o.detail()).contains("ImportTenant").contains("MOVE_SUPERSEDED");
            Move now = store.move(planned.getMoveId()).orElseThrow().value();
            assertThat(now.getStep()).as("as the successor recorded it").isEqualTo(MoveStep.CATCHING_UP);
            assertThat(now.getOwner()).isEqualTo("successor");
            assertThat(now.getAbortRequested()).isFalse();
            assertThat(now.getReason()).isEmpty();

            successorGoOn.countDown();
            Mover.Outcome done = successor.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(),
                    TimeUnit.MILLISECONDS);
            assertThat(done.result()).as(done.detail()).isEqualTo(Mover.Result.CLEANED);
            assertAllIn(tenant, "b");
            // One token wrote everywhere the move wrote: the successor's; the stale mover's was refused.
            assertThat(SHARDS.values().stream().mapToLong(sh -> sh.token(tenant, planned.getMoveId())).distinct()
                    .boxed().toList()).as("tokens of the move on every shard").hasSize(1).allMatch(t -> t > 0);
            assertThat(SHARDS.values().stream().mapToInt(sh -> sh.superseded(tenant)).sum()).isPositive();
        } finally {
            staleGoOn.countDown();
            successorGoOn.countDown();
            pool.shutdownNow();
            first.close();
            second.close();
        }
    }

    private static void awaitNoLease(String moveId) throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(20)).toNanos();
        while (MoveLease.holder(client, TopologyStore.ROOT_DEFAULT, moveId).isPresent()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the lease of " + moveId + " never went");
            }
            Thread.sleep(20);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("timed out waiting");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Ends {@code zk}'s session on the server: a second handle joins the session and closes it. */
    private static void expireOnServer(ZooKeeper zk) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(zookeeper.getConnectString(), 5_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            await(connected);
        } finally {
            twin.close();
        }
    }

    /** The real time plus whatever the test added: durations stay real, a jump is instant. */
    static final class JumpClock implements InstantSource {
        private final AtomicLong offsetMs = new AtomicLong();

        void jump(Duration d) {
            offsetMs.addAndGet(d.toMillis());
        }

        @Override
        public Instant instant() {
            return Instant.now().plusMillis(offsetMs.get());
        }
    }
}
