package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.lastunit.admin.cli.LastunitCli;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * ZooKeeper lost and restored from a backup while the platform runs: the ensemble is replaced by
 * an empty one on the same address, the export is imported into it, and the router and the shard
 * nodes, which never restarted, route the tenant to its cell again — the shard that holds its stock.
 */
class TopologyRestoreIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @TempDir
    Path dir;

    private static TestingServer zookeeper(int port) throws Exception {
        return new TestingServer(new InstanceSpec(null, port, -1, -1, true, -1, -1, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"), true);
    }

    private static int run(String... args) {
        CommandLine cl = LastunitCli.commandLine();
        StringWriter out = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(out, true));
        int code = cl.execute(args);
        assertThat(code).as(String.join(" ", args) + ":\n" + out).isZero();
        return code;
    }

    @Test
    void afterAnEmptyEnsembleAndAnImport_theRunningRouterAndShardsRouteTheTenantToItsCellAgain() throws Exception {
        TestingServer zk = zookeeper(-1);
        int port = zk.getPort();
        String connect = zk.getConnectString();
        try (ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = LocalPlatform.builder(clients.databases()).zookeeper(connect)
                     .cell("shared", List.of("local"), 1).cell("big", List.of("local"), 1)
                     .balancers(0).adminServer(false).start()) {
            try (CuratorFramework admin = Curators.newClient(connect, Duration.ofSeconds(15))) {
                admin.start();
                new TopologyStore(admin, TopologyStore.ROOT_DEFAULT, InstantSource.system()).assignTenant("acme", "big", -1);
            }
            ClusterClients.awaitUntil(() -> platform.router().topology().current().cellOf("acme").equals("big"),
                    "the router sees acme in big");
            ManagedChannel router = clients.routerChannel(platform);
            InventoryServiceGrpc.InventoryServiceBlockingStub api = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
            ClusterClients.createItem(api, CreateItemRequest.newBuilder().setTenantId("acme").setItemId("shoe")
                    .setTotal(10).setHomeRegion("local").build());
            assertThat(reserve(api, "before").getOutcome()).isEqualTo(ReserveOutcome.RESERVED);

            Path backup = dir.resolve("topology.json");
            run("admin", "--zookeeper", connect, "topology", "export", "--out", backup.toString());
            assertThat(Files.readString(backup)).contains("\"cell\": \"big\"");

            // The ensemble is lost: a new, empty one comes up at the same address.
            zk.close();
            zk = zookeeper(port);
            long lostAt = System.nanoTime();
            run("admin", "--zookeeper", connect, "topology", "import", "--in", backup.toString());

            // The router and the shard nodes serve their last snapshot for a while (topology-stale-max),
            // then refuse; the new ensemble refuses their old sessions (it has not seen their zxids), so
            // they reconnect with new ones once their session timeout has passed, and read the import.
            long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(90)).toNanos();
            while (!restored(platform)) {
                assertThat(System.nanoTime()).as("the router reads the restored topology").isLessThan(deadline);
                Thread.sleep(100);
            }
            System.out.printf("TopologyRestoreIT: the router read the restored topology %d ms after the empty"
                    + " ensemble came up%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAt));
            ReserveResponse after = null;
            while (after == null) {
                try {
                    after = reserve(api, "after");
                } catch (RuntimeException e) {
                    // the shard node may still be on its way back (MOVED / TOPOLOGY_UNAVAILABLE until it reads it)
                    Status.Code code = ClusterClients.code(e);
                    if (System.nanoTime() > deadline || (code != Status.Code.UNAVAILABLE && code != Status.Code.ABORTED)) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
            System.out.printf("TopologyRestoreIT: sold again %d ms after the empty ensemble came up%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lostAt));
            assertThat(after.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            // Both holds are on big's shard, where the item's stock is.
            var stock = api.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId("shoe").build()).getStock();
            assertThat(stock.getHeld()).isEqualTo(2);
            assertThat(stock.getAvailable()).isEqualTo(8);
        } finally {
            zk.close();
        }
    }

    /** The router serves the imported topology: acme in big at epoch 1 (0 in the backup, +1 on import). */
    private static boolean restored(LocalPlatform platform) {
        try {
            var t = platform.router().topology().current();
            return t.cellOf("acme").equals("big") && t.epochOf("acme") == 1 && t.shards("big").size() == 1;
        } catch (RuntimeException refused) {
            return false; // TOPOLOGY_UNAVAILABLE while it has no session
        }
    }

    private static ReserveResponse reserve(InventoryServiceGrpc.InventoryServiceBlockingStub api, String key) {
        return api.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS).reserve(
                ReserveRequest.newBuilder().setTenantId("acme").setItemId("shoe").setQuantity(1)
                        .setIdempotencyKey(key).setBuyerId("b-" + key).setRegion("local").build());
    }
}
