package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.topology.Topology;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Nemesis: stop one of the four shard nodes of a cell in the middle of a sale, then start it
 * again on the same database and port. While it is down its items pause — every answer for
 * them is UNAVAILABLE, never SOLD_OUT while they have stock — and the other items keep selling.
 * Every hold acknowledged before the stop is still there afterwards, the stopped shard's items
 * sell again once it is back, and at the end every item holds exactly its total.
 */
class ShardStopFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int ITEMS_PER_SHARD = 3;
    private static final long TOTAL_PER_ITEM = 100;
    private static final int BUYERS = 3_600;
    private static final double FRESH_PER_SECOND = 800;
    /**
     * Buyers from this index on wait until the stop is done (buyers go round-robin over the twelve
     * items, so the first 600 ask 50 units of each): every item still has stock after the stop,
     * for the running shards to sell and the stopped one to sell after its start, however the
     * stop's duration compares with the sale's pace on this host.
     */
    private static final int HELD_FROM = 600;

    @Test
    void stoppedShard_pausesOnlyItsItems_andLosesNoAcknowledgedHold() throws Exception {
        try (ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = LocalPlatform.builder(clients.databases())
                     .cell("shared", List.of("local"), 4).start()) {
            Topology topology = platform.router().topology().current();
            List<Sale.Item> items = ClusterClients.itemsOnEveryShard(topology, "shared", "acme", ITEMS_PER_SHARD,
                    TOTAL_PER_ITEM);
            ManagedChannel router = clients.routerChannel(platform);
            var admin = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
            for (Sale.Item it : items) {
                ClusterClients.createItem(admin, CreateItemRequest.newBuilder().setTenantId(it.tenant())
                        .setItemId(it.id()).setTotal(it.total()).setHomeRegion("local").build());
            }
            String victim = topology.shards("shared", "local").get(1).getShardId();
            Set<String> victimItems = items.stream()
                    .filter(it -> topology.shardFor(it.tenant(), it.id(), "local").orElseThrow().getShardId()
                            .equals(victim))
                    .map(Sale.Item::ref).collect(Collectors.toSet());
            assertThat(victimItems).hasSize(ITEMS_PER_SHARD);
            List<Sale.Item> others = items.stream().filter(it -> !victimItems.contains(it.ref())).toList();
            long total = TOTAL_PER_ITEM * items.size();

            Sale sale = new Sale(ClusterClients.async(router, LocalPlatform.DEV_TOKEN),
                    Sale.buyers(items, BUYERS, "stop"), 256, 400, Duration.ofMillis(250),
                    TestTimeouts.scaled(Duration.ofSeconds(10)), FRESH_PER_SECOND).holdAt(HELD_FROM);
            long t0 = System.nanoTime();
            sale.start();
            Instant stopBegan;
            Instant stopped;
            Instant restartBegan;
            Instant restarted;
            try {
                ClusterClients.awaitUntil(() -> sale.reserved() >= total / 5, "a fifth of the stock is reserved");
                stopBegan = Instant.now();
                platform.stopShard(victim);
                stopped = Instant.now();
                sale.release();
                ClusterClients.awaitUntil(() -> others.stream().allMatch(it -> sale.reserved(it) == it.total()),
                        "every item of the running shards sold out: " + sale);
                ClusterClients.awaitUntil(() -> unavailableBetween(sale.history(), victimItems, stopped,
                        Instant.now()) >= 100, "buyers of the stopped shard's items were told UNAVAILABLE");
                restartBegan = Instant.now();
                platform.startShard(victim);
                restarted = Instant.now();
                assertThat(sale.await(TestTimeouts.scaled(Duration.ofSeconds(60)))).as("sale ended: %s", sale).isTrue();
            } finally {
                sale.stop();
            }
            System.out.printf("ShardStopFaultIT: %s in %d ms; %s down %d ms (stop took %d ms, start %d ms)%n", sale,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), victim,
                    Duration.between(stopBegan, restarted).toMillis(), Duration.between(stopBegan, stopped).toMillis(),
                    Duration.between(restartBegan, restarted).toMillis());
            List<Sale.Attempt> history = sale.history();

            // While the node was down, its items only ever answered UNAVAILABLE.
            Map<String, Integer> whileDown = new TreeMap<>();
            for (Sale.Attempt a : history) {
                if (victimItems.contains(a.itemRef()) && a.sentAt().isAfter(stopped)
                        && a.answeredAt().isBefore(restartBegan)) {
                    whileDown.merge(a.code() + "/" + (a.outcome() == null ? a.reason() : a.outcome()), 1, Integer::sum);
                }
            }
            assertThat(whileDown).as("answers for the stopped shard's items while it was down").isNotEmpty();
            assertThat(whileDown.keySet()).as("answers while down: %s", whileDown)
                    .allMatch(k -> k.startsWith(Status.Code.UNAVAILABLE + "/"));
            // The other items kept selling after the stop; the stopped shard's items sold again after the start.
            assertThat(reservedAnsweredAfter(history, others, stopped)).as("units of running shards sold after the stop")
                    .isPositive();
            assertThat(reservedAnsweredAfter(history, items.stream().filter(it -> victimItems.contains(it.ref()))
                    .toList(), restarted)).as("units of the restarted shard sold after its start").isPositive();

            // Every hold acknowledged before the stop is there, unchanged.
            var reader = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
            Map<String, Instant> reservedAt = firstReservedAnswer(history);
            int ackedBeforeStop = 0;
            for (Sale.Result r : sale.results()) {
                if (r.end() == Sale.End.RESERVED
                        && reservedAt.get(r.request().getIdempotencyKey()).isBefore(stopBegan)) {
                    Hold now = reader.getHold(GetHoldRequest.newBuilder().setHoldId(r.hold().getHoldId()).build())
                            .getHold();
                    assertThat(now.getState()).isEqualTo(HoldState.HELD);
                    assertThat(now.getIdempotencyKey()).isEqualTo(r.request().getIdempotencyKey());
                    ackedBeforeStop++;
                }
            }
            assertThat(ackedBeforeStop).as("holds acknowledged before the stop").isGreaterThanOrEqualTo((int) total / 5);

            Map<Sale.End, Integer> ends = new HashMap<>();
            sale.results().forEach(r -> ends.merge(r.end(), 1, Integer::sum));
            System.out.printf("ShardStopFaultIT: ends %s, answers while down %s, first sale of %s %d ms after its start%n",
                    ends, whileDown, victim, history.stream().filter(a -> victimItems.contains(a.itemRef())
                            && a.outcome() == ReserveOutcome.RESERVED && a.answeredAt().isAfter(restarted))
                            .map(a -> Duration.between(restarted, a.answeredAt()).toMillis()).min(Long::compare)
                            .orElse(-1L));
            assertThat(ends.getOrDefault(Sale.End.FAIL, 0)).as("operations that failed: %s", ends).isZero();
            for (Sale.Item it : items) {
                Stock s = reader.getStock(GetStockRequest.newBuilder().setTenantId(it.tenant()).setItemId(it.id())
                        .build()).getStock();
                assertThat(s.getHeld()).as("held of %s", it.ref()).isEqualTo(it.total());
                assertThat(s.getAvailable() + s.getSold()).as("available + sold of %s", it.ref()).isZero();
            }
            SaleChecker checker = SaleChecker.read(clients, topology, items);
            checker.assertEachItemHeldExactlyItsTotal();
            checker.assertRepliesMatchHolds(sale.results());
            checker.assertNoSoldOutWhileStockRemained(history);
            assertThat(sale.reserved() + ends.getOrDefault(Sale.End.UNKNOWN, 0)).isGreaterThanOrEqualTo((int) total);
            SaleChecker.assertInvariantsHold(platform);
        }
    }

    private static long unavailableBetween(List<Sale.Attempt> history, Set<String> items, Instant from, Instant to) {
        return history.stream().filter(a -> items.contains(a.itemRef()) && a.code() == Status.Code.UNAVAILABLE
                && a.sentAt().isAfter(from) && a.answeredAt().isBefore(to)).count();
    }

    private static long reservedAnsweredAfter(List<Sale.Attempt> history, List<Sale.Item> items, Instant after) {
        Set<String> refs = items.stream().map(Sale.Item::ref).collect(Collectors.toSet());
        return history.stream().filter(a -> refs.contains(a.itemRef()) && a.outcome() == ReserveOutcome.RESERVED
                && a.answeredAt().isAfter(after)).count();
    }

    /** Idempotency key → when its first RESERVED reply arrived. */
    private static Map<String, Instant> firstReservedAnswer(List<Sale.Attempt> history) {
        Map<String, Instant> at = new HashMap<>();
        for (Sale.Attempt a : history) {
            if (a.outcome() == ReserveOutcome.RESERVED) {
                at.merge(a.request().getIdempotencyKey(), a.answeredAt(), (x, y) -> x.isBefore(y) ? x : y);
            }
        }
        return at;
    }
}
