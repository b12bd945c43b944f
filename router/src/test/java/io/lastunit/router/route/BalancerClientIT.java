package io.lastunit.router.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Deadline;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.balancer.v1.BalancerServiceGrpc;
import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.topology.Curators;
import io.lastunit.testkit.TestTimeouts;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * BalancerClient against a real ZooKeeper (curator-test {@link TestingServer}) holding the
 * endpoint znode, and fake BalancerService leaders on real sockets on 127.0.0.1.
 */
class BalancerClientIT {
    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static final PullRequest PULL = PullRequest.newBuilder().setTenantId("acme").setItemId("sku-1")
            .setRegion("us").setQuantity(2).build();

    private static TestingServer zookeeper;
    private static CuratorFramework client;

    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private String namespace;
    private String endpointPath;
    private BalancerClient balancer;

    /** A balancer leader that answers every Pull with {@code answer} (a PullResponse, a Failure, or null: never). */
    static final class FakeLeader extends BalancerServiceGrpc.BalancerServiceImplBase {
        final List<PullRequest> pulls = Collections.synchronizedList(new ArrayList<>());
        final Function<PullRequest, Object> answer;
        Server server;

        FakeLeader(Function<PullRequest, Object> answer) {
            this.answer = answer;
        }

        FakeLeader start() throws IOException {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                    .addService(this).build().start();
            return this;
        }

        String address() {
            return "127.0.0.1:" + server.getPort();
        }

        @Override
        public void pull(PullRequest r, StreamObserver<PullResponse> out) {
            pulls.add(r);
            Object a = answer.apply(r);
            if (a instanceof Failure f) {
                out.onError(GrpcErrors.toStatus(f));
            } else if (a instanceof PullResponse p) {
                out.onNext(p);
                out.onCompleted();
            }
            // null: never answers; the caller's deadline ends the call.
        }
    }

    @BeforeAll
    static void startZooKeeper() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        zookeeper = new TestingServer(spec, true);
        client = connected();
    }

    private static CuratorFramework connected() throws InterruptedException {
        CuratorFramework c = Curators.newClient(zookeeper.getConnectString(), Duration.ofSeconds(10));
        c.start();
        if (!c.blockUntilConnected((int) scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
            c.close();
            throw new IllegalStateException("no connection to " + zookeeper.getConnectString());
        }
        return c;
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        client.close();
        zookeeper.close();
    }

    @BeforeEach
    void newNamespace() {
        namespace = "/it" + ROOTS.incrementAndGet();
        endpointPath = namespace + "/balancer/endpoint";
        balancer = new BalancerClient(client, namespace, (File) null);
    }

    @AfterEach
    void closeAll() throws Exception {
        balancer.close();
        Collections.reverse(closeLast);
        for (AutoCloseable c : closeLast) {
            c.close();
        }
    }

    private static Duration scaled(Duration d) {
        return TestTimeouts.scaled(d);
    }

    private static ConditionFactory eventually() {
        return await().atMost(scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(10));
    }

    private FakeLeader leader(Function<PullRequest, Object> answer) throws IOException {
        FakeLeader l = new FakeLeader(answer).start();
        closeLast.add(() -> l.server.shutdownNow());
        return l;
    }

    private void publish(String address) throws Exception {
        byte[] data = address.getBytes(StandardCharsets.UTF_8);
        if (client.checkExists().forPath(endpointPath) == null) {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(endpointPath, data);
        } else {
            client.setData().forPath(endpointPath, data);
        }
    }

    private void awaitEndpoint(String address) {
        eventually().until(() -> balancer.endpoint(), Optional.ofNullable(address)::equals);
    }

    private PullResponse pull() {
        return balancer.pull(PULL, Deadline.after(scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                .join();
    }

    private Failure pullFails(Deadline deadline) {
        CompletableFuture<PullResponse> f = balancer.pull(PULL, deadline);
        Throwable e = f.handle((r, err) -> err).join();
        Throwable cause = e instanceof CompletionException ? e.getCause() : e;
        assertThat(cause).isInstanceOf(Failure.class);
        Failure failure = (Failure) cause;
        assertThat(failure.reason()).isEqualTo(Reason.BALANCER_UNAVAILABLE);
        assertThat(GrpcErrors.toStatus(failure).getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNAVAILABLE);
        return failure;
    }

    private Failure pullFails() {
        return pullFails(Deadline.after(scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS));
    }

    @Test
    void pull_withNoEndpointPublished_failsBalancerUnavailable_withRetryHint() {
        balancer.start();

        Failure f = pullFails();

        assertThat(balancer.endpoint()).isEmpty();
        assertThat(f.retryAfter()).isEqualTo(BalancerClient.RETRY_AFTER);
        assertThat(f.getMessage()).isEqualTo("no balancer leader is published at " + endpointPath
                + " for Pull(acme/sku-1 into us, quantity=2)");
    }

    @Test
    void pull_reachesThePublishedLeader_andAnswersItsResponse() throws Exception {
        FakeLeader a = leader(r -> PullResponse.newBuilder().setMoved(3).build());
        balancer.start();
        publish(a.address());
        awaitEndpoint(a.address());

        assertThat(pull()).isEqualTo(PullResponse.newBuilder().setMoved(3).build());
        assertThat(a.pulls).containsExactly(PULL);
    }

    @Test
    void endpointPublishedBeforeStart_isReadAtStart() throws Exception {
        FakeLeader a = leader(r -> PullResponse.newBuilder().setCollapsed(true).setHomeRegion("eu").build());
        publish(a.address());

        balancer.start();
        awaitEndpoint(a.address());

        assertThat(pull()).isEqualTo(PullResponse.newBuilder().setCollapsed(true).setHomeRegion("eu").build());
    }

    @Test
    void endpointChange_isFollowed_pullsGoToTheNewLeaderOnly() throws Exception {
        FakeLeader a = leader(r -> PullResponse.newBuilder().setMoved(1).build());
        FakeLeader b = leader(r -> PullResponse.newBuilder().setMoved(2).build());
        balancer.start();
        publish(a.address());
        awaitEndpoint(a.address());
        assertThat(pull().getMoved()).isEqualTo(1);

        publish(b.address());
        awaitEndpoint(b.address());

        assertThat(pull().getMoved()).isEqualTo(2);
        assertThat(pull().getMoved()).isEqualTo(2);
        assertThat(a.pulls).hasSize(1);
        assertThat(b.pulls).hasSize(2);
    }

    @Test
    void endpointRemoved_pullFailsBalancerUnavailable() throws Exception {
        FakeLeader a = leader(r -> PullResponse.newBuilder().setMoved(1).build());
        balancer.start();
        publish(a.address());
        awaitEndpoint(a.address());

        client.delete().forPath(endpointPath);
        awaitEndpoint(null);

        assertThat(pullFails().getMessage()).startsWith("no balancer leader is published at " + endpointPath);
        assertThat(a.pulls).isEmpty();
    }

    @Test
    void leadersSessionEnds_itsEphemeralEndpointGoes_andPullsFail() throws Exception {
        FakeLeader a = leader(r -> PullResponse.newBuilder().setMoved(1).build());
        CuratorFramework leaderSession = connected();
        leaderSession.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(endpointPath, a.address().getBytes(StandardCharsets.UTF_8));
        balancer.start();
        awaitEndpoint(a.address());

        leaderSession.close();
        awaitEndpoint(null);

        pullFails();
    }

    @Test
    void standbyAnswersNotLeader_isBalancerUnavailable_withTheStandbysRetryHint() throws Exception {
        FakeLeader standby = leader(r -> Failure.retryable(Reason.NOT_LEADER, "standby", Duration.ofMillis(250)));
        balancer.start();
        publish(standby.address());
        awaitEndpoint(standby.address());

        Failure f = pullFails();

        assertThat(f.retryAfter()).isEqualTo(Duration.ofMillis(250));
        assertThat(f.getMessage()).isEqualTo("balancer leader at " + standby.address()
                + " did not answer Pull(acme/sku-1 into us, quantity=2): UNAVAILABLE: standby (NOT_LEADER)");
        assertThat(standby.pulls).containsExactly(PULL);
    }

    @Test
    void leaderSlowerThanTheDeadline_isBalancerUnavailable_atTheDeadline() throws Exception {
        // Answers a one-unit pull (to connect the channel first), never the PULL of two units.
        FakeLeader silent = leader(r -> r.getQuantity() == 1 ? PullResponse.getDefaultInstance() : null);
        balancer.start();
        publish(silent.address());
        awaitEndpoint(silent.address());
        balancer.pull(PULL.toBuilder().setQuantity(1).build(),
                Deadline.after(scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)).join();

        // The deadline must outlast the call's way to the leader (it records the pull on arrival,
        // checked below), however busy the host: a second, scaled, not a fifth of one.
        long deadlineMs = scaled(Duration.ofSeconds(1)).toMillis();
        long start = System.nanoTime();
        Failure f = pullFails(Deadline.after(deadlineMs, TimeUnit.MILLISECONDS));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(f.retryAfter()).isEqualTo(BalancerClient.RETRY_AFTER);
        assertThat(f.getMessage()).startsWith("balancer leader at " + silent.address()
                + " did not answer Pull(acme/sku-1 into us, quantity=2): DEADLINE_EXCEEDED");
        assertThat(tookMs).isGreaterThanOrEqualTo(deadlineMs - 10);
        assertThat(silent.pulls).hasSize(2).endsWith(PULL);
    }

    @Test
    void endpointAtAClosedPort_isBalancerUnavailable() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        balancer.start();
        publish("127.0.0.1:" + closedPort);
        awaitEndpoint("127.0.0.1:" + closedPort);

        Failure f = pullFails();

        assertThat(f.getMessage()).startsWith("balancer leader at 127.0.0.1:" + closedPort
                + " did not answer Pull(acme/sku-1 into us, quantity=2): UNAVAILABLE");
        assertThat(f.retryAfter()).isEqualTo(BalancerClient.RETRY_AFTER);
    }

    @Test
    void malformedEndpoint_isTreatedAsNoLeader() throws Exception {
        FakeLeader a = leader(r -> PullResponse.newBuilder().setMoved(1).build());
        balancer.start();
        publish(a.address());
        awaitEndpoint(a.address());

        publish("not-an-address");
        awaitEndpoint(null);

        pullFails();
        assertThat(a.pulls).isEmpty();
    }

    @Test
    void close_isIdempotent_andPullsAfterItFail() throws Exception {
        FakeLeader a = leader(r -> PullResponse.newBuilder().setMoved(1).build());
        balancer.start();
        publish(a.address());
        awaitEndpoint(a.address());

        balancer.close();
        balancer.close();

        assertThat(balancer.endpoint()).isEmpty();
        pullFails();
        assertThat(a.pulls).isEmpty();
    }
}
