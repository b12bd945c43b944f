package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.ReserveOutcome;
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
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Nemesis on the router↔shard link: a platform of three shards in which the router (and anyone
 * else who dials the cell's addresses) reaches one shard, the victim, through a {@link TcpProxy},
 * while the victim listens on its own port ({@link LocalPlatform.Builder#shardFront}). In the
 * middle of a sale of 3,000 buyers with idempotency keys the link is cut, blackholed, slowed or
 * throttled, then healed.
 *
 * <p>What it proves, for each nemesis: while the link is cut or blackholed, the victim's items get
 * no definite answer at all (only UNAVAILABLE or DEADLINE_EXCEEDED: the router's transport errors
 * and the caller's deadline end every call, none hangs, none says SOLD_OUT); while it is slow or
 * narrow they still sell; the other shards' items sell during the fault as before; after the heal
 * the victim's items sell again (the time to the first acknowledgement is printed); and the sale
 * ends exact: every unknown resolved by its key, exactly each item's total held, every acknowledged
 * hold in the database as told, the invariant checks clean.
 */
class RouterShardLinkFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String VICTIM = "shared-local-2";
    private static final int ITEMS_PER_SHARD = 3;
    private static final long TOTAL_PER_ITEM = 100;
    private static final int BUYERS = 3_000;
    private static final double FRESH_PER_SECOND = 600;
    /**
     * Buyers from these indexes on wait: until the nemesis has started, and until it has healed.
     * They go round-robin over the nine items, so the first 540 ask 60 units of each and the next
     * 270 thirty more: every item still has stock during the fault and after the heal, however fast
     * or slowly the host ran each part.
     */
    private static final int[] HELD_FROM = {540, 810};
    /** Units of each item the buyers before the second gate ask for. */
    private static final int UNITS_BEFORE_HEAL = 90;
    /** The least time a fault lasts, so that it outlasts the router's retries and the channel's first reconnect. */
    private static final Duration FAULT_MIN = Duration.ofSeconds(2);
    /**
     * The least time a cut lasts: long enough for gRPC's reconnect backoff (1 s, growing 1.6× per
     * failed attempt) to have grown past {@link io.lastunit.common.channel.ShardChannels#RECONNECT_WAIT_MAX},
     * which the router's channels cut it short to.
     */
    private static final Duration CUT_MIN = Duration.ofSeconds(6);
    /** The caller's deadline: it is what ends a call stuck in a blackhole (the router does not retry it). */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(3);
    /** Answers for the victim's items, sent during the fault, that the fault waits for before it heals. */
    private static final int VICTIM_ANSWERS_MIN = 20;
    private static final Duration LATENCY = Duration.ofMillis(200);
    private static final long THROTTLE_BYTES_PER_SECOND = 4 * 1024;

    /** The nemeses, and whether the victim's items still get definite answers under each. */
    enum Link {
        CUT(ProxyNemesis::cut, false, CUT_MIN),
        BLACKHOLE(ProxyNemesis::blackhole, false, FAULT_MIN),
        LATENCY(p -> ProxyNemesis.latency(p, RouterShardLinkFaultIT.LATENCY, Duration.ZERO), true, FAULT_MIN),
        THROTTLE(p -> ProxyNemesis.throttle(p, THROTTLE_BYTES_PER_SECOND), true, FAULT_MIN);

        final Function<TcpProxy, Nemesis> nemesis;
        final boolean victimSells;
        final Duration lastsAtLeast;

        Link(Function<TcpProxy, Nemesis> nemesis, boolean victimSells, Duration lastsAtLeast) {
            this.nemesis = nemesis;
            this.victimSells = victimSells;
            this.lastsAtLeast = lastsAtLeast;
        }
    }

    @ParameterizedTest
    @EnumSource(Link.class)
    void faultOnTheLinkToOneShard_pausesOrSlowsOnlyItsItems_andTheSaleEndsExact(Link link) throws Exception {
        String test = "RouterShardLinkFaultIT[" + link + "]";
        AtomicReference<TcpProxy> proxy = new AtomicReference<>();
        try (ClusterClients clients = new ClusterClients(PG);
             AutoCloseable closeProxy = () -> {
                 if (proxy.get() != null) {
                     proxy.get().close();
                 }
             };
             LocalPlatform platform = LocalPlatform.builder(clients.databases()).cell("shared", List.of("local"), 3)
                     .balancers(0).adminServer(false)
                     .shardFront((id, listen) -> id.equals(VICTIM) ? proxyTo(proxy, id, listen)
                             : listen.getHostString() + ":" + listen.getPort())
                     .start()) {
            assertThat(platform.shards().get(VICTIM).getAddress()).isEqualTo(proxy.get().address());
            LinkFaultSale run = new LinkFaultSale(clients, platform, "link-" + link, ITEMS_PER_SHARD, TOTAL_PER_ITEM,
                    BUYERS, 1_024, TestTimeouts.scaled(CALL_DEADLINE), FRESH_PER_SECOND, HELD_FROM);
            Set<String> victimItems = run.itemsOf(VICTIM);
            assertThat(victimItems).hasSize(ITEMS_PER_SHARD);
            List<Sale.Item> others = run.itemsNotOf(VICTIM);
            Set<String> otherRefs = Set.copyOf(others.stream().map(Sale.Item::ref).toList());
            Sale sale = run.sale();
            Nemesis nemesis = link.nemesis.apply(proxy.get());

            long t0 = System.nanoTime();
            Instant faultBegan;
            Instant healBegan;
            Instant healed;
            sale.start();
            try {
                ClusterClients.awaitUntil(() -> sale.reserved() >= run.total() / 5, "a fifth of the stock is reserved");
                nemesis.start();
                faultBegan = Instant.now();
                sale.release();
                ClusterClients.awaitUntil(() -> others.stream().allMatch(it -> sale.reserved(it) >= UNITS_BEFORE_HEAL),
                        "the other shards' items sold " + UNITS_BEFORE_HEAL + " units each during the fault: " + sale);
                ClusterClients.awaitUntil(() -> run.within(victimItems, faultBegan, Instant.now()).size()
                        >= VICTIM_ANSWERS_MIN, VICTIM_ANSWERS_MIN + " answers for " + VICTIM + "'s items, sent"
                        + " during the fault: " + sale + ", " + proxy.get());
                ClusterClients.awaitUntil(() -> Duration.between(faultBegan, Instant.now())
                        .compareTo(link.lastsAtLeast) >= 0, "the fault lasted " + link.lastsAtLeast);
                healBegan = Instant.now();
                nemesis.stop();
                healed = Instant.now();
                sale.release();
                assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).as("sale ended: %s", sale).isTrue();
            } finally {
                nemesis.stop();
                sale.stop();
            }
            List<Sale.Attempt> duringFault = run.within(victimItems, faultBegan, healBegan);
            Map<String, Integer> victimAnswers = LinkFaultSale.answers(duringFault);
            long recoveryMs = run.firstReservedAfterMillis(victimItems, healed);
            System.out.printf("%s: %s in %d ms; fault %d ms; answers for %s's items during it %s; first of them"
                            + " reserved %d ms after the heal; %s%n", test, sale,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), Duration.between(faultBegan, healBegan)
                            .toMillis(), VICTIM, victimAnswers, recoveryMs, proxy.get());

            // The other shards sold on, through the fault.
            assertThat(run.reservedAnswered(otherRefs, faultBegan, healBegan))
                    .as("units of the other shards acknowledged during the fault").isPositive();
            if (link.victimSells) {
                assertThat(run.reservedAnswered(victimItems, faultBegan, healBegan))
                        .as("units of %s acknowledged through the slow link: %s", VICTIM, victimAnswers).isPositive();
            } else {
                // Nothing crossed the link: no call sent after the fault began got a definite answer,
                // and none hung: each ended by the router's transport errors or the caller's deadline.
                assertThat(victimAnswers.keySet()).as("answers for %s's items during the %s", VICTIM, link)
                        .isNotEmpty().allMatch(k -> k.startsWith(Status.Code.UNAVAILABLE + "/")
                                || k.startsWith(Status.Code.DEADLINE_EXCEEDED + "/"));
            }
            if (link == Link.LATENCY) {
                long twoWays = LATENCY.multipliedBy(2).toMillis();
                assertThat(duringFault.stream().filter(a -> a.outcome() == ReserveOutcome.RESERVED)
                        .mapToLong(a -> Duration.between(a.sentAt(), a.answeredAt()).toMillis()).min().orElseThrow())
                        .as("the fastest acknowledgement of %s through the slowed link", VICTIM)
                        .isGreaterThanOrEqualTo(twoWays);
            }
            assertThat(recoveryMs).as("%s's items reserved after the heal", VICTIM).isNotNegative();
            run.resolveUnknownsAndCheck(test);
        }
    }

    private static String proxyTo(AtomicReference<TcpProxy> holder, String shardId, InetSocketAddress listen)
            throws java.io.IOException {
        TcpProxy p = TcpProxy.start("router-" + shardId, listen);
        holder.set(p);
        return p.address();
    }
}
