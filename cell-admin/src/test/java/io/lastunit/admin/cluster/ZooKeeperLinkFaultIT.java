package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.testkit.faults.Nemesis;
import io.lastunit.testkit.faults.ProxyNemesis;
import io.lastunit.testkit.faults.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Nemesis on the ZooKeeper links, during a sale of 3,000 buyers with idempotency keys on a platform
 * of three shards: the router, and one shard node (the victim), reach ZooKeeper (Curator's
 * {@link TestingServer}) each through its own {@link TcpProxy}, which the test cuts. Unlike
 * {@link ZooKeeperSessionExpiryFaultIT}, which ends sessions by force, here only the network fails:
 * what expires, and when, is up to the clients and the server.
 *
 * <ul>
 *   <li>The router's link cut for less than its topology staleness bound: the router routes from its
 *       cached topology (its connection SUSPENDED, then RECONNECTED on the same session) and the
 *       sale goes on with no error at all.</li>
 *   <li>The router's link cut for longer than the bound (1 s here): past it the router refuses
 *       every Reserve it cannot answer from its sold-out cache with UNAVAILABLE /
 *       TOPOLOGY_UNAVAILABLE (never SOLD_OUT while stock is left), and sells again once healed.</li>
 *   <li>The victim's link cut past its session timeout (2 s here): the server expires its session,
 *       so its ephemeral {@code live/} registration goes, and the router stops calling it (its items
 *       answer UNAVAILABLE / SHARD_UNAVAILABLE; the other shards sell on). The node itself keeps
 *       running; on the heal its Curator client opens a new session and re-creates the registration
 *       ({@code PersistentNode}), the router routes to it again and its items sell.</li>
 * </ul>
 * Each ends exact: every unknown resolved by its key, exactly each item's total held, every
 * acknowledged hold in the database as told, the invariant checks clean.
 */
class ZooKeeperLinkFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String VICTIM = "shared-local-2";
    private static final int BUYERS = 3_000;
    private static final double FRESH_PER_SECOND = 600;
    /** As in {@link RouterShardLinkFaultIT}: 60 units of each item before the fault, 30 during it, the rest after the heal. */
    private static final int[] HELD_FROM = {540, 810};
    private static final int UNITS_BEFORE_HEAL = 90;
    /** The router's own session timeout (RouterNode's, not a setting). */
    private static final Duration ROUTER_SESSION = Duration.ofSeconds(15);
    /** The router's staleness bound in the case that outlasts it. */
    private static final Duration SHORT_STALE_MAX = Duration.ofSeconds(1);
    /** The victim's session timeout in the case that outlasts it. */
    private static final Duration SHORT_SESSION = Duration.ofSeconds(2);
    /** How long the cut shorter than the router's default 10 s bound lasts: long enough to be seen, well short of it. */
    private static final Duration SHORT_CUT = Duration.ofSeconds(2);
    private static final int ANSWERS_MIN = 20;

    @Test
    void routerLinkCut_shorterThanTheStalenessBound_routesFromTheCachedTopology_withNoError() throws Exception {
        try (Links links = new Links(); ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = links.platform(clients, Map.of(), Map.of())) {
            String test = "ZooKeeperLinkFaultIT[router cut < stale bound]";
            CuratorFramework routerZk = platform.router().curator();
            assertThat(routerZk.getZookeeperClient().getZooKeeper().getSessionTimeout())
                    .as("the router's negotiated session timeout").isEqualTo((int) ROUTER_SESSION.toMillis());
            long session = routerZk.getZookeeperClient().getZooKeeper().getSessionId();
            Queue<ConnectionState> states = states(routerZk);
            LinkFaultSale run = sale(clients, platform, "zk-a");
            Sale sale = run.sale();
            Nemesis cut = ProxyNemesis.cut(links.router);
            Instant faultBegan;
            Instant healBegan;
            sale.start();
            try {
                ClusterClients.awaitUntil(() -> sale.reserved() >= run.total() / 5, "a fifth of the stock is reserved");
                cut.start();
                faultBegan = Instant.now();
                sale.release();
                ClusterClients.awaitUntil(() -> states.contains(ConnectionState.SUSPENDED),
                        "the router's ZooKeeper connection is SUSPENDED: " + states);
                awaitEveryItemSold(run, UNITS_BEFORE_HEAL);
                ClusterClients.awaitUntil(() -> Duration.between(faultBegan, Instant.now()).compareTo(SHORT_CUT) >= 0,
                        "the cut lasted " + SHORT_CUT);
                healBegan = Instant.now();
                cut.stop();
                ClusterClients.awaitUntil(() -> states.contains(ConnectionState.RECONNECTED),
                        "the router's ZooKeeper connection is back: " + states);
                sale.release();
                assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).as("sale ended: %s", sale).isTrue();
            } finally {
                cut.stop();
                sale.stop();
            }
            System.out.printf("%s: %s; cut %d ms; router connection %s; answers %s; %s%n", test, sale,
                    Duration.between(faultBegan, healBegan).toMillis(), states,
                    LinkFaultSale.answers(sale.history()), links.router);
            assertThat(Duration.between(faultBegan, healBegan)).as("the cut is shorter than the staleness bound")
                    .isLessThan(Duration.ofSeconds(10));
            assertThat(sale.history()).as("attempts answered with an error").allMatch(a -> a.code() == Status.Code.OK);
            for (String shard : platform.shards().keySet()) {
                assertThat(run.reservedAnswered(run.itemsOf(shard), faultBegan, healBegan))
                        .as("units of %s acknowledged during the cut", shard).isPositive();
            }
            assertThat(routerZk.getZookeeperClient().getZooKeeper().getSessionId()).as("the router's session")
                    .isEqualTo(session);
            assertThat(states).as("the router's connection states").doesNotContain(ConnectionState.LOST);
            run.resolveUnknownsAndCheck(test);
        }
    }

    /**
     * A blackhole is not seen at once, as a cut is: the ZooKeeper client only gives up on a
     * connection that stayed silent for two thirds of the session (its read timeout; it pings after
     * a third). Until then, and for the staleness bound after, the router routes as before.
     */
    @Test
    void routerLinkBlackholed_untilTheClientNotices_routesFromTheCachedTopology_withNoError() throws Exception {
        try (Links links = new Links(); ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = links.platform(clients, Map.of(), Map.of())) {
            String test = "ZooKeeperLinkFaultIT[router blackhole]";
            CuratorFramework routerZk = platform.router().curator();
            long session = routerZk.getZookeeperClient().getZooKeeper().getSessionId();
            Queue<ConnectionState> states = states(routerZk);
            LinkFaultSale run = sale(clients, platform, "zk-d");
            Sale sale = run.sale();
            Nemesis blackhole = ProxyNemesis.blackhole(links.router);
            Instant faultBegan;
            Instant[] suspended = new Instant[1];
            Instant healBegan;
            sale.start();
            try {
                ClusterClients.awaitUntil(() -> sale.reserved() >= run.total() / 5, "a fifth of the stock is reserved");
                faultBegan = Instant.now();
                blackhole.start();
                sale.release();
                awaitEveryItemSold(run, UNITS_BEFORE_HEAL);
                ClusterClients.awaitUntil(() -> {
                    if (states.contains(ConnectionState.SUSPENDED)) {
                        suspended[0] = Instant.now();
                    }
                    return suspended[0] != null;
                }, "the router's ZooKeeper client notices the blackhole");
                healBegan = Instant.now();
                blackhole.stop();
                ClusterClients.awaitUntil(() -> states.contains(ConnectionState.RECONNECTED),
                        "the router's ZooKeeper connection is back: " + states);
                sale.release();
                assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).as("sale ended: %s", sale).isTrue();
            } finally {
                blackhole.stop();
                sale.stop();
            }
            Duration noticed = Duration.between(faultBegan, suspended[0]);
            System.out.printf("%s: %s; the router's client noticed the blackhole after %d ms; router connection %s;"
                            + " answers %s; %s%n", test, sale, noticed.toMillis(), states,
                    LinkFaultSale.answers(sale.history()), links.router);
            assertThat(noticed).as("time until the client noticed the silence").isLessThan(ROUTER_SESSION);
            assertThat(sale.history()).as("attempts answered with an error").allMatch(a -> a.code() == Status.Code.OK);
            assertThat(run.reservedAnswered(run.items().stream().map(Sale.Item::ref).collect(Collectors.toSet()),
                    faultBegan, healBegan)).as("units acknowledged during the blackhole").isPositive();
            assertThat(routerZk.getZookeeperClient().getZooKeeper().getSessionId()).as("the router's session")
                    .isEqualTo(session);
            assertThat(states).as("the router's connection states").doesNotContain(ConnectionState.LOST);
            run.resolveUnknownsAndCheck(test);
        }
    }

    @Test
    void routerLinkCut_longerThanTheStalenessBound_refusesTopologyUnavailable_neverSoldOut_andRecovers()
            throws Exception {
        try (Links links = new Links(); ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = links.platform(clients,
                     Map.of("lastunit.router.topology-stale-max-ms", SHORT_STALE_MAX.toMillis()), Map.of())) {
            String test = "ZooKeeperLinkFaultIT[router cut > stale bound]";
            Queue<ConnectionState> states = states(platform.router().curator());
            LinkFaultSale run = sale(clients, platform, "zk-b");
            Set<String> all = run.items().stream().map(Sale.Item::ref).collect(Collectors.toSet());
            Sale sale = run.sale();
            Nemesis cut = ProxyNemesis.cut(links.router);
            Instant faultBegan;
            Instant healBegan;
            Instant healed;
            sale.start();
            try {
                ClusterClients.awaitUntil(() -> sale.reserved() >= run.total() / 5, "a fifth of the stock is reserved");
                faultBegan = Instant.now();
                cut.start();
                ClusterClients.awaitUntil(() -> stale(platform), "the router's topology is too stale to serve");
                // Buyers sent from now on can only be refused (the first part may be over already).
                sale.release();
                ClusterClients.awaitUntil(() -> refusingSince(run, faultBegan, all).size() >= ANSWERS_MIN,
                        ANSWERS_MIN + " answers after the first TOPOLOGY_UNAVAILABLE: " + sale);
                healBegan = Instant.now();
                cut.stop();
                ClusterClients.awaitUntil(() -> states.contains(ConnectionState.RECONNECTED),
                        "the router's ZooKeeper connection is back: " + states);
                healed = Instant.now();
                sale.release();
                assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).as("sale ended: %s", sale).isTrue();
            } finally {
                cut.stop();
                sale.stop();
            }
            Instant firstRefused = firstRefusal(run, faultBegan);
            List<Sale.Attempt> refusing = run.within(all, firstRefused, healBegan);
            long recoveryMs = run.firstReservedAfterMillis(all, healBegan);
            System.out.printf("%s: %s; cut %d ms, first refusal %d ms into it; answers from then to the heal %s;"
                            + " reconnected %d ms and first reserved %d ms after the heal; states %s%n", test, sale,
                    Duration.between(faultBegan, healBegan).toMillis(), Duration.between(faultBegan, firstRefused)
                            .toMillis(), LinkFaultSale.answers(refusing), Duration.between(healBegan, healed).toMillis(),
                    recoveryMs, states);
            // The cached topology was served for the bound, no less, and then nothing was routed.
            assertThat(Duration.between(faultBegan, firstRefused)).as("time to the first refusal")
                    .isGreaterThanOrEqualTo(SHORT_STALE_MAX);
            assertThat(LinkFaultSale.answers(refusing).keySet()).as("answers while the topology was too stale")
                    .isNotEmpty().allMatch(k -> k.equals(Status.Code.UNAVAILABLE + "/TOPOLOGY_UNAVAILABLE"));
            assertThat(LinkFaultSale.answers(sale.history()).keySet()).as("every answer of the sale")
                    .allMatch(k -> k.startsWith(Status.Code.OK + "/") || k.equals(Status.Code.UNAVAILABLE
                            + "/TOPOLOGY_UNAVAILABLE"));
            assertThat(recoveryMs).as("units reserved after the heal").isNotNegative();
            run.resolveUnknownsAndCheck(test);
        }
    }

    @Test
    void shardLinkCut_pastItsSession_dropsItsLiveRegistration_routerStopsCallingIt_andItComesBack() throws Exception {
        try (Links links = new Links(); ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = links.platform(clients, Map.of(), Map.of(
                     "lastunit.shard.zookeeper", links.shard.address(),
                     "lastunit.shard.zookeeper-session-timeout-ms", SHORT_SESSION.toMillis()))) {
            String test = "ZooKeeperLinkFaultIT[shard cut > session]";
            CuratorFramework victimZk = platform.shard(VICTIM).curator();
            assertThat(victimZk.getZookeeperClient().getZooKeeper().getSessionTimeout())
                    .as("the victim's negotiated session timeout").isEqualTo((int) SHORT_SESSION.toMillis());
            long session = victimZk.getZookeeperClient().getZooKeeper().getSessionId();
            LiveShard registered = platform.router().topology().current().liveShard(VICTIM).orElseThrow();
            Queue<ConnectionState> states = states(victimZk);
            LinkFaultSale run = sale(clients, platform, "zk-c");
            Set<String> victimItems = run.itemsOf(VICTIM);
            List<Sale.Item> others = run.itemsNotOf(VICTIM);
            Set<String> otherRefs = others.stream().map(Sale.Item::ref).collect(Collectors.toSet());
            Sale sale = run.sale();
            Nemesis cut = ProxyNemesis.cut(links.shard);
            Instant faultBegan;
            Instant[] notLive = new Instant[1];
            Instant healBegan;
            Instant liveAgain;
            sale.start();
            try {
                ClusterClients.awaitUntil(() -> sale.reserved() >= run.total() / 5, "a fifth of the stock is reserved");
                cut.start();
                faultBegan = Instant.now();
                ClusterClients.awaitUntil(() -> !platform.router().topology().current().isLive(VICTIM),
                        "the router sees " + VICTIM + "'s live registration gone");
                notLive[0] = Instant.now();
                // Buyers sent from now on meet a router that knows the node is gone.
                sale.release();
                ClusterClients.awaitUntil(() -> others.stream().allMatch(it -> sale.reserved(it) >= UNITS_BEFORE_HEAL),
                        "the other shards' items sold " + UNITS_BEFORE_HEAL + " units each during the cut: " + sale);
                ClusterClients.awaitUntil(() -> run.within(victimItems, notLive[0], Instant.now()).size()
                        >= ANSWERS_MIN, ANSWERS_MIN + " answers for " + VICTIM + "'s items while it was not live: "
                        + sale);
                healBegan = Instant.now();
                cut.stop();
                ClusterClients.awaitUntil(() -> platform.router().topology().current().isLive(VICTIM),
                        "the router sees " + VICTIM + " live again: " + states);
                liveAgain = Instant.now();
                ClusterClients.awaitUntil(() -> states.contains(ConnectionState.RECONNECTED),
                        "the victim's connection state RECONNECTED is delivered: " + states);
                sale.release();
                assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).as("sale ended: %s", sale).isTrue();
            } finally {
                cut.stop();
                sale.stop();
            }
            Map<String, Integer> whileNotLive = LinkFaultSale.answers(run.within(victimItems, notLive[0], healBegan));
            Map<String, Integer> beforeGone = LinkFaultSale.answers(run.within(victimItems, faultBegan, notLive[0]));
            long recoveryMs = run.firstReservedAfterMillis(victimItems, healBegan);
            long newSession = victimZk.getZookeeperClient().getZooKeeper().getSessionId();
            System.out.printf("%s: %s; registration gone %d ms into the cut; answers for %s's items before that %s,"
                            + " while not live %s; cut %d ms; live again %d ms and first reserved %d ms after the heal;"
                            + " session %x -> %x; states %s%n", test, sale,
                    Duration.between(faultBegan, notLive[0]).toMillis(), VICTIM, beforeGone, whileNotLive,
                    Duration.between(faultBegan, healBegan).toMillis(), Duration.between(healBegan, liveAgain).toMillis(),
                    recoveryMs, session, newSession, states);
            // The router stopped calling the node once its registration went: only UNAVAILABLE, never SOLD_OUT.
            assertThat(whileNotLive.keySet()).as("answers for %s's items while it was not live", VICTIM)
                    .isNotEmpty().allMatch(k -> k.startsWith(Status.Code.UNAVAILABLE + "/"));
            assertThat(run.reservedAnswered(otherRefs, faultBegan, healBegan))
                    .as("units of the other shards acknowledged during the cut").isPositive();
            // The same node came back on a new session and registered again; its items sold.
            assertThat(states).as("the victim's connection states").contains(ConnectionState.SUSPENDED,
                    ConnectionState.LOST, ConnectionState.RECONNECTED);
            assertThat(newSession).as("the victim's session after the heal").isNotEqualTo(session);
            LiveShard again = platform.router().topology().current().liveShard(VICTIM).orElseThrow();
            assertThat(again.getAddress()).isEqualTo(registered.getAddress());
            assertThat(again.getStartedAtMs()).as("registered again by the same node").isEqualTo(
                    registered.getStartedAtMs());
            assertThat(recoveryMs).as("%s's items reserved after the heal", VICTIM).isNotNegative();
            run.resolveUnknownsAndCheck(test);
        }
    }

    /** Three items on each shard, 100 units each, and the sale over them. */
    private static LinkFaultSale sale(ClusterClients clients, LocalPlatform platform, String prefix)
            throws InterruptedException {
        return new LinkFaultSale(clients, platform, prefix, 3, 100, BUYERS, 1_024,
                TestTimeouts.scaled(Duration.ofSeconds(10)), FRESH_PER_SECOND, HELD_FROM);
    }

    private static void awaitEveryItemSold(LinkFaultSale run, int units) throws InterruptedException {
        ClusterClients.awaitUntil(() -> run.items().stream().allMatch(it -> run.sale().reserved(it) >= units),
                "every item sold " + units + " units: " + run.sale());
    }

    /** Whether the router's topology cache refuses to serve (its bound ran out, or its session is lost). */
    private static boolean stale(LocalPlatform platform) {
        try {
            platform.router().topology().current();
            return false;
        } catch (Failure refused) {
            assertThat(refused.reason()).isEqualTo(Reason.TOPOLOGY_UNAVAILABLE);
            return true;
        }
    }

    /** When the first TOPOLOGY_UNAVAILABLE answer to an attempt sent after {@code after} arrived; null for none yet. */
    private static Instant firstRefusal(LinkFaultSale run, Instant after) {
        return run.sale().history().stream().filter(a -> a.code() == Status.Code.UNAVAILABLE
                && a.reason().equals("TOPOLOGY_UNAVAILABLE") && a.sentAt().isAfter(after))
                .map(Sale.Attempt::answeredAt).min(Instant::compareTo).orElse(null);
    }

    /** Attempts sent after the first TOPOLOGY_UNAVAILABLE answer arrived, and answered. */
    private static List<Sale.Attempt> refusingSince(LinkFaultSale run, Instant after, Set<String> refs) {
        Instant first = firstRefusal(run, after);
        return first == null ? List.of() : run.within(refs, first, Instant.now());
    }

    /** Every connection state {@code client} reports from now on, in order. */
    private static Queue<ConnectionState> states(CuratorFramework client) {
        Queue<ConnectionState> states = new ConcurrentLinkedQueue<>();
        client.getConnectionStateListenable().addListener((c, s) -> states.add(s));
        return states;
    }

    /**
     * A ZooKeeper server and one proxy in front of it for the router, one for the victim shard
     * node. Ticks of 200 ms so a session of 2 s is allowed (ZooKeeper grants 2 to 20 ticks unless
     * told otherwise), and sessions up to 30 s so the router keeps its 15 s. Closes the platform's
     * links after it: declare it first.
     */
    private static final class Links implements AutoCloseable {
        final TestingServer server;
        final TcpProxy router;
        final TcpProxy shard;

        Links() throws Exception {
            server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1,
                    Map.of("clientPortAddress", "127.0.0.1", "minSessionTimeout", "400", "maxSessionTimeout", "30000"),
                    "127.0.0.1"), true);
            InetSocketAddress upstream = new InetSocketAddress("127.0.0.1", server.getPort());
            router = TcpProxy.start("zk-router", upstream);
            shard = TcpProxy.start("zk-" + VICTIM, upstream);
        }

        /** A platform of three shards whose router dials ZooKeeper through {@link #router}. */
        LocalPlatform platform(ClusterClients clients, Map<String, Object> routerSettings,
                               Map<String, Object> victimSettings) throws Exception {
            LocalPlatform.Builder b = LocalPlatform.builder(clients.databases()).cell("shared", List.of("local"), 3)
                    .zookeeper(server.getConnectString()).balancers(0).adminServer(false)
                    .routerSetting("lastunit.router.zookeeper", router.address());
            routerSettings.forEach(b::routerSetting);
            victimSettings.forEach((k, v) -> b.shardSetting(VICTIM, k, v));
            return b.start();
        }

        @Override
        public void close() throws Exception {
            try (TestingServer s = server; TcpProxy r = router; TcpProxy sh = shard) {
                // closed in reverse order
            }
        }
    }
}
