package io.lastunit.admin.cluster;

import io.grpc.ManagedChannel;
import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.Moves;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;

/**
 * What the tests of moves run on: a local platform of two cells, {@code shared} and {@code big}
 * (region "local", no balancer, no background resumes), its router's channel, shard channels for
 * movers the test builds itself, and ZooKeeper sessions for them. Closes in reverse order.
 */
final class MovePlatform implements AutoCloseable {
    /** Movers' settings in these tests: the defaults with a short grace before the source is dropped. */
    static final MoverSettings SETTINGS = MoverSettings.defaults().withRetireGrace(Duration.ofMillis(100));

    final ClusterClients clients;
    final LocalPlatform platform;
    final ManagedChannel router;
    final ShardChannels channels;

    private MovePlatform(ClusterClients clients, LocalPlatform platform) {
        this.clients = clients;
        this.platform = platform;
        this.router = clients.routerChannel(platform);
        this.channels = new ShardChannels(new ShardChannels.Dial(io.lastunit.common.tls.ClientTls.PLAINTEXT, 64 << 20, false, true), Duration.ofSeconds(1));
    }

    static MovePlatform start(PostgresFixture pg, int shardsPerCell) throws Exception {
        ClusterClients clients = new ClusterClients(pg);
        try {
            LocalPlatform platform = LocalPlatform.builder(clients.databases())
                    .cell("shared", List.of("local"), shardsPerCell)
                    .cell("big", List.of("local"), shardsPerCell)
                    .balancers(0)
                    .adminResumeInterval(Duration.ZERO)
                    .start();
            return new MovePlatform(clients, platform);
        } catch (Exception | Error e) {
            clients.close();
            throw e;
        }
    }

    /** The public API through the router, with the dev token and a call deadline. */
    InventoryServiceGrpc.InventoryServiceBlockingStub api() {
        return ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN).withDeadlineAfter(
                ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS);
    }

    /** A new ZooKeeper session, connected (the caller closes it). */
    CuratorFramework session() throws InterruptedException {
        CuratorFramework c = Curators.newClient(platform.zookeeper(), Duration.ofSeconds(15));
        c.start();
        if (!c.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)) {
            c.close();
            throw new IllegalStateException("no ZooKeeper at " + platform.zookeeper());
        }
        return c;
    }

    /** Movers on {@code client} with {@link #SETTINGS}, the default policy and {@code faults}. */
    Moves moves(CuratorFramework client, MoveFaults faults, String owner) {
        return new Moves(new TopologyStore(client, TopologyStore.ROOT_DEFAULT, InstantSource.system()), client,
                TopologyStore.ROOT_DEFAULT, channels, MovePolicy.defaults(), SETTINGS, InstantSource.system(), faults,
                owner, 1);
    }

    @Override
    public void close() throws Exception {
        channels.close();
        platform.close();
        clients.close();
    }
}
