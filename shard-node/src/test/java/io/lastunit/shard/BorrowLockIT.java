package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lanes that borrow from each other's buckets at the same time neither wait on each other in a
 * cycle nor take units from each other's unfinished batches: each borrow is a short transaction
 * of its own that locks its two rows in bucket order, leaves the units the lender's lane has
 * promised, and tells the lender's lane what left (docs/escrow-buckets.md, "Borrowing"). Six
 * items of 8 buckets, sold out at once by buyers in random order so that buckets run dry
 * everywhere and every lane borrows; each item sells exactly its total, the database counts no
 * deadlock, and no Reserve is answered UNAVAILABLE. Before (the borrow inside the borrower's
 * batch, its lender's row locked until that commit) clients retried 110–493 Reserves a run:
 * batches that used up their redos on lock timeouts and on counters other lanes' borrows had
 * made stale.
 */
class BorrowLockIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int ITEMS = 6;
    private static final int UNITS = 600;
    private static final int BUYERS_PER_ITEM = 1_500;
    private static final int IN_FLIGHT = 256;
    private static final AtomicInteger RETRIES = new AtomicInteger();

    private static long deadlocks() throws SQLException {
        try (Connection c = DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
                PreparedStatement ps = c.prepareStatement(
                        "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Reserve, retrying UNAVAILABLE / RESOURCE_EXHAUSTED with the same key as a client would. */
    private static ReserveResponse reserveRetrying(ShardNodeHarness shard, ReserveRequest r) throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            try {
                return shard.blocking().withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(120)).toMillis(),
                        TimeUnit.MILLISECONDS).reserve(r);
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                if ((code != Status.Code.UNAVAILABLE && code != Status.Code.RESOURCE_EXHAUSTED) || attempt >= 50) {
                    throw e;
                }
                RETRIES.incrementAndGet();
                Thread.sleep(20);
            }
        }
    }

    @Test
    void lanesBorrowingFromEachOther_sellExactlyTheTotal_withoutADeadlock() throws Exception {
        long before = deadlocks();
        ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.collapse-below", 8,
                "lastunit.shard.lanes", 4)).start();
        Map<ReserveOutcome, Integer> outcomes = new EnumMap<>(ReserveOutcome.class);
        long[] held = new long[ITEMS];
        LaneEngine.Stats stats;
        try {
            for (int i = 0; i < ITEMS; i++) {
                shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("part-" + i)
                        .setTotal(UNITS).setHomeRegion("local").setBucketCount(8).build());
            }
            List<ReserveRequest> requests = new ArrayList<>();
            for (int i = 0; i < ITEMS; i++) {
                for (int b = 0; b < BUYERS_PER_ITEM; b++) {
                    requests.add(ReserveRequest.newBuilder().setTenantId("acme").setItemId("part-" + i)
                            .setQuantity(1 + b % 3).setIdempotencyKey("k-" + i + "-" + b).setBuyerId("b-" + i + "-" + b)
                            .setRegion("local").build());
                }
            }
            Collections.shuffle(requests, new Random(7));
            ExecutorService pool = Executors.newFixedThreadPool(IN_FLIGHT);
            List<Future<ReserveResponse>> calls = new ArrayList<>();
            try {
                for (ReserveRequest r : requests) {
                    calls.add(pool.submit(() -> reserveRetrying(shard, r)));
                }
                for (int n = 0; n < calls.size(); n++) {
                    ReserveResponse r = calls.get(n).get(TestTimeouts.scaled(Duration.ofSeconds(180)).toMillis(),
                            TimeUnit.MILLISECONDS);
                    outcomes.merge(r.getOutcome(), 1, Integer::sum);
                    if (r.getOutcome() == ReserveOutcome.RESERVED) {
                        int item = Integer.parseInt(requests.get(n).getItemId().substring("part-".length()));
                        held[item] += requests.get(n).getQuantity();
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            for (int i = 0; i < ITEMS; i++) {
                var stock = shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme")
                        .setItemId("part-" + i).build()).getStock();
                // Multi-unit Reserves can leave a unit or two no one asked for small enough.
                assertThat(stock.getHeld()).as("part-%d", i).isEqualTo(held[i]);
                assertThat(stock.getHeld() + stock.getAvailable()).isEqualTo(UNITS);
                assertThat(stock.getAvailable()).as("part-%d left over", i).isLessThan(3);
            }
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
            stats = shard.node().engine().stats();
        } finally {
            shard.close(); // its connections end, and with them their statistics are flushed
        }
        System.out.printf("BorrowLockIT: outcomes=%s retries=%d borrows=%d (%d units) redos=%d lock timeouts=%d%n",
                outcomes, RETRIES.get(), stats.borrows(), stats.borrowedUnits(), stats.redos(), stats.lockTimeouts());
        assertThat(outcomes.keySet()).containsOnly(ReserveOutcome.RESERVED, ReserveOutcome.SOLD_OUT);
        assertThat(stats.borrows()).as("borrows committed (77-99 in six runs: the sale must make every lane borrow)").isGreaterThan(20);
        assertThat(RETRIES.get()).as("Reserves answered UNAVAILABLE or RESOURCE_EXHAUSTED and retried").isZero();
        // A backend flushes its statistics as it exits, before it leaves pg_stat_activity.
        try (Connection c = DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE datname = current_database() AND pid <> pg_backend_pid()")) {
            long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
            while (System.nanoTime() < deadline) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) == 0) {
                        break;
                    }
                }
                Thread.sleep(100);
            }
        }
        long after = deadlocks();
        assertThat(after - before).as("deadlocks PostgreSQL detected in the shard's database").isZero();
    }
}
