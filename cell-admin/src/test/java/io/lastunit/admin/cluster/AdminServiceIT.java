package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.admin.v1.AbortMoveRequest;
import io.lastunit.api.admin.v1.AdminServiceGrpc;
import io.lastunit.api.admin.v1.GetMoveRequest;
import io.lastunit.api.admin.v1.ListMovesRequest;
import io.lastunit.api.admin.v1.StartMoveRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * AdminService at its edge, on a local platform with three cells (shared and big in region local,
 * far in region eu): every field checked (INVALID_ARGUMENT naming it), every call needing a token
 * with the admin role for the tenant, each refusal of a start with its reason and nothing
 * recorded, two racing starts of one tenant (one recorded, the others MOVE_RUNNING), and reading
 * and aborting moves recorded in ZooKeeper (none of which needs a shard's move RPCs: the movers of
 * the starts made here are held at their first step by a {@link MoveGate}).
 */
class AdminServiceIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT_TOKEN = "token-of-acme";
    private static final String ACME_ADMIN_TOKEN = "admin-of-acme";
    private static final MoveGate GATE = new MoveGate().hold("race-co");

    private static ClusterClients clients;
    private static LocalPlatform platform;
    private static ManagedChannel adminChannel;
    private static CuratorFramework zk;
    private static TopologyStore store;

    @BeforeAll
    static void start() throws Exception {
        clients = new ClusterClients(PG);
        platform = LocalPlatform.builder(clients.databases())
                .cell("shared", List.of("local"), 1)
                .cell("big", List.of("local"), 1)
                .cell("far", List.of("eu"), 1)
                .balancers(0)
                .tokenGrant(ClusterClients.grant(TENANT_TOKEN, "acme-service", "acme", false))
                .tokenGrant(ClusterClients.grant(ACME_ADMIN_TOKEN, "acme-admin", "acme", true))
                .adminResumeInterval(Duration.ZERO)
                .movers(MoverSettings.defaults().withRetireGrace(Duration.ZERO), MovePolicy.defaults(), GATE,
                        InstantSource.system())
                .start();
        var inventory = ClusterClients.blocking(clients.routerChannel(platform), LocalPlatform.DEV_TOKEN);
        for (String tenant : List.of("acme", "race-co", "other")) {
            ClusterClients.createItem(inventory, CreateItemRequest.newBuilder().setTenantId(tenant).setItemId("shoe")
                    .setTotal(10).setHomeRegion("local").build());
        }
        adminChannel = clients.adminChannel(platform);
        zk = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15));
        zk.start();
        zk.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
        store = new TopologyStore(zk, TopologyStore.ROOT_DEFAULT, InstantSource.system());
    }

    @AfterAll
    static void stop() throws Exception {
        GATE.open();
        if (zk != null) {
            zk.close();
        }
        if (platform != null) {
            platform.close();
        }
        if (clients != null) {
            clients.close();
        }
    }

    private static AdminServiceGrpc.AdminServiceBlockingStub admin(String token) {
        return ClusterClients.adminService(adminChannel, token).withDeadlineAfter(ClusterClients.callDeadlineMillis(),
                TimeUnit.MILLISECONDS);
    }

    private static AdminServiceGrpc.AdminServiceBlockingStub admin() {
        return admin(LocalPlatform.DEV_TOKEN);
    }

    private static StartMoveRequest start(String tenant, String cell) {
        return StartMoveRequest.newBuilder().setTenantId(tenant).setToCell(cell).build();
    }

    private static Throwable refused(Runnable call, Status.Code code, String reason) {
        Throwable t = catchThrowable(call::run);
        assertThat(t).as("the call is refused").isNotNull();
        assertThat(ClusterClients.code(t)).as("status of %s", t).isEqualTo(code);
        assertThat(ClusterClients.reason(t)).as("reason of %s", t).isEqualTo(reason);
        return t;
    }

    private static void assertNothingRecordedFor(String tenant) {
        assertThat(store.moves()).noneMatch(v -> v.value().getTenantId().equals(tenant));
        assertThat(store.placement(tenant).map(p -> p.value().getMoveId()).orElse("")).isEmpty();
    }

    @Test
    void startMove_badFields_areInvalidArgument_namingTheField_andRecordNothing() {
        record Case(StartMoveRequest request, String field) {
        }
        List<Case> cases = List.of(
                new Case(start("", "big"), "tenant_id"),
                new Case(start("a/b", "big"), "tenant_id"),
                new Case(start("x".repeat(65), "big"), "tenant_id"),
                new Case(start("acme", ""), "to_cell"),
                new Case(start("acme", "b c"), "to_cell"),
                new Case(start("acme", "big").toBuilder().setMaxPauseMs(99).build(), "max_pause_ms"),
                new Case(start("acme", "big").toBuilder().setMaxPauseMs(60_001).build(), "max_pause_ms"),
                new Case(start("acme", "big").toBuilder().setMaxPauseMs(-5).build(), "max_pause_ms"),
                new Case(start("acme", "big").toBuilder().setMoveId("x/y").build(), "move_id"));
        for (Case c : cases) {
            Throwable t = refused(() -> admin().startMove(c.request()), Status.Code.INVALID_ARGUMENT, "INVALID_FIELD");
            assertThat(GrpcErrors.errorInfo(t).orElseThrow().getMetadataMap()).as("%s", c.request())
                    .containsEntry("field", c.field());
        }
        refused(() -> admin().getMove(GetMoveRequest.newBuilder().setMoveId("").build()),
                Status.Code.INVALID_ARGUMENT, "INVALID_FIELD");
        refused(() -> admin().abortMove(AbortMoveRequest.newBuilder().setMoveId("m").setReason("r".repeat(257))
                .build()), Status.Code.INVALID_ARGUMENT, "INVALID_FIELD");
        refused(() -> admin().listMoves(ListMovesRequest.newBuilder().setTenantId("a/b").build()),
                Status.Code.INVALID_ARGUMENT, "INVALID_FIELD");
        assertNothingRecordedFor("acme");
    }

    @Test
    void everyCall_needsATokenWithTheAdminRoleForTheTenant() {
        List<Function<AdminServiceGrpc.AdminServiceBlockingStub, Object>> calls = List.of(
                s -> s.startMove(start("other", "big")),
                s -> s.getMove(GetMoveRequest.newBuilder().setMoveId("any").build()),
                s -> s.listMoves(ListMovesRequest.newBuilder().setTenantId("other").build()),
                s -> s.abortMove(AbortMoveRequest.newBuilder().setMoveId("any").build()));
        for (var call : calls) {
            refused(() -> call.apply(ClusterClients.adminService(adminChannel, null)), Status.Code.UNAUTHENTICATED,
                    "UNAUTHENTICATED");
            refused(() -> call.apply(admin("not-a-token")), Status.Code.UNAUTHENTICATED, "UNAUTHENTICATED");
            refused(() -> call.apply(admin(TENANT_TOKEN)), Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED");
        }
        refused(() -> admin(ACME_ADMIN_TOKEN).startMove(start("other", "big")), Status.Code.PERMISSION_DENIED,
                "PERMISSION_DENIED");
        refused(() -> admin(ACME_ADMIN_TOKEN).listMoves(ListMovesRequest.newBuilder().setTenantId("other").build()),
                Status.Code.PERMISSION_DENIED, "PERMISSION_DENIED");
        assertNothingRecordedFor("other");
    }

    @Test
    void startMove_toAnUnknownCell_isUnknownCell() {
        refused(() -> admin().startMove(start("acme", "nowhere")), Status.Code.NOT_FOUND, "UNKNOWN_CELL");
        assertNothingRecordedFor("acme");
    }

    @Test
    void startMove_ofATenantWithNoItems_isUnknownTenant() {
        refused(() -> admin().startMove(start("nobody-co", "big")), Status.Code.NOT_FOUND, "UNKNOWN_TENANT");
        assertNothingRecordedFor("nobody-co");
        assertThat(store.placement("nobody-co")).isEmpty();
    }

    @Test
    void startMove_intoTheCellItLivesIn_isTenantAlreadyInCell() {
        refused(() -> admin().startMove(start("acme", "shared")), Status.Code.FAILED_PRECONDITION,
                "TENANT_ALREADY_IN_CELL");
        assertNothingRecordedFor("acme");
    }

    @Test
    void startMove_intoACellWithoutTheTenantsRegions_isCellLacksRegions() {
        Throwable t = refused(() -> admin().startMove(start("acme", "far")), Status.Code.FAILED_PRECONDITION,
                "CELL_LACKS_REGIONS");
        assertThat(GrpcErrors.errorInfo(t).orElseThrow().getMetadataMap()).containsEntry("regions", "local");
        assertNothingRecordedFor("acme");
    }

    @Test
    void racingStarts_ofOneTenant_recordExactlyOneMove_theOthersAreMoveRunning() throws Exception {
        int racers = 6;
        CyclicBarrier barrier = new CyclicBarrier(racers);
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        List<Future<Object>> answers = new ArrayList<>();
        try {
            for (int i = 0; i < racers; i++) {
                StartMoveRequest r = start("race-co", "big").toBuilder().setMoveId("race-" + i).build();
                answers.add(pool.submit(() -> {
                    barrier.await(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
                    try {
                        return admin().startMove(r);
                    } catch (RuntimeException e) {
                        return e;
                    }
                }));
            }
            List<Move> won = new ArrayList<>();
            List<Throwable> lost = new ArrayList<>();
            for (Future<Object> f : answers) {
                Object a = f.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
                if (a instanceof Move m) {
                    won.add(m);
                } else {
                    lost.add((Throwable) a);
                }
            }
            assertThat(won).hasSize(1);
            Move winner = won.get(0);
            assertThat(winner.getStep()).isEqualTo(MoveStep.PLANNED);
            assertThat(winner.getFromCell()).isEqualTo("shared");
            assertThat(winner.getToCell()).isEqualTo("big");
            assertThat(winner.getMaxPauseMs()).isEqualTo(2_000);
            assertThat(lost).hasSize(racers - 1).allSatisfy(t -> {
                assertThat(ClusterClients.code(t)).as("%s", t).isEqualTo(Status.Code.ALREADY_EXISTS);
                assertThat(ClusterClients.reason(t)).isEqualTo("MOVE_RUNNING");
                assertThat(GrpcErrors.errorInfo(t).orElseThrow().getMetadataMap())
                        .containsEntry("move_id", winner.getMoveId());
            });
            assertThat(store.moves()).filteredOn(v -> v.value().getTenantId().equals("race-co")).hasSize(1);
            assertThat(store.placement("race-co").orElseThrow().value().getMoveId()).isEqualTo(winner.getMoveId());

            // A repeat of the winner's start returns its move; its id for another tenant is refused.
            Move again = admin().startMove(start("race-co", "big").toBuilder().setMoveId(winner.getMoveId()).build());
            assertThat(again.getMoveId()).isEqualTo(winner.getMoveId());
            assertThat(again.getCreatedAtMs()).isEqualTo(winner.getCreatedAtMs());
            Throwable taken = refused(() -> admin().startMove(start("acme", "big").toBuilder()
                    .setMoveId(winner.getMoveId()).build()), Status.Code.INVALID_ARGUMENT, "INVALID_FIELD");
            assertThat(GrpcErrors.errorInfo(taken).orElseThrow().getMetadataMap()).containsEntry("field", "move_id");
            refused(() -> admin().startMove(start("race-co", "big")), Status.Code.ALREADY_EXISTS, "MOVE_RUNNING");
            assertNothingRecordedFor("acme");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void getListAndAbort_readAndChangeTheMovesInZooKeeper() throws Exception {
        Move flipped = recorded("m-flipped", "flip-co", MoveStep.FLIPPED, 100);
        Move planned = recorded("m-planned", "abort-co", MoveStep.PLANNED, 200);
        Move done = recorded("m-done", "done-co", MoveStep.ABORTED, 300);

        refused(() -> admin().getMove(GetMoveRequest.newBuilder().setMoveId("m-nope").build()), Status.Code.NOT_FOUND,
                "UNKNOWN_MOVE");
        refused(() -> admin().abortMove(AbortMoveRequest.newBuilder().setMoveId("m-nope").build()),
                Status.Code.NOT_FOUND, "UNKNOWN_MOVE");
        assertThat(admin().getMove(GetMoveRequest.newBuilder().setMoveId("m-flipped").build())).isEqualTo(flipped);
        assertThat(admin().listMoves(ListMovesRequest.newBuilder().setTenantId("flip-co").build()).getMovesList())
                .containsExactly(flipped);
        List<String> ids = admin().listMoves(ListMovesRequest.getDefaultInstance()).getMovesList().stream()
                .map(Move::getMoveId).filter(id -> id.startsWith("m-")).toList();
        assertThat(ids).as("running first, then newest first").containsExactly("m-planned", "m-flipped", "m-done");
        assertThat(admin(ACME_ADMIN_TOKEN).listMoves(ListMovesRequest.getDefaultInstance()).getMovesList())
                .as("only the moves of tenants the caller may use").allMatch(m -> m.getTenantId().equals("acme"));

        // Past the commit point: refused, unchanged.
        refused(() -> admin().abortMove(AbortMoveRequest.newBuilder().setMoveId("m-flipped").build()),
                Status.Code.FAILED_PRECONDITION, "MOVE_PAST_COMMIT_POINT");
        assertThat(store.move("m-flipped").orElseThrow().value()).isEqualTo(flipped);

        // Before it, with no mover holding the move: this server rolls it back.
        Move aborting = admin().abortMove(AbortMoveRequest.newBuilder().setMoveId("m-planned")
                .setReason("operator says stop").build());
        assertThat(aborting.getStep()).isIn(MoveStep.ABORTING, MoveStep.ABORTED);
        assertThat(aborting.getAbortRequested()).isTrue();
        assertThat(aborting.getReason()).contains("operator says stop");
        ClusterClients.awaitUntil(() -> store.placement("abort-co").orElseThrow().value().getMoveId().isEmpty(),
                "the placement of abort-co no longer names the move");
        assertThat(store.placement("abort-co").orElseThrow().value().getCell()).isEqualTo("shared");
        Move again = admin().abortMove(AbortMoveRequest.newBuilder().setMoveId("m-planned").build());
        assertThat(again.getStep()).as("idempotent").isIn(MoveStep.ABORTING, MoveStep.ABORTED);
        assertThat(admin().abortMove(AbortMoveRequest.newBuilder().setMoveId("m-done").build())).isEqualTo(done);
        assertThat(planned.getStep()).isEqualTo(MoveStep.PLANNED);
    }

    /** A move written straight into ZooKeeper (no mover runs it), at {@code step}. */
    private static Move recorded(String id, String tenant, MoveStep step, long createdAtMs) {
        Move m = Move.newBuilder().setMoveId(id).setTenantId(tenant).setFromCell("shared").setToCell("big")
                .setStep(MoveStep.PLANNED).setMaxPauseMs(2_000).setCreatedAtMs(createdAtMs).setUpdatedAtMs(createdAtMs)
                .setPlannedEpoch(0).setOwner("test").build();
        store.startMove(m, -1);
        if (step == MoveStep.PLANNED) {
            return m;
        }
        Move at = m.toBuilder().setStep(step).setFinishedAtMs(step == MoveStep.ABORTED ? createdAtMs : 0).build();
        store.updateMove(at, 0);
        return at;
    }
}
