package io.lastunit.common.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.ShardInfo;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ZooKeeper ACLs on a real server: what a client with lastunit's credentials creates (the topology
 * store's cells and tenants, and every parent) is lastunit's alone; a client without them, or with
 * a wrong password, gets NoAuth on writes and reads, and the tenant's cell stays as it was.
 */
class ZooKeeperAclIT {
    static final ZooKeeperCredentials CREDENTIALS = new ZooKeeperCredentials("lastunit", "s3cret-passw0rd");
    static TestingServer server;

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperFixture.startServer();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Test
    void aClientWithoutTheCredentials_cannotChangeATenantsCell_norReadIt() throws Exception {
        String root = ZooKeeperFixture.newRoot() + "/lastunit";
        try (CuratorFramework owner = client(CREDENTIALS); CuratorFramework stranger = client(null);
             CuratorFramework guesser = client(new ZooKeeperCredentials("lastunit", "wrong-password"))) {
            TopologyStore store = new TopologyStore(owner, root, InstantSource.system());
            store.createCell("c1", List.of("eu"), List.of(shard("c1-eu-1", "c1")));
            store.createCell("c2", List.of("eu"), List.of(shard("c2-eu-1", "c2")));
            store.assignTenant("acme", "c1", -1);
            String tenant = root + "/tenants/acme";
            byte[] before = owner.getData().forPath(tenant);

            for (CuratorFramework outsider : List.of(stranger, guesser)) {
                assertThatThrownBy(() -> outsider.setData().forPath(tenant, new byte[] {1}))
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> outsider.delete().forPath(tenant))
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> outsider.getData().forPath(tenant))
                        .isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> outsider.create().forPath(root + "/tenants/evil", new byte[0]))
                        .isInstanceOf(KeeperException.NoAuthException.class);
                TopologyStore theirs = new TopologyStore(outsider, root, InstantSource.system());
                assertThatThrownBy(() -> theirs.assignTenant("acme", "c2", 0)).hasRootCauseInstanceOf(
                        KeeperException.NoAuthException.class);
            }

            assertThat(owner.getData().forPath(tenant)).isEqualTo(before);
            assertThat(store.placement("acme").orElseThrow().value().getCell()).isEqualTo("c1");
            assertThat(owner.checkExists().forPath(root + "/tenants/evil")).isNull();
        }
    }

    @Test
    void everyZnodeCreated_parentsIncluded_carriesOnlyLastunitsAcl() throws Exception {
        String top = ZooKeeperFixture.newRoot();
        String root = top + "/lastunit";
        try (CuratorFramework owner = client(CREDENTIALS)) {
            new TopologyStore(owner, root, InstantSource.system())
                    .createCell("c1", List.of("eu"), List.of(shard("c1-eu-1", "c1")));
            List<ACL> expected = List.of(new ACL(ZooDefs.Perms.ALL,
                    new org.apache.zookeeper.data.Id("digest", CREDENTIALS.digestId())));
            for (String path : List.of(top, root, root + "/cells", root + "/cells/c1")) {
                assertThat(owner.getACL().forPath(path)).as(path).isEqualTo(expected);
            }
        }
    }

    @Test
    void restrict_givesAnOpenTreeLastunitsAcl_andRunsAgain() throws Exception {
        String root = ZooKeeperFixture.newRoot() + "/lastunit";
        try (CuratorFramework open = client(null); CuratorFramework owner = client(CREDENTIALS)) {
            TopologyStore store = new TopologyStore(open, root, InstantSource.system());
            store.createCell("c1", List.of("eu"), List.of(shard("c1-eu-1", "c1")));
            store.assignTenant("acme", "c1", -1);
            String tenant = root + "/tenants/acme";
            assertThat(open.getData().forPath(tenant)).isNotNull(); // open: anyone reads

            int restricted = TreeAcls.restrict(owner, root, CREDENTIALS);

            assertThat(restricted).isGreaterThanOrEqualTo(6); // root, cells, c1, its shards and shard, tenants, acme
            assertThatThrownBy(() -> open.setData().forPath(tenant, new byte[] {1}))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> open.getData().forPath(root + "/cells/c1"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThat(new TopologyStore(owner, root, InstantSource.system()).placement("acme").orElseThrow()
                    .value().getCell()).isEqualTo("c1");
            assertThat(TreeAcls.restrict(owner, root, CREDENTIALS)).isEqualTo(restricted);
            assertThatThrownBy(() -> TreeAcls.restrict(open, root, CREDENTIALS))
                    .isInstanceOf(KeeperException.NoAuthException.class);
        }
    }

    @Test
    void parse_takesUserColonPassword_andRefusesTheRest_namingTheSetting() {
        assertThat(ZooKeeperCredentials.parse("x", "  ")).isNull();
        assertThat(ZooKeeperCredentials.parse("x", "lastunit:abc:defgh12")).isEqualTo(
                new ZooKeeperCredentials("lastunit", "abc:defgh12"));
        assertThatThrownBy(() -> ZooKeeperCredentials.parse("lastunit.shard.zookeeper-credentials", "nocolon"))
                .hasMessageContaining("lastunit.shard.zookeeper-credentials is not <user>:<password>");
        assertThatThrownBy(() -> ZooKeeperCredentials.parse("s", "u:short"))
                .hasMessageContaining("s: ZooKeeper password").hasMessageNotContaining("short");
        assertThat(CREDENTIALS.toString()).doesNotContain(CREDENTIALS.password());
    }

    private static CuratorFramework client(ZooKeeperCredentials credentials) throws InterruptedException {
        CuratorFramework c = Curators.newClient(server.getConnectString(), Duration.ofSeconds(5), Duration.ofSeconds(5),
                new org.apache.curator.retry.RetryNTimes(0, 0), credentials);
        c.start();
        if (!c.blockUntilConnected((int) ZooKeeperFixture.scaled(Duration.ofSeconds(10)).toMillis(),
                TimeUnit.MILLISECONDS)) {
            c.close();
            throw new IllegalStateException("no connection");
        }
        return c;
    }

    private static ShardInfo shard(String id, String cell) {
        return ShardInfo.newBuilder().setShardId(id).setCell(cell).setRegion("eu").setAddress("127.0.0.1:1").build();
    }
}
