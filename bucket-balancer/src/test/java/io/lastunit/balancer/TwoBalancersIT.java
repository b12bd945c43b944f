package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.balancer.v1.BalancerServiceGrpc;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.shard.v1.CompleteTransferRequest;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.api.shard.v1.TransferState;
import io.lastunit.balancer.transfer.TransferReason;
import io.lastunit.common.GrpcErrors;
import io.lastunit.testkit.PostgresFixture;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two balancers on one topology: one leads and moves stock, the other stands by and moves
 * nothing (counted per instance through their metrics). And the transfer protocol's own
 * idempotence, straight against the shards: step 2 applied twice credits once.
 */
class TwoBalancersIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static BalancerCluster cluster;
    private static BalancerNode leader;
    private static BalancerNode standby;

    @BeforeAll
    static void start() throws Exception {
        cluster = new BalancerCluster(PG, List.of("eu", "us", "ap")).start();
        leader = cluster.startBalancer(b -> b.demandWindow = java.time.Duration.ofSeconds(3),
                io.lastunit.balancer.transfer.TransferFaults.NONE);
        Awaits.until("first balancer leads", leader::isLeader);
        standby = cluster.startBalancer();
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

    @Test
    void onlyTheLeaderMovesStock_theStandbyAnswersNotLeader() throws Exception {
        cluster.createItem("acme", "hoodie", quotas(400, 20, 400));

        StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                () -> cluster.balancerApi(standby).pull(PullRequest.newBuilder().setTenantId("acme")
                        .setItemId("hoodie").setRegion("us").setQuantity(1).build()));
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(GrpcErrors.errorInfo(refused).orElseThrow().getReason()).isEqualTo("NOT_LEADER");
        assertThat(health(leader)).isEqualTo(ServingStatus.SERVING);
        assertThat(health(standby)).isEqualTo(ServingStatus.NOT_SERVING);

        // Buyers reserve in us only: demand there, none elsewhere. The leader follows it.
        int sold = 0;
        long deadline = System.nanoTime() + BalancerCluster.scaled(java.time.Duration.ofSeconds(20)).toNanos();
        while (cluster.levels("acme", "hoodie").get("us").getAvailable() < 200) {
            assertThat(System.nanoTime() - deadline).as("us never got stock").isNegative();
            var r = cluster.inventory("us").reserve(ReserveRequest.newBuilder().setTenantId("acme")
                    .setItemId("hoodie").setRegion("us").setQuantity(1).setIdempotencyKey("k" + sold)
                    .setBuyerId("b" + sold).build());
            if (r.getOutcome() == ReserveOutcome.RESERVED) {
                sold++;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }

        assertThat(leader.metrics().transfers(TransferReason.REBALANCE)).isPositive();
        assertThat(leader.metrics().units(TransferReason.REBALANCE)).isGreaterThanOrEqualTo(180);
        assertThat(standby.metrics().transfers()).isZero();
        assertThat(standby.metrics().transfersIncomplete()).isZero();
        assertThat(standby.metrics().pulls()).isZero();
        // The leader may still be moving stock: a transfer between its two steps has taken units from
        // one shard and not yet given them to the other. Read the sum when none is in flight, and
        // none started or finished while the shards were read.
        long[] sum = new long[1];
        Awaits.until("a sum read with no transfer in flight", () -> {
            long done = leader.metrics().transfers();
            if (!cluster.pending().isEmpty()) {
                return false;
            }
            sum[0] = cluster.allotmentSum("acme", "hoodie");
            return cluster.pending().isEmpty() && leader.metrics().transfers() == done;
        });
        assertThat(sum[0]).isEqualTo(820);
        assertThat(cluster.check().ok()).isTrue();
    }

    @Test
    void theSameTransferAppliedTwice_creditsOnce() throws Exception {
        cluster.createItem("acme", "socks", quotas(100, 100, 100));
        String id = "dup-" + System.nanoTime();
        String eu = cluster.shard("eu").getShardId();
        String us = cluster.shard("us").getShardId();

        Transfer out = cluster.shardApi("eu").transferOut(TransferOutRequest.newBuilder().setTransferId(id)
                .setTenantId("acme").setItemId("socks").setPeerShardId(us).setMaxQuantity(10).build());
        assertThat(out.getQuantity()).isEqualTo(10);
        TransferInRequest in = TransferInRequest.newBuilder().setTransferId(id).setTenantId("acme").setItemId("socks")
                .setPeerShardId(eu).setQuantity(10).build();
        Transfer first = cluster.shardApi("us").transferIn(in);
        Transfer second = cluster.shardApi("us").transferIn(in);

        assertThat(second).isEqualTo(first);
        assertThat(cluster.levels("acme", "socks").get("us").getAllotment()).isEqualTo(110);
        assertThat(cluster.levels("acme", "socks").get("us").getTransferredIn()).isEqualTo(10);
        for (int i = 0; i < 2; i++) {
            assertThat(cluster.shardApi("eu").completeTransfer(CompleteTransferRequest.newBuilder()
                    .setTransferId(id).build()).getState()).isEqualTo(TransferState.DONE);
        }
        // A repeated step 1 returns the record and takes nothing more.
        assertThat(cluster.shardApi("eu").transferOut(TransferOutRequest.newBuilder().setTransferId(id)
                .setTenantId("acme").setItemId("socks").setPeerShardId(us).setMaxQuantity(10).build()).getQuantity())
                .isEqualTo(10);
        assertThat(cluster.levels("acme", "socks").get("eu").getAllotment()).isEqualTo(90);
        assertThat(cluster.allotmentSum("acme", "socks")).isEqualTo(300);
        assertThat(cluster.check().ok()).isTrue();
    }

    @Test
    void leaderAndStandbyServeReflection_listingTheirServices() throws Exception {
        for (BalancerNode node : List.of(leader, standby)) {
            assertThat(listServices(node)).as("services of %s", node.address()).containsExactlyInAnyOrder(
                    BalancerServiceGrpc.SERVICE_NAME, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                    "grpc.reflection.v1alpha.ServerReflection");
        }
    }

    /** The services a v1 reflection client (what grpcurl speaks) finds on the node. */
    private static List<String> listServices(BalancerNode node) throws Exception {
        CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
        StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc
                .newStub(cluster.channel("127.0.0.1:" + node.port())).withDeadlineAfter(30, TimeUnit.SECONDS)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(ServerReflectionResponse r) {
                        answer.complete(r);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new AssertionError("the stream ended without an answer"));
                    }
                });
        requests.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
        requests.onCompleted();
        return answer.get(io.lastunit.testkit.TestTimeouts.scaled(java.time.Duration.ofSeconds(10)).toMillis(),
                        TimeUnit.MILLISECONDS)
                .getListServicesResponse().getServiceList().stream().map(ServiceResponse::getName).toList();
    }

    private static ServingStatus health(BalancerNode node) {
        return HealthGrpc.newBlockingStub(cluster.channel("127.0.0.1:" + node.port()))
                .withDeadlineAfter(BalancerCluster.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                .check(HealthCheckRequest.newBuilder().setService(BalancerServiceGrpc.SERVICE_NAME).build())
                .getStatus();
    }
}
