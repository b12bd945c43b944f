package io.lastunit.common.topology;

import static io.lastunit.common.topology.TopologyTest.shard;
import static io.lastunit.common.topology.ZooKeeperFixture.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.KillSession;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TopologyCacheIT {
    private static final Duration STALE_MAX = Duration.ofSeconds(10);
    private static final Duration SESSION = Duration.ofSeconds(10);
    private static TestingServer server;
    private static CuratorFramework cacheClient;
    private static CuratorFramework adminClient;

    private final FakeClock clock = new FakeClock();
    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private String root;
    private TopologyStore store;
    private TopologyCache cache;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        server = ZooKeeperFixture.startServer();
        cacheClient = ZooKeeperFixture.client(server, SESSION);
        adminClient = ZooKeeperFixture.client(server, SESSION);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        adminClient.close();
        cacheClient.close();
        server.close();
    }

    @BeforeEach
    void newRoot() {
        root = ZooKeeperFixture.newRoot();
        store = new TopologyStore(adminClient, root, clock);
        cache = new TopologyCache(cacheClient, root, STALE_MAX, clock);
    }

    @AfterEach
    void closeAll() throws Exception {
        cache.close();
        Collections.reverse(closeLast);
        for (AutoCloseable c : closeLast) {
            c.close();
        }
    }

    private static ConditionFactory eventually() {
        return await().atMost(scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(20));
    }

    private void start(TopologyCache c) {
        c.start(scaled(Duration.ofSeconds(10)));
    }

    @Test
    void start_onAnEmptyRoot_servesAnEmptyTopology() {
        start(cache);
        Topology t = cache.current();
        assertThat(t.cells()).isEmpty();
        assertThat(t.cellOf("acme")).isEqualTo(Topology.SHARED_CELL);
        assertThat(cache.changes()).isEqualTo(1);
        assertThat(cache.connectionState()).isEqualTo(ConnectionState.CONNECTED);
    }

    @Test
    void start_loadsWhatIsAlreadyStored() {
        store.createCell("shared", List.of("eu"), List.of(shard("s1", "shared", "eu"), shard("s2", "shared", "eu")));
        store.assignTenant("acme", "shared", -1);

        start(cache);

        Topology t = cache.current();
        assertThat(t.shards("shared", "eu")).extracting(ShardInfo::getShardId).containsExactly("s1", "s2");
        assertThat(t.epochOf("acme")).isEqualTo(0);
    }

    @Test
    void writesThroughAnotherClient_appearInTheCache() {
        List<Topology> seen = Collections.synchronizedList(new ArrayList<>());
        cache.addListener(seen::add);
        start(cache);
        long changesAtStart = cache.changes();

        store.createCell("c1", List.of("eu", "us"),
                List.of(shard("c1-eu-a", "c1", "eu"), shard("c1-eu-b", "c1", "eu"), shard("c1-us-a", "c1", "us")));
        store.assignTenant("acme", "c1", -1);
        eventually().until(() -> cache.current().epochOf("acme") == 0);

        Topology t = cache.current();
        assertThat(t.cellOf("acme")).isEqualTo("c1");
        assertThat(t.shards("c1", "eu")).extracting(ShardInfo::getShardId).containsExactly("c1-eu-a", "c1-eu-b");
        assertThat(t.shardFor("acme", "sku-1", "us")).map(ShardInfo::getShardId).contains("c1-us-a");

        store.setTenantState("acme", TenantState.MOVING, "move-1", 0);
        eventually().until(() -> cache.current().epochOf("acme") == 1);
        assertThat(cache.current().stateOf("acme")).isEqualTo(TenantState.MOVING);

        assertThat(cache.changes()).isGreaterThan(changesAtStart);
        assertThat(seen).isNotEmpty().last().isSameAs(cache.current());
    }

    @Test
    void cell_isNeverSeenWithPartOfItsShards() {
        List<Integer> shardCounts = Collections.synchronizedList(new ArrayList<>());
        cache.addListener(t -> shardCounts.add(t.shards("c1").size()));
        start(cache);

        List<ShardInfo> shards = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            shards.add(shard("c1-s" + i, "c1", "eu"));
        }
        store.createCell("c1", List.of("eu"), shards);
        eventually().until(() -> cache.current().shards("c1").size() == 20);

        assertThat(shardCounts).containsOnly(0, 20);
    }

    @Test
    void shardRegistration_appearsAsLive_andDisappearsWhenClosed() throws Exception {
        start(cache);
        ShardRegistration reg = new ShardRegistration(adminClient, root,
                LiveShard.newBuilder().setShardId("s1").setAddress("10.0.0.1:9000").setStartedAtMs(1).build());
        reg.start();
        assertThat(reg.awaitRegistered(scaled(Duration.ofSeconds(5)))).isTrue();

        eventually().until(() -> cache.current().isLive("s1"));
        assertThat(cache.current().liveShard("s1").orElseThrow().getAddress()).isEqualTo("10.0.0.1:9000");
        assertThat(adminClient.checkExists().forPath(reg.path()).getEphemeralOwner()).isNotZero();

        reg.close();
        reg.close();
        eventually().until(() -> !cache.current().isLive("s1"));
        assertThatThrownBy(reg::start).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shardRegistration_disappearsWhenItsClientCloses() throws Exception {
        start(cache);
        CuratorFramework nodeClient = ZooKeeperFixture.client(server, Duration.ofSeconds(2));
        ShardRegistration reg = new ShardRegistration(nodeClient, root,
                LiveShard.newBuilder().setShardId("s1").setAddress("h:1").build());
        reg.start();
        eventually().until(() -> cache.current().isLive("s1"));

        nodeClient.close();

        eventually().until(() -> !cache.current().isLive("s1"));
        reg.close();
    }

    @Test
    void shardRegistration_reappears_underTheNewSession_afterTheSessionIsKilled() throws Exception {
        start(cache);
        CuratorFramework nodeClient = ZooKeeperFixture.client(server, Duration.ofSeconds(2));
        closeLast.add(nodeClient);
        ShardRegistration reg = new ShardRegistration(nodeClient, root,
                LiveShard.newBuilder().setShardId("s1").setAddress("h:1").build());
        closeLast.add(reg);
        reg.start();
        assertThat(reg.awaitRegistered(scaled(Duration.ofSeconds(5)))).isTrue();
        eventually().until(() -> cache.current().isLive("s1"));
        long oldSession = nodeClient.getZookeeperClient().getZooKeeper().getSessionId();
        List<Boolean> liveness = Collections.synchronizedList(new ArrayList<>());
        cache.addListener(t -> liveness.add(t.isLive("s1")));

        KillSession.kill(nodeClient.getZookeeperClient().getZooKeeper());

        // The old session's znode lingers until the server expires that session; then it is
        // deleted and the recipe creates it again under the new session.
        eventually().until(() -> {
            Stat stat = adminClient.checkExists().forPath(reg.path());
            long session = nodeClient.getZookeeperClient().getZooKeeper().getSessionId();
            return stat != null && session != oldSession && stat.getEphemeralOwner() == session;
        });
        eventually().until(() -> cache.current().isLive("s1"));
        assertThat(liveness).contains(false);
    }

    @Test
    void suspended_servesTheLastSnapshotUntilStaleMax_thenRefuses_andServesAgainAfterReconnect() throws Exception {
        try (TestingServer own = ZooKeeperFixture.startServer();
                CuratorFramework client = ZooKeeperFixture.client(own, SESSION);
                CuratorFramework admin = ZooKeeperFixture.client(own, SESSION);
                TopologyCache c = new TopologyCache(client, root, STALE_MAX, clock)) {
            TopologyStore ownStore = new TopologyStore(admin, root, clock);
            ownStore.createCell("c1", List.of("eu"), List.of(shard("s1", "c1", "eu")));
            start(c);
            Topology before = c.current();

            own.stop();
            eventually().until(() -> c.connectionState() == ConnectionState.SUSPENDED);
            assertThat(c.current()).isSameAs(before);
            clock.advance(STALE_MAX);
            assertThat(c.current()).isSameAs(before);

            clock.advance(Duration.ofMillis(1));
            Failure refused = catchThrowableOfType(Failure.class, c::current);
            assertThat(refused).as("current() past staleMax").isNotNull();
            assertThat(refused.reason()).isEqualTo(Reason.TOPOLOGY_UNAVAILABLE);
            assertThat(refused.retryAfter()).isPositive();
            assertThat(refused.getMessage()).contains(root, "SUSPENDED");

            own.restart();
            eventually().until(() -> c.connectionState() == ConnectionState.RECONNECTED);
            assertThatCode(c::current).doesNotThrowAnyException();
            ownStore.assignTenant("acme", "c1", -1);
            eventually().until(() -> c.current().cellOf("acme").equals("c1"));
        }
    }

    @Test
    void aValueWrittenByHandThatDoesNotParse_keepsTheLastGoodSnapshot() throws Exception {
        store.createCell("c1", List.of("eu"), List.of(shard("s1", "c1", "eu")));
        start(cache);
        Topology good = cache.current();

        adminClient.create().creatingParentsIfNeeded().forPath(root + "/tenants/bad", "junk".getBytes(StandardCharsets.UTF_8));
        eventually().until(() -> cache.rejected() == 1);
        assertThat(cache.current()).isSameAs(good);

        adminClient.delete().forPath(root + "/tenants/bad");
        eventually().until(() -> cache.current() != good);
        assertThat(cache.current().cell("c1")).isPresent();
    }

    @Test
    void start_refusesAStoredTopologyThatDoesNotParse() throws Exception {
        adminClient.create().creatingParentsIfNeeded().forPath(root + "/cells/c1", "{\"name\":\"other\"}".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> start(cache))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(root + "/cells/c1: name=other does not match its path");
        assertThatThrownBy(cache::current).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void start_givesUpAfterItsBound_whenZooKeeperIsUnreachable() throws Exception {
        TestingServer down = ZooKeeperFixture.startServer();
        CuratorFramework client = Curators.newClient(down.getConnectString(), Duration.ofSeconds(2));
        down.close();
        client.start();
        try (TopologyCache c = new TopologyCache(client, root, STALE_MAX, clock)) {
            Failure f = catchThrowableOfType(Failure.class, () -> c.start(Duration.ofMillis(300)));
            assertThat(f).isNotNull();
            assertThat(f.reason()).isEqualTo(Reason.TOPOLOGY_UNAVAILABLE);
            assertThat(f.getMessage()).contains("initial load did not finish within 300 ms");
            assertThatThrownBy(c::current).isInstanceOf(IllegalStateException.class);
        } finally {
            client.close();
        }
    }

    @Test
    void lifecycle_startOnce_closeIdempotent() {
        assertThatThrownBy(cache::current).isInstanceOf(IllegalStateException.class).hasMessageContaining("LATENT");
        start(cache);
        assertThatThrownBy(() -> start(cache)).isInstanceOf(IllegalStateException.class);
        cache.close();
        cache.close();
        assertThatThrownBy(cache::current).isInstanceOf(IllegalStateException.class).hasMessageContaining("CLOSED");
    }

    @Test
    void constructor_refusesAnUnboundedStaleness() {
        assertThatThrownBy(() -> new TopologyCache(cacheClient, root, Duration.ofHours(1), clock))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("staleMax");
        assertThatThrownBy(() -> new TopologyCache(cacheClient, "/", STALE_MAX, clock))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
