package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.topology.Topology;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.testkit.faults.History;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A flash sale through a local platform's router with a nemesis on one of its links, for the
 * link fault tests (the client and checker of Jepsen's split; the test is the nemesis): items of
 * one tenant on every shard of the cell {@code shared}, one {@link Sale} of buyers with
 * idempotency keys, every attempt recorded in a testkit {@link History}, and the checks every such
 * test ends with ({@link #resolveUnknownsAndCheck}). Not thread-safe: drive it from the test's
 * thread (the sale inside runs on its own).
 */
final class LinkFaultSale {
    /** How long the unknowns left after the sale may take to resolve, all together. */
    private static final Duration RESOLVE_MAX = Duration.ofSeconds(60);

    private final ClusterClients clients;
    private final LocalPlatform platform;
    private final ManagedChannel router;
    private final Topology topology;
    private final List<Sale.Item> items;
    private final History history = new History();
    private final Sale sale;
    private final long total;

    /**
     * Creates {@code itemsPerShard} items of {@code totalPerItem} units on every shard of
     * {@code shared} (through the router, before any fault), and a sale of {@code buyers} buyers
     * over them, with {@code heldFrom} as {@link Sale#holdAt}.
     */
    LinkFaultSale(ClusterClients clients, LocalPlatform platform, String keyPrefix, int itemsPerShard,
                  long totalPerItem, int buyers, int inFlightMax, Duration callDeadline, double freshPerSecond,
                  int... heldFrom) throws InterruptedException {
        this.clients = clients;
        this.platform = platform;
        this.router = clients.routerChannel(platform);
        this.topology = platform.router().topology().current();
        this.items = ClusterClients.itemsOnEveryShard(topology, "shared", "acme", itemsPerShard, totalPerItem);
        var admin = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        for (Sale.Item it : items) {
            ClusterClients.createItem(admin, CreateItemRequest.newBuilder().setTenantId(it.tenant()).setItemId(it.id())
                    .setTotal(it.total()).setHomeRegion("local").build());
        }
        this.total = totalPerItem * items.size();
        this.sale = new Sale(ClusterClients.async(router, LocalPlatform.DEV_TOKEN), Sale.buyers(items, buyers, keyPrefix),
                inFlightMax, 400, Duration.ofMillis(250), callDeadline, freshPerSecond).holdAt(heldFrom)
                .record(history);
    }

    Sale sale() {
        return sale;
    }

    History history() {
        return history;
    }

    long total() {
        return total;
    }

    List<Sale.Item> items() {
        return items;
    }

    /** The refs ({@code tenant/item}) of the items placement gives to {@code shardId}. */
    Set<String> itemsOf(String shardId) {
        return items.stream().filter(it -> topology.shardFor(it.tenant(), it.id(), "local").orElseThrow().getShardId()
                .equals(shardId)).map(Sale.Item::ref).collect(Collectors.toSet());
    }

    List<Sale.Item> itemsNotOf(String shardId) {
        Set<String> of = itemsOf(shardId);
        return items.stream().filter(it -> !of.contains(it.ref())).toList();
    }

    /** Attempts for {@code refs} sent after {@code from} and answered before {@code to}. */
    List<Sale.Attempt> within(Set<String> refs, Instant from, Instant to) {
        return sale.history().stream().filter(a -> refs.contains(a.itemRef()) && a.sentAt().isAfter(from)
                && a.answeredAt().isBefore(to)).toList();
    }

    /** RESERVED answers for {@code refs} that arrived between {@code from} and {@code to}. */
    long reservedAnswered(Set<String> refs, Instant from, Instant to) {
        return sale.history().stream().filter(a -> refs.contains(a.itemRef()) && a.outcome() == ReserveOutcome.RESERVED
                && a.answeredAt().isAfter(from) && a.answeredAt().isBefore(to)).count();
    }

    /** Milliseconds from {@code t} to the first RESERVED answer for {@code refs} after it; -1 for none. */
    long firstReservedAfterMillis(Set<String> refs, Instant t) {
        return sale.history().stream().filter(a -> refs.contains(a.itemRef()) && a.outcome() == ReserveOutcome.RESERVED
                && a.answeredAt().isAfter(t)).map(a -> Duration.between(t, a.answeredAt()).toMillis())
                .min(Comparator.naturalOrder()).orElse(-1L);
    }

    /** Answers as {@code CODE/outcome-or-reason}, counted. */
    static Map<String, Integer> answers(List<Sale.Attempt> attempts) {
        Map<String, Integer> m = new TreeMap<>();
        for (Sale.Attempt a : attempts) {
            m.merge(a.code() + "/" + (a.outcome() == null ? a.reason() : a.outcome()), 1, Integer::sum);
        }
        return m;
    }

    /**
     * After the sale has ended: retries every operation that ended unknown with its very request
     * (so its key) until the answer is definite (bounded by {@link #RESOLVE_MAX}), recording each
     * try, then checks the sale as a whole:
     * <ul>
     *   <li>the history is whole, and every key's last operation is definite: each unknown was
     *       resolved by its key; a key acknowledged more than once got the same hold each time, and
     *       a key told SOLD_OUT was never acknowledged;</li>
     *   <li>exactly the total was reserved: as many acknowledged keys as units, each item's stock
     *       entirely held, its holds in its shard's database one per buyer;</li>
     *   <li>every acknowledged hold is in the database under the id its buyer was told, and every
     *       hold there belongs to a buyer who was told so or whose operation ended unknown;</li>
     *   <li>no SOLD_OUT while the item had stock left;</li>
     *   <li>the invariant check of every shard and across shards ({@code admin check}) is clean.</li>
     * </ul>
     */
    void resolveUnknownsAndCheck(String test) throws Exception {
        var stub = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
        List<Sale.Result> results = new ArrayList<>();
        int unknowns = 0;
        long deadline = System.nanoTime() + TestTimeouts.scaled(RESOLVE_MAX).toNanos();
        for (Sale.Result r : sale.results()) {
            if (r.end() != Sale.End.UNKNOWN) {
                results.add(r);
                continue;
            }
            unknowns++;
            results.add(resolve(stub, r, deadline));
        }
        history.assertNoPending();
        System.out.printf("%s: %d operations ended unknown after the sale's own retries; history %s%n", test, unknowns,
                history);
        checkHistory();

        Map<Sale.End, Integer> ends = new HashMap<>();
        results.forEach(r -> ends.merge(r.end(), 1, Integer::sum));
        assertThat(ends.getOrDefault(Sale.End.FAIL, 0)).as("operations that failed: %s", ends).isZero();
        assertThat(ends.getOrDefault(Sale.End.UNKNOWN, 0)).as("operations still unknown: %s", ends).isZero();
        assertThat(ends.getOrDefault(Sale.End.RESERVED, 0)).as("operations that reserved: %s", ends)
                .isEqualTo((int) total);
        for (Sale.Item it : items) {
            Stock s = stub.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                    .getStock(GetStockRequest.newBuilder().setTenantId(it.tenant()).setItemId(it.id()).build())
                    .getStock();
            assertThat(s.getHeld()).as("held of %s", it.ref()).isEqualTo(it.total());
            assertThat(s.getAvailable() + s.getSold()).as("available + sold of %s", it.ref()).isZero();
        }
        SaleChecker checker = SaleChecker.read(clients, platform.router().topology().current(), items);
        checker.assertEachItemHeldExactlyItsTotal();
        checker.assertRepliesMatchHolds(results);
        checker.assertNoSoldOutWhileStockRemained(sale.history());
        MoveChecks.assertInvariants(clients, platform);
    }

    /** Retries {@code r}'s request until a definite answer; the result it ends with. */
    private Sale.Result resolve(InventoryServiceGrpc.InventoryServiceBlockingStub stub, Sale.Result r, long deadline)
            throws InterruptedException {
        for (int n = 1; ; n++) {
            History.Op op = history.invoke("resolver", "reserve", r.request().getIdempotencyKey());
            try {
                ReserveResponse a = stub.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                        .reserve(r.request());
                Sale.recordAnswer(op, a, null);
                Sale.End end = switch (a.getOutcome()) {
                    case RESERVED -> Sale.End.RESERVED;
                    case SOLD_OUT -> Sale.End.SOLD_OUT;
                    case LIMIT_EXCEEDED -> Sale.End.LIMIT_EXCEEDED;
                    default -> Sale.End.UNKNOWN;
                };
                return new Sale.Result(r.request(), end, end == Sale.End.RESERVED ? a.getHold() : null,
                        r.attempts() + n, Status.Code.OK, "", true);
            } catch (StatusRuntimeException e) {
                Sale.recordAnswer(op, null, e);
                assertThat(System.nanoTime()).as("unknown %s resolved by its key within %s (last: %s)",
                        r.request().getIdempotencyKey(), RESOLVE_MAX, e.getStatus()).isLessThan(deadline);
                Thread.sleep(50);
            }
        }
    }

    /** The history by key: each key's last operation definite, one hold per key, no key both held and sold out. */
    private void checkHistory() {
        Map<String, List<History.Entry>> byKey = new HashMap<>();
        for (History.Entry e : history.entries()) {
            byKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
        }
        assertThat(byKey).as("keys in the history").hasSize(sale.results().size());
        Set<String> unresolved = new HashSet<>();
        for (Map.Entry<String, List<History.Entry>> k : byKey.entrySet()) {
            List<History.Entry> entries = k.getValue();
            History.Entry last = entries.stream().max(Comparator.comparingLong(History.Entry::completeNanos))
                    .orElseThrow();
            if (last.outcome() == History.Outcome.UNKNOWN) {
                unresolved.add(k.getKey());
            }
            Set<Object> holds = entries.stream().filter(e -> e.outcome() == History.Outcome.OK).map(History.Entry::value)
                    .collect(Collectors.toSet());
            assertThat(holds).as("holds acknowledged for key %s: %s", k.getKey(), entries).hasSizeLessThanOrEqualTo(1);
            boolean soldOut = entries.stream().anyMatch(e -> e.outcome() == History.Outcome.FAIL
                    && (ReserveOutcome.SOLD_OUT.name().equals(e.reason())
                    || ReserveOutcome.LIMIT_EXCEEDED.name().equals(e.reason())));
            assertThat(soldOut && !holds.isEmpty()).as("key %s both acknowledged and refused: %s", k.getKey(), entries)
                    .isFalse();
        }
        assertThat(unresolved).as("keys whose last operation is unknown").isEmpty();
        long ackedKeys = byKey.values().stream().filter(es -> es.stream()
                .anyMatch(e -> e.outcome() == History.Outcome.OK)).count();
        assertThat(ackedKeys).as("keys acknowledged in the history").isEqualTo(total);
    }
}
