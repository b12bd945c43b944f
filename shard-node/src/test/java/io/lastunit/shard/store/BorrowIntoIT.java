package io.lastunit.shard.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.shard.escrow.BorrowSizing;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link LaneStore#borrowInto}, the borrow as a transaction of its own: how much it moves (the
 * need, or half of what the sibling can spare beyond what its lane keeps, never more than the
 * cap), what it refuses (a closed borrower, a sibling with nothing to spare) without writing, the
 * lent total it keeps, and that borrows in both directions between the same buckets never wait on
 * each other in a cycle. Real PostgreSQL and a real shard node (its schema and connections); the
 * node's lanes do not touch the items, since nothing reserves them.
 */
class BorrowIntoIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "acme";
    private final LaneStore store = new LaneStore();

    /** {bucket_no, allotment, available, held, sold, lent, open (1/0)} of every bucket, in order. */
    private static List<long[]> buckets(DataSource ds, String item) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT bucket_no, allotment, available, held, sold, lent,"
                     + " CASE WHEN open THEN 1 ELSE 0 END FROM buckets WHERE tenant_id = ? AND item_id = ?"
                     + " ORDER BY bucket_no")) {
            ps.setString(1, TENANT);
            ps.setString(2, item);
            List<long[]> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                            rs.getLong(6), rs.getLong(7)});
                }
            }
            c.rollback();
            return rows;
        }
    }

    private static void create(ShardNodeHarness shard, String item, long total, int buckets) {
        shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId(item)
                .setTotal(total).setHomeRegion("local").setBucketCount(buckets).build());
    }

    /** One borrow in a transaction of its own, committed when it moved units, rolled back otherwise. */
    private LaneStore.Borrowed borrow(DataSource ds, String item, int to, int from, long need, long cap, long keep)
            throws SQLException {
        try (Connection c = ds.getConnection()) {
            LaneStore.Borrowed b = store.borrowInto(c, TENANT, item, to, from,
                    available -> new BorrowSizing(need, cap).units(available, keep));
            if (b == null || b == LaneStore.Borrowed.CLOSED) {
                c.rollback();
            } else {
                c.commit();
            }
            return b;
        }
    }

    @Test
    void movesTheNeedOrHalfOfWhatTheSiblingCanSpare_andCountsWhatItLent() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            String item = "amounts";
            create(shard, item, 400, 4);
            DataSource ds = shard.node().dataSource();
            assertThat(buckets(ds, item)).extracting(r -> r[2]).containsExactly(100L, 100L, 100L, 100L);

            // Half of the sibling's 100 is more than the 3 needed.
            LaneStore.Borrowed b = borrow(ds, item, 1, 2, 3, Long.MAX_VALUE, 0);
            assertThat(b.units()).isEqualTo(50);
            assertThat(b.borrower()).isEqualTo(new LaneStore.BucketRow(TENANT, item, 1, 150, 150, 0, 0, 0));
            assertThat(b.lender()).isEqualTo(new LaneStore.BucketRow(TENANT, item, 2, 50, 50, 0, 0, 50));
            // The need, when it is more than half.
            assertThat(borrow(ds, item, 0, 3, 80, Long.MAX_VALUE, 0).units()).isEqualTo(80);
            // Its lane keeps 40 of bucket 2's 50: 10 to spare, half of that is 5.
            assertThat(borrow(ds, item, 0, 2, 3, Long.MAX_VALUE, 40).units()).isEqualTo(5);
            // Never more than the cap.
            assertThat(borrow(ds, item, 1, 2, 3, 2, 0).units()).isEqualTo(2);
            // All it can spare when that is less than the need: 43 left, 40 kept.
            assertThat(borrow(ds, item, 3, 2, 10, Long.MAX_VALUE, 40).units()).isEqualTo(3);

            List<long[]> rows = buckets(ds, item);
            assertThat(rows).extracting(r -> r[2]).containsExactly(185L, 152L, 40L, 23L);
            assertThat(rows).extracting(r -> r[5]).containsExactly(0L, 0L, 60L, 80L); // lent: 50+5+2+3, 80
            for (long[] r : rows) {
                assertThat(r[2] + r[3] + r[4]).as("bucket %d balanced", r[0]).isEqualTo(r[1]);
            }
            assertThat(rows.stream().mapToLong(r -> r[1]).sum()).isEqualTo(400);
        }
    }

    @Test
    void aSiblingWithNothingToSpare_orAClosedBorrower_movesNothing() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            String item = "refusals";
            create(shard, item, 40, 4);
            DataSource ds = shard.node().dataSource();
            List<long[]> before = buckets(ds, item);

            assertThat(borrow(ds, item, 0, 1, 1, Long.MAX_VALUE, 10)).as("all 10 kept by its lane").isNull();
            assertThat(borrow(ds, item, 0, 1, 1, Long.MAX_VALUE, 25)).as("more kept than it has").isNull();
            try (Connection c = ds.getConnection();
                 PreparedStatement ps = c.prepareStatement(
                         "UPDATE buckets SET open = false WHERE tenant_id = ? AND item_id = ? AND bucket_no = 2")) {
                ps.setString(1, TENANT);
                ps.setString(2, item);
                assertThat(ps.executeUpdate()).isEqualTo(1);
                c.commit();
            }
            assertThat(borrow(ds, item, 2, 1, 1, Long.MAX_VALUE, 0)).isSameAs(LaneStore.Borrowed.CLOSED);

            List<long[]> after = buckets(ds, item);
            for (int i = 0; i < 4; i++) {
                assertThat(after.get(i)[2]).as("bucket %d available", i).isEqualTo(before.get(i)[2]);
                assertThat(after.get(i)[5]).as("bucket %d lent", i).isZero();
            }
        }
    }

    /**
     * Eight threads borrow between random pairs of four buckets, in both directions, each borrow
     * holding its rows for a millisecond before its commit so that they meet. A borrow locks its
     * two rows in bucket order, so none waits in a cycle: no deadlock (PostgreSQL would end one
     * after its deadlock_timeout with 40P01, failing the test), no lock wait given up, and the
     * item's units and allotment are all still there.
     */
    @Test
    void borrowsBothWaysBetweenTheSameBuckets_neverDeadlock_andLoseNothing() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            String item = "both-ways";
            create(shard, item, 4_000, 4);
            DataSource ds = shard.node().dataSource();
            AtomicLong moved = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> workers = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    int seed = t;
                    workers.add(pool.submit(() -> {
                        Random random = new Random(seed);
                        for (int n = 0; n < 150; n++) {
                            int to = random.nextInt(4);
                            int from = (to + 1 + random.nextInt(3)) % 4;
                            try (Connection c = ds.getConnection()) {
                                LaneStore.boundLockWaits(c, TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis());
                                BorrowSizing sizing = new BorrowSizing(1 + random.nextInt(20), Long.MAX_VALUE);
                                LaneStore.Borrowed b = store.borrowInto(c, TENANT, item, to, from,
                                        available -> sizing.units(available, 0));
                                Thread.sleep(1);
                                if (b == null) {
                                    c.rollback();
                                } else {
                                    c.commit();
                                    moved.addAndGet(b.units());
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> w : workers) {
                    w.get(TestTimeouts.scaled(Duration.ofSeconds(120)).toMillis(), TimeUnit.MILLISECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            List<long[]> rows = buckets(ds, item);
            assertThat(moved.get()).as("units moved by the borrows").isPositive();
            assertThat(rows.stream().mapToLong(r -> r[2]).sum()).isEqualTo(4_000);
            assertThat(rows.stream().mapToLong(r -> r[1]).sum()).isEqualTo(4_000);
            assertThat(rows.stream().mapToLong(r -> r[5]).sum()).as("lent totals").isEqualTo(moved.get());
            for (long[] r : rows) {
                assertThat(r[2]).as("bucket %d available", r[0]).isEqualTo(r[1]);
            }
        }
    }
}
