package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.balancer.transfer.TransferReason;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.PostgresFixture;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * BalancerService.Pull against a leader and three real shard nodes (eu home, us, ap). The
 * balancing loop is slowed to once an hour so that only pulls move stock here.
 */
class PullIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static BalancerCluster cluster;
    private static BalancerNode leader;

    @BeforeAll
    static void start() throws Exception {
        cluster = new BalancerCluster(PG, List.of("eu", "us", "ap")).start();
        leader = cluster.startBalancer(b -> b.interval = Duration.ofHours(1),
                io.lastunit.balancer.transfer.TransferFaults.NONE);
        Awaits.until("balancer leads", leader::isLeader);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static Map<String, Long> quotas(long eu, long us, long ap) {
        Map<String, Long> q = new LinkedHashMap<>();
        q.put("eu", eu);
        q.put("us", us);
        q.put("ap", ap);
        return q;
    }

    private static PullRequest pull(String item, String region, long qty) {
        return PullRequest.newBuilder().setTenantId("acme").setItemId(item).setRegion(region).setQuantity(qty).build();
    }

    @Test
    void pull_movesStockIntoADryRegion_fromTheRegionsWithTheMost() throws Exception {
        cluster.createItem("acme", "dry", quotas(500, 0, 500));
        long before = leader.metrics().transfers(TransferReason.PULL);

        PullResponse r = cluster.balancerApi(leader).pull(pull("dry", "us", 3));

        Map<String, ItemLevel> levels = cluster.levels("acme", "dry");
        assertThat(r.getCollapsed()).isFalse();
        assertThat(r.getHomeRegion()).isEqualTo("eu");
        // max(3, min transfer 16, half of the donor's 500 above its even-share target of ~333)
        assertThat(r.getMoved()).isBetween(80L, 84L);
        assertThat(levels.get("us").getAvailable()).isEqualTo(r.getMoved());
        assertThat(levels.get("eu").getAvailable() + levels.get("ap").getAvailable()).isEqualTo(1000 - r.getMoved());
        assertThat(cluster.allotmentSum("acme", "dry")).isEqualTo(1000);
        assertThat(leader.metrics().transfers(TransferReason.PULL)).isEqualTo(before + 1);
        assertThat(cluster.check().ok()).as("%s", cluster.check()).isTrue();
    }

    @Test
    void pull_onAnItemUnderTheCollapseThreshold_collapsesItHome() throws Exception {
        cluster.createItem("acme", "tail", quotas(30, 20, 10)); // 60 <= max(64, 2% of 60)
        long collapsedBefore = leader.metrics().pullsCollapsed();

        PullResponse r = cluster.balancerApi(leader).pull(pull("tail", "us", 1));

        assertThat(r.getCollapsed()).isTrue();
        assertThat(r.getHomeRegion()).isEqualTo("eu");
        assertThat(r.getMoved()).isZero();
        Map<String, ItemLevel> levels = cluster.levels("acme", "tail");
        for (String region : List.of("us", "ap")) {
            assertThat(levels.get(region).getCollapsed()).as(region).isTrue();
            assertThat(levels.get(region).getAvailable()).as(region).isZero();
        }
        assertThat(levels.get("eu").getAvailable()).isEqualTo(60);
        assertThat(cluster.allotmentSum("acme", "tail")).isEqualTo(60);
        assertThat(leader.metrics().pullsCollapsed()).isEqualTo(collapsedBefore + 1);
        assertThat(cluster.pending()).isEmpty();

        // A second pull finds it collapsed and moves nothing more.
        PullResponse again = cluster.balancerApi(leader).pull(pull("tail", "ap", 1));
        assertThat(again.getCollapsed()).isTrue();
        assertThat(cluster.levels("acme", "tail").get("eu").getAvailable()).isEqualTo(60);
        assertThat(cluster.check().ok()).isTrue();
    }

    @Test
    void concurrentPulls_forOneItem_waitForEachOther_andMoveOnce() throws Exception {
        cluster.createItem("acme", "rush", quotas(400, 0, 400));
        long before = leader.metrics().transfers(TransferReason.PULL);
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<PullResponse>> answers = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                answers.add(pool.submit(() -> cluster.balancerApi(leader).pull(pull("rush", "us", 2))));
            }
            long us;
            List<Long> moved = new ArrayList<>();
            for (Future<PullResponse> f : answers) {
                moved.add(f.get().getMoved());
            }
            // The first pull filled the region; the others waited, re-read it and found enough:
            // each answers what us holds, never 0 (a router would read 0 as sold out everywhere).
            assertThat(leader.metrics().transfers(TransferReason.PULL)).isEqualTo(before + 1);
            us = cluster.levels("acme", "rush").get("us").getAvailable();
            assertThat(us).isBetween(16L, 400L);
            assertThat(moved).containsOnly(us);
            assertThat(cluster.allotmentSum("acme", "rush")).isEqualTo(800);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aStormOfPulls_forASoldOutItem_isAnsweredByAFewRuns_withOneAnswer() throws Exception {
        // The end of a regional sale: the item collapsed home and is sold out, and every Reserve
        // the dry regions refuse brings a pull. Pulls of one item and region waiting together are
        // answered by one run of the mover (PullGroups), not one run each under the item's lock.
        cluster.createItem("acme", "gone", quotas(30, 20, 10)); // under the threshold: collapses home
        assertThat(cluster.balancerApi(leader).pull(pull("gone", "us", 1)).getCollapsed()).isTrue();
        for (int i = 0; i < 60; i++) {
            assertThat(cluster.inventory("eu").reserve(io.lastunit.api.inventory.v1.ReserveRequest.newBuilder()
                    .setTenantId("acme").setItemId("gone").setRegion("eu").setQuantity(1)
                    .setIdempotencyKey("gone-" + i).setBuyerId("b-" + i).build()).getOutcome())
                    .isEqualTo(io.lastunit.api.inventory.v1.ReserveOutcome.RESERVED);
        }
        int callers = 400;
        long runsBefore = leader.metrics().pulls();
        long joinedBefore = leader.metrics().pullsJoined();
        ExecutorService pool = Executors.newFixedThreadPool(64);
        try {
            List<Future<PullResponse>> answers = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                String region = i % 2 == 0 ? "us" : "ap";
                answers.add(pool.submit(() -> cluster.balancerApi(leader).pull(pull("gone", region, 1))));
            }
            for (Future<PullResponse> f : answers) {
                PullResponse r = f.get();
                assertThat(r.getCollapsed()).isTrue();
                assertThat(r.getHomeRegion()).isEqualTo("eu");
                assertThat(r.getMoved()).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
        long runs = leader.metrics().pulls() - runsBefore;
        long joined = leader.metrics().pullsJoined() - joinedBefore;
        System.out.printf("PullIT storm: callers=%d runs=%d joined=%d%n", callers, runs, joined);
        assertThat(runs + joined).isEqualTo(callers);
        assertThat(runs).as("runs of the mover for %d pulls", callers).isLessThanOrEqualTo(callers / 4);
        assertThat(cluster.allotmentSum("acme", "gone")).isEqualTo(60);
        assertThat(cluster.check().ok()).isTrue();
    }

    @Test
    void pull_forATenantAMoveNames_isRefusedRetryably_andMovesNothing() throws Exception {
        String tenant = "moving-co";
        cluster.createItem(tenant, "boot", quotas(100, 100, 100));
        // A move copying the tenant: still ACTIVE, but its placement names the move.
        new TopologyStore(cluster.admin(), TopologyStore.ROOT_DEFAULT, InstantSource.system())
                .setTenantState(tenant, TenantState.ACTIVE, "move-1", -1);
        // Until the leader's cache has the placement, a pull for 1 unit into us (which holds 100)
        // is answered from its level without a transfer; from then on it is refused.
        PullRequest small = PullRequest.newBuilder().setTenantId(tenant).setItemId("boot").setRegion("us")
                .setQuantity(1).build();
        Awaits.until("the leader refuses pulls of the moving tenant", () -> {
            try {
                cluster.balancerApi(leader).pull(small);
                return false;
            } catch (StatusRuntimeException e) {
                return "TENANT_MOVING".equals(GrpcErrors.errorInfo(e).map(i -> i.getReason()).orElse(""));
            }
        });
        long transfers = leader.metrics().transfers(TransferReason.PULL);

        StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class, () -> cluster
                .balancerApi(leader).pull(small.toBuilder().setQuantity(150).build()));

        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(GrpcErrors.errorInfo(refused).orElseThrow().getReason()).isEqualTo("TENANT_MOVING");
        assertThat(GrpcErrors.retryAfterMs(refused)).isPositive();
        assertThat(leader.metrics().transfers(TransferReason.PULL)).isEqualTo(transfers);
        Map<String, ItemLevel> levels = cluster.levels(tenant, "boot");
        for (String region : List.of("eu", "us", "ap")) {
            assertThat(levels.get(region).getAvailable()).as(region).isEqualTo(100);
        }
    }

    @Test
    void pull_refusesBadRequests_namingTheField() {
        cluster.createItem("acme", "valid", quotas(100, 100, 100));
        assertInvalid(pull("valid", "us", 1).toBuilder().setTenantId("").build(), "tenant_id");
        assertInvalid(pull("valid", "us", 1).toBuilder().setItemId("x".repeat(129)).build(), "item_id");
        assertInvalid(pull("valid", "", 1), "region");
        assertInvalid(pull("valid", "us", 0), "quantity");
        assertInvalid(pull("valid", "mars", 1), "region");

        StatusRuntimeException missing = catchThrowableOfType(StatusRuntimeException.class,
                () -> cluster.balancerApi(leader).pull(pull("nope", "us", 1)));
        assertThat(missing.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
        assertThat(GrpcErrors.errorInfo(missing).orElseThrow().getReason()).isEqualTo("ITEM_NOT_FOUND");
    }

    private static void assertInvalid(PullRequest r, String field) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> cluster.balancerApi(leader).pull(r));
        assertThat(e).as("pull %s", r).isNotNull();
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getMetadataMap()).containsEntry("field", field);
    }
}
