package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.HoldId;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Escrow buckets within one shard (DESIGN §5), on a real shard node over real gRPC and real
 * PostgreSQL: a hot item on 8 buckets sells exactly its total like one bucket does; a dry
 * bucket borrows from its siblings instead of answering SOLD_OUT; the item collapses into one
 * bucket under the low-water mark, and every key placed before the collapse still finds its
 * hold (also after a restart); units freed in a closed bucket are sold again.
 */
class EscrowBucketsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static ShardNodeHarness shard;
    private static final ExecutorService POOL = Executors.newFixedThreadPool(256);

    @BeforeAll
    static void start() throws Exception {
        shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.collapse-below", 8)).start();
    }

    @AfterAll
    static void stop() {
        shard.close();
        POOL.shutdownNow();
    }

    private static void create(String item, long total, int buckets) {
        shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId(item)
                .setTotal(total).setHomeRegion("local").setBucketCount(buckets).build());
    }

    private static ReserveRequest reserve(String item, String key) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId(item).setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("buyer-" + key).setRegion("local").build();
    }

    /** Reserve, retrying RESOURCE_EXHAUSTED / UNAVAILABLE with the same key as a client would. */
    private static ReserveResponse reserveRetrying(ReserveRequest req) {
        for (int attempt = 0; ; attempt++) {
            try {
                return shard.blocking().reserve(req);
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if ((code != Status.Code.RESOURCE_EXHAUSTED && code != Status.Code.UNAVAILABLE) || attempt >= 50) {
                    throw e;
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static Stock stock(String item) {
        return shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId(item).build())
                .getStock();
    }

    /** Runs a sale of {@code buyers} concurrent Reserves; returns hold id by key of the RESERVED ones. */
    private static Map<String, String> sale(String item, int buyers, int[] soldOut) throws Exception {
        List<CompletableFuture<ReserveResponse>> calls = new ArrayList<>();
        for (int i = 0; i < buyers; i++) {
            ReserveRequest r = reserve(item, item + "-k" + i);
            calls.add(CompletableFuture.supplyAsync(() -> reserveRetrying(r), POOL));
        }
        Map<String, String> holds = new HashMap<>();
        for (int i = 0; i < buyers; i++) {
            ReserveResponse r = calls.get(i).get(TestTimeouts.scaled(Duration.ofSeconds(120)).toMillis(),
                    TimeUnit.MILLISECONDS);
            if (r.getOutcome() == ReserveOutcome.RESERVED) {
                holds.put(item + "-k" + i, r.getHold().getHoldId());
            } else if (r.getOutcome() == ReserveOutcome.SOLD_OUT) {
                soldOut[0]++;
                assertThat(r.getRegionDry()).as("single-region item").isFalse();
            }
        }
        return holds;
    }

    private static ItemLevel eightBucketsLevel() {
        return ShardServiceGrpc.newBlockingStub(shard.channel()).listLevels(ListLevelsRequest.newBuilder()
                .setTenantId("acme").setItemId("eight-buckets").build()).getItems(0);
    }

    private static int bucketsUsed(Map<String, String> holds) {
        Set<Integer> used = new HashSet<>();
        for (String id : holds.values()) {
            used.add(HoldId.decode(id, "hold_id").bucketNo());
        }
        return used.size();
    }

    @Test
    void hotItem_onEightBuckets_sellsExactlyItsTotal_likeOneBucket() throws Exception {
        create("one-bucket", 1_000, 1);
        create("eight-buckets", 1_000, 8);
        int[] soldOut1 = new int[1];
        int[] soldOut8 = new int[1];
        Map<String, String> holds1 = sale("one-bucket", 4_000, soldOut1);
        Map<String, String> holds8 = sale("eight-buckets", 4_000, soldOut8);

        assertThat(holds1).hasSize(1_000);
        assertThat(soldOut1[0]).isEqualTo(3_000);
        assertThat(holds8).hasSize(1_000);
        assertThat(soldOut8[0]).isEqualTo(3_000);
        assertThat(new HashSet<>(holds8.values())).hasSize(1_000);
        assertThat(bucketsUsed(holds1)).isEqualTo(1);
        assertThat(bucketsUsed(holds8)).as("holds spread over the buckets").isEqualTo(8);
        for (String item : List.of("one-bucket", "eight-buckets")) {
            Stock s = stock(item);
            assertThat(s.getTotal()).isEqualTo(1_000);
            assertThat(s.getAvailable()).isZero();
            assertThat(s.getHeld()).isEqualTo(1_000);
        }
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        // Under the low-water mark (8) the eight buckets collapse into bucket 0: queued by the last
        // batches' commits to bucket 0's lane, so it may land just after the last answer.
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).pollInterval(Duration.ofMillis(20))
                .until(() -> eightBucketsLevel().getOpenBuckets() == 1);
        var level = eightBucketsLevel();
        assertThat(level.getBucketCount()).isEqualTo(8);
        assertThat(level.getOpenBuckets()).isEqualTo(1);
        assertThat(level.getReserves()).isGreaterThanOrEqualTo(4_000);
        assertThat(level.getSoldOuts()).isEqualTo(3_000);

        // Every key placed before the collapse, retried after it and after the sell-out, gets its hold.
        for (Map.Entry<String, String> e : holds8.entrySet()) {
            ReserveResponse again = reserveRetrying(reserve("eight-buckets", e.getKey()));
            assertThat(again.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(again.getHold().getHoldId()).isEqualTo(e.getValue());
        }
        // ... and so it does on a new node over the same database (nothing cached).
        shard.close();
        shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.collapse-below", 8)).start();
        int checked = 0;
        for (Map.Entry<String, String> e : holds8.entrySet()) {
            if (checked++ == 200) {
                break;
            }
            ReserveResponse again = reserveRetrying(reserve("eight-buckets", e.getKey()));
            assertThat(again.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(again.getHold().getHoldId()).isEqualTo(e.getValue());
        }
        assertThat(reserveRetrying(reserve("eight-buckets", "late-buyer")).getOutcome())
                .isEqualTo(ReserveOutcome.SOLD_OUT);
    }

    @Test
    void dryBucket_borrowsFromSiblings_soNoSoldOutWhileTheItemHasStock() throws Exception {
        // 400 units over 8 buckets of 50, collapse only under 8: keys land unevenly, so buckets
        // run dry long before the item does. One buyer at a time: every answer before the 400th
        // unit must be RESERVED — also across the collapse near the end, when units move between
        // buckets under the lanes' feet. Five items, to meet that moment more than once.
        for (int n = 0; n < 5; n++) {
            String item = "uneven-" + n;
            create(item, 400, 8);
            Map<String, String> holds = new HashMap<>();
            for (int i = 0; i < 400; i++) {
                String key = java.util.UUID.randomUUID().toString();
                ReserveResponse r = reserveRetrying(reserve(item, key));
                assertThat(r.getOutcome()).as("%s: reserve %d of 400", item, i).isEqualTo(ReserveOutcome.RESERVED);
                holds.put(key, r.getHold().getHoldId());
            }
            assertThat(reserveRetrying(reserve(item, "late")).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
            assertThat(bucketsUsed(holds)).isEqualTo(8);
            // Borrowing moved allotment between buckets; the sum stays the total.
            try (Connection c = DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
                 Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT sum(allotment), count(*) FILTER (WHERE allotment <> 50)"
                         + " FROM buckets WHERE tenant_id = 'acme' AND item_id = '" + item + "'")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(400);
                assertThat(rs.getLong(2)).as("buckets whose allotment changed by borrowing").isPositive();
            }
        }
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void multiUnitReserve_nearTheEnd_borrowsFromSeveralSiblings() {
        // 40 units over 8 buckets of 5; after 30 single units the last 10 are spread thin (still
        // above the low-water mark of 8, so no collapse): a Reserve of 10 must get them all.
        create("thin", 40, 8);
        for (int i = 0; i < 30; i++) {
            assertThat(reserveRetrying(reserve("thin", java.util.UUID.randomUUID().toString())).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
        }
        ReserveResponse ten = reserveRetrying(reserve("thin", "ten-units").toBuilder().setQuantity(10).build());
        assertThat(ten.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(ten.getHold().getQuantity()).isEqualTo(10);
        assertThat(reserveRetrying(reserve("thin", "one-more")).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        assertThat(stock("thin").getHeld()).isEqualTo(40);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void unitReleasedInAClosedBucket_isSoldAgain_afterTheCollapse() throws Exception {
        create("tail", 300, 8);
        Map<String, String> holds = new HashMap<>();
        for (int i = 0; i < 300; i++) {
            ReserveResponse r = reserveRetrying(reserve("tail", "t-" + i));
            assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            holds.put("t-" + i, r.getHold().getHoldId());
        }
        assertThat(reserveRetrying(reserve("tail", "t-late")).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        // Release three holds that live in closed buckets (not bucket 0).
        List<String> released = new ArrayList<>();
        for (String id : holds.values()) {
            if (HoldId.decode(id, "hold_id").bucketNo() != 0 && released.size() < 3) {
                shard.blocking().release(ReleaseRequest.newBuilder().setHoldId(id).build());
                released.add(id);
            }
        }
        assertThat(released).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(reserveRetrying(reserve("tail", "again-" + i)).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
        assertThat(reserveRetrying(reserve("tail", "again-3")).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        Stock s = stock("tail");
        assertThat(s.getHeld()).isEqualTo(300);
        assertThat(s.getAvailable()).isZero();
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }
}
