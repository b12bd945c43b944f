package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.topology.Topology;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.KillSession;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Nemesis on the topology during a sale: the router's ZooKeeper session expires, then a shard
 * node's (its ephemeral {@code live/} registration goes with it), then the ZooKeeper server
 * restarts. Calls may be refused UNAVAILABLE meanwhile and are retried with the same key;
 * traffic resumes after every reconnect, nothing is oversold, every acknowledged hold exists
 * and the invariants hold.
 */
class ZooKeeperSessionExpiryFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final long TOTAL_PER_ITEM = 100;
    private static final int BUYERS = 4_000;
    private static final double FRESH_PER_SECOND = 600;
    /**
     * Buyers from these indexes on wait: until the ZooKeeper restart begins, and until it is over.
     * They go round-robin over the twelve items, so the first 960 ask 80 units of each (enough for
     * the 65% the faults wait for), the next 120 ten more, and the rest is left for after the
     * restart: units are sold while it restarts and after it is back however long the restart
     * takes on this host.
     */
    private static final int[] HELD_FROM = {960, 1_080};

    @Test
    void sessionExpiries_andZooKeeperRestart_midSale_pauseTraffic_butNeverOversell() throws Exception {
        try (ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = LocalPlatform.builder(clients.databases())
                     .cell("shared", List.of("local"), 4).start()) {
            Topology topology = platform.router().topology().current();
            List<Sale.Item> items = ClusterClients.itemsOnEveryShard(topology, "shared", "acme", 3, TOTAL_PER_ITEM);
            ManagedChannel router = clients.routerChannel(platform);
            var admin = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
            for (Sale.Item it : items) {
                ClusterClients.createItem(admin, CreateItemRequest.newBuilder().setTenantId(it.tenant())
                        .setItemId(it.id()).setTotal(it.total()).setHomeRegion("local").build());
            }
            long total = TOTAL_PER_ITEM * items.size();
            String shardId = topology.shards("shared", "local").get(2).getShardId();
            CuratorFramework shardZk = platform.shard(shardId).curator();
            CuratorFramework routerZk = platform.router().curator();
            long routerSession = routerZk.getZookeeperClient().getZooKeeper().getSessionId();
            long shardSession = shardZk.getZookeeperClient().getZooKeeper().getSessionId();

            Sale sale = new Sale(ClusterClients.async(router, LocalPlatform.DEV_TOKEN),
                    Sale.buyers(items, BUYERS, "zk"), 256, 400, Duration.ofMillis(250),
                    TestTimeouts.scaled(Duration.ofSeconds(10)), FRESH_PER_SECOND).holdAt(HELD_FROM);
            Map<String, Instant> faults = new LinkedHashMap<>();
            long t0 = System.nanoTime();
            sale.start();
            try {
                ClusterClients.awaitUntil(() -> sale.reserved() >= total * 15 / 100, "15% reserved");
                faults.put("router session expired", Instant.now());
                KillSession.kill(routerZk.getZookeeperClient().getZooKeeper());
                ClusterClients.awaitUntil(() -> sessionOf(routerZk) != routerSession && routerZk.getZookeeperClient()
                        .isConnected(), "the router's client runs on a new session");
                ClusterClients.awaitUntil(() -> sale.reserved() >= total * 40 / 100, "40% reserved after "
                        + faults.keySet() + ": " + sale);
                faults.put("shard session expired", Instant.now());
                expireOnServer(platform.zookeeper(), shardZk.getZookeeperClient().getZooKeeper());
                ClusterClients.awaitUntil(() -> sessionOf(shardZk) != shardSession && shardZk.getZookeeperClient()
                        .isConnected(), "the shard's client runs on a new session");
                ClusterClients.awaitUntil(() -> platform.router().topology().current().isLive(shardId),
                        "the router sees " + shardId + " live again");
                ClusterClients.awaitUntil(() -> sale.reserved() >= total * 65 / 100, "65% reserved after "
                        + faults.keySet() + ": " + sale);
                faults.put("zookeeper restarted", Instant.now());
                sale.release();
                platform.zookeeperServer().restart();
                faults.put("zookeeper back", Instant.now());
                sale.release();
                assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).as("sale ended: %s", sale).isTrue();
            } finally {
                sale.stop();
            }
            List<Sale.Attempt> history = sale.history();
            System.out.printf("ZooKeeperSessionExpiryFaultIT: %s in %d ms; errors by reason %s%n", sale,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), errorsByReason(history));

            // Traffic resumed after each fault: units were reserved after it.
            Instant shardFault = faults.get("shard session expired");
            Set<String> shardItems = new HashSet<>();
            for (Sale.Item it : items) {
                if (topology.shardFor(it.tenant(), it.id(), "local").orElseThrow().getShardId().equals(shardId)) {
                    shardItems.add(it.ref());
                }
            }
            List<Long> pausedMs = history.stream().filter(a -> shardItems.contains(a.itemRef())
                    && a.outcome() == null && a.sentAt().isAfter(shardFault))
                    .map(a -> Duration.between(shardFault, a.answeredAt()).toMillis()).sorted().toList();
            System.out.printf("ZooKeeperSessionExpiryFaultIT: %d errors for %s's items, from +%d ms to +%d ms after its"
                    + " session expired%n", pausedMs.size(), shardId, pausedMs.isEmpty() ? -1 : pausedMs.get(0),
                    pausedMs.isEmpty() ? -1 : pausedMs.get(pausedMs.size() - 1));
            List<Map.Entry<String, Instant>> steps = List.copyOf(faults.entrySet());
            for (int i = 0; i < steps.size(); i++) {
                Instant from = steps.get(i).getValue();
                Instant to = i + 1 < steps.size() ? steps.get(i + 1).getValue() : Instant.MAX;
                long after = history.stream().filter(a -> a.outcome() == ReserveOutcome.RESERVED
                        && a.answeredAt().isAfter(from)).count();
                assertThat(after).as("units reserved after '%s'", steps.get(i).getKey()).isPositive();
                System.out.printf("ZooKeeperSessionExpiryFaultIT: '%s' until the next step: errors %s%n",
                        steps.get(i).getKey(), errorsByReason(history.stream()
                                .filter(a -> !a.sentAt().isBefore(from) && a.sentAt().isBefore(to)).toList()));
            }
            // The restarted server still has every shard registered.
            ClusterClients.awaitUntil(() -> platform.router().topology().current().liveShardIds()
                    .containsAll(platform.shards().keySet()), "every shard is live again for the router");

            Map<Sale.End, Integer> ends = new HashMap<>();
            sale.results().forEach(r -> ends.merge(r.end(), 1, Integer::sum));
            assertThat(ends.getOrDefault(Sale.End.FAIL, 0)).as("operations that failed: %s", ends).isZero();
            var reader = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
            for (Sale.Item it : items) {
                Stock s = reader.getStock(GetStockRequest.newBuilder().setTenantId(it.tenant()).setItemId(it.id())
                        .build()).getStock();
                assertThat(s.getHeld()).as("held of %s", it.ref()).isEqualTo(it.total());
                assertThat(s.getAvailable() + s.getSold()).as("available + sold of %s", it.ref()).isZero();
            }
            SaleChecker checker = SaleChecker.read(clients, platform.router().topology().current(), items);
            checker.assertEachItemHeldExactlyItsTotal();
            checker.assertRepliesMatchHolds(sale.results());
            checker.assertNoSoldOutWhileStockRemained(history);
            assertThat(sale.reserved() + ends.getOrDefault(Sale.End.UNKNOWN, 0)).isGreaterThanOrEqualTo((int) total);
            SaleChecker.assertInvariantsHold(platform);
        }
    }

    /**
     * Expires {@code zk}'s session on the server, as a long pause or a partition would: a second
     * handle joins the session and closes it, so the server ends the session and deletes its
     * ephemeral znodes at once. (curator-test 5.9.0's {@link KillSession} only injects the expiry on
     * the client side: the server keeps the session, and the shard's {@code live/} znode, until the
     * session timeout.)
     */
    private static void expireOnServer(String connectString, ZooKeeper zk) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(connectString, 15_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            assertThat(connected.await(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("second handle joined the session").isTrue();
        } finally {
            twin.close();
        }
    }

    private static long sessionOf(CuratorFramework client) {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0; // between handles
        }
    }

    private static Map<String, Integer> errorsByReason(List<Sale.Attempt> history) {
        Map<String, Integer> m = new TreeMap<>();
        for (Sale.Attempt a : history) {
            if (a.outcome() == null) {
                m.merge(a.code() + "/" + a.reason(), 1, Integer::sum);
            }
        }
        return m;
    }
}
