package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.StatusRuntimeException;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.balancer.leader.Leadership;
import io.lastunit.balancer.transfer.TransferFaults;
import io.lastunit.common.GrpcErrors;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Leadership against ZooKeeper faults: a leader whose session expires stops at once and the
 * standby takes over with its own endpoint; while ZooKeeper is unreachable nobody acts as leader.
 */
class LeadershipFaultIT {
    private static final String ENDPOINT = "/lastunit/balancer/endpoint";

    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static BalancerCluster cluster;
    private BalancerNode a;
    private BalancerNode b;

    @BeforeAll
    static void start() throws Exception {
        cluster = new BalancerCluster(PG, List.of("eu", "us")).start();
        Map<String, Long> q = new LinkedHashMap<>();
        q.put("eu", 100L);
        q.put("us", 0L);
        cluster.createItem("acme", "kite", q);
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void closeBalancers() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    @Test
    void leaderWhoseSessionExpires_stopsAtOnce_andTheStandbyTakesOver() throws Exception {
        a = cluster.startBalancer();
        Awaits.until("a leads", a::isLeader);
        b = cluster.startBalancer();
        assertThat(endpoint()).isEqualTo(a.address());

        expireOnServer(a.curator().getZookeeperClient().getZooKeeper());

        Awaits.until("b leads", b::isLeader);
        assertThat(a.isLeader()).isFalse();
        Awaits.until("b's endpoint published", () -> b.address().equals(endpointOrNull()));
        StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                () -> cluster.balancerApi(a).pull(PullRequest.newBuilder().setTenantId("acme").setItemId("kite")
                        .setRegion("us").setQuantity(1).build()));
        assertThat(GrpcErrors.errorInfo(refused).orElseThrow().getReason()).isEqualTo("NOT_LEADER");
        assertThat(cluster.balancerApi(b).pull(PullRequest.newBuilder().setTenantId("acme").setItemId("kite")
                .setRegion("us").setQuantity(1).build()).getMoved()).isPositive();
        assertThat(a.metrics().transfers()).isZero();
    }

    @Test
    void whileZooKeeperIsUnreachable_nobodyLeads_andOneLeadsAgainAfter() throws Exception {
        a = cluster.startBalancer();
        Awaits.until("a leads", a::isLeader);
        b = cluster.startBalancer();

        cluster.stopZooKeeper();
        try {
            // SUSPENDED fences at once: no process may move stock on a leadership it cannot confirm.
            Awaits.until("a fenced", Duration.ofSeconds(10), () -> a.leadershipState() == Leadership.State.STANDBY);
            assertThat(b.isLeader()).isFalse();
        } finally {
            cluster.restartZooKeeper();
        }
        Awaits.until("one leads again", Duration.ofSeconds(30), () -> a.isLeader() || b.isLeader());
        assertThat(a.isLeader() && b.isLeader()).isFalse();
        BalancerNode leader = a.isLeader() ? a : b;
        Awaits.until("its endpoint published", () -> leader.address().equals(endpointOrNull()));
    }

    @Test
    void whileZooKeeperIsGonePastTheStalenessBound_theProcessIsNotServing_untilItIsBack() throws Exception {
        a = cluster.startBalancer(c -> c.topologyStaleMax = Duration.ofSeconds(1), TransferFaults.NONE);
        io.grpc.ManagedChannel ch = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
                .forAddress("127.0.0.1", a.port()).usePlaintext().build();
        try {
            java.util.function.Supplier<io.grpc.health.v1.HealthCheckResponse.ServingStatus> health = () ->
                    io.grpc.health.v1.HealthGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
                            .check(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance()).getStatus();
            assertThat(health.get()).isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
            cluster.stopZooKeeper();
            try {
                Awaits.until("NOT_SERVING", Duration.ofSeconds(20),
                        () -> health.get() == io.grpc.health.v1.HealthCheckResponse.ServingStatus.NOT_SERVING);
            } finally {
                cluster.restartZooKeeper();
            }
            Awaits.until("SERVING again", Duration.ofSeconds(30),
                    () -> health.get() == io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void shutdown_saysNotServingForTheGrace_whileStillLeadingAndTakingCalls_thenHandsTheLeadOver() throws Exception {
        a = cluster.startBalancer(c -> c.shutdownGrace = TestTimeouts.scaled(Duration.ofSeconds(5)),
                TransferFaults.NONE);
        Awaits.until("a leads", a::isLeader);
        b = cluster.startBalancer();
        io.grpc.ManagedChannel ch = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
                .forAddress("127.0.0.1", a.port()).usePlaintext().build();
        BalancerNode stopping = a;
        try {
            java.util.function.Supplier<io.grpc.health.v1.HealthCheckResponse.ServingStatus> health = () ->
                    io.grpc.health.v1.HealthGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS)
                            .check(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance()).getStatus();
            assertThat(health.get()).isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
            CompletableFuture<Void> closing = CompletableFuture.runAsync(stopping::close);
            Awaits.until("NOT_SERVING", Duration.ofSeconds(20),
                    () -> health.get() == io.grpc.health.v1.HealthCheckResponse.ServingStatus.NOT_SERVING);
            assertThat(closing).as("still in its grace").isNotDone();
            assertThat(stopping.isLeader()).as("it leads through the grace").isTrue();
            // A pull is still answered by it (not NOT_LEADER, not UNAVAILABLE). Over the channel
            // opened before: the node's own accessors wait for its close.
            io.lastunit.api.balancer.v1.BalancerServiceGrpc.newBlockingStub(ch)
                    .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                    .pull(PullRequest.newBuilder().setTenantId("acme").setItemId("kite").setRegion("us")
                            .setQuantity(1).build());
            assertThat(closing).as("answered within the grace").isNotDone();
            closing.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            Awaits.until("b leads after the hand-over", Duration.ofSeconds(30), b::isLeader);
            Awaits.until("b's endpoint published", () -> b.address().equals(endpointOrNull()));
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static String endpoint() throws Exception {
        return new String(cluster.admin().getData().forPath(ENDPOINT), StandardCharsets.UTF_8);
    }

    private static String endpointOrNull() {
        try {
            Stat stat = cluster.admin().checkExists().forPath(ENDPOINT);
            return stat == null ? null : endpoint();
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * Expires the session on the server, as a long pause or a partition would: a second handle joins
     * the session and closes it, so the server ends it and deletes its ephemeral znodes at once.
     */
    private static void expireOnServer(ZooKeeper zk) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(cluster.zookeeper(), 15_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            assertThat(connected.await(BalancerCluster.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("second handle joined the session").isTrue();
        } finally {
            twin.close();
        }
    }
}
