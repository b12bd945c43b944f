package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.shard.escrow.Collapser;
import io.lastunit.shard.escrow.ItemLedger;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A collapse locks every bucket row of its item. Another transaction can hold one of them — a
 * lane's batch that borrows takes its lenders first and its own row last, in its own order — so
 * the collapse must not wait on it for long: bucket 0's lane stands still while it waits, and a
 * wait in a lock cycle lasted PostgreSQL's deadlock_timeout (a full second of Reserves stalled
 * at the end of a flash sale, seen in the load generator). It gives up after
 * {@link Collapser#COLLAPSE_LOCK_TIMEOUT_MILLIS}, changes nothing, and collapses on a later try.
 */
class CollapseLockIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static List<long[]> buckets(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT bucket_no, available, CASE WHEN open THEN 1 ELSE 0 END"
                + " FROM buckets WHERE tenant_id = 'acme' AND item_id = 'fold' ORDER BY bucket_no");
             ResultSet rs = ps.executeQuery()) {
            List<long[]> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)});
            }
            c.rollback();
            return rows;
        }
    }

    /**
     * How long the test waits for a collapse: the lock wait it gives up is {@code
     * COLLAPSE_LOCK_TIMEOUT_MILLIS}; without that timeout it would wait for the row forever, so any
     * bound tells the two apart, and it scales for slow machines.
     */
    private static long waitMillis(long seconds) {
        return TestTimeouts.scaled(Duration.ofSeconds(seconds)).toMillis();
    }

    @Test
    void collapse_givesUpOnALockedSiblingRow_changesNothing_andCollapsesOnceTheRowIsFree() throws Exception {
        // The low-water mark (8) stays below the item's 40 units, so only the test collapses it.
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.collapse-below", 8)).start()) {
            shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("fold")
                    .setTotal(40).setHomeRegion("local").setBucketCount(4).build());
            LaneEngine engine = shard.node().engine();
            try (Connection other = shard.node().dataSource().getConnection()) {
                List<long[]> before = buckets(other);
                assertThat(before).hasSize(4).allSatisfy(b -> assertThat(b[2]).isEqualTo(1));
                assertThat(before.stream().mapToLong(b -> b[1]).sum()).isEqualTo(40);

                // Another transaction holds bucket 2's row, as a borrowing batch would.
                try (PreparedStatement lock = other.prepareStatement("SELECT available FROM buckets"
                        + " WHERE tenant_id = 'acme' AND item_id = 'fold' AND bucket_no = 2 FOR UPDATE")) {
                    lock.executeQuery().close();
                }
                // Without the lock timeout this waits until the row is released, and the get times out.
                ExecutionException gaveUp = catchThrowableOfType(ExecutionException.class,
                        () -> engine.collapse("acme", "fold").get(waitMillis(10), TimeUnit.MILLISECONDS));
                assertThat(gaveUp).isNotNull();
                assertThat(gaveUp.getCause()).isInstanceOf(SQLException.class);
                assertThat(((SQLException) gaveUp.getCause()).getSQLState()).isEqualTo("55P03");
                other.rollback();

                // Nothing moved: four open buckets, the same units in each.
                List<long[]> after = buckets(other);
                assertThat(after).hasSize(4);
                for (int i = 0; i < 4; i++) {
                    assertThat(after.get(i)).containsExactly(before.get(i));
                }

                // The row is free: the next try collapses everything into bucket 0.
                assertThat(engine.collapse("acme", "fold").get(waitMillis(30), TimeUnit.MILLISECONDS)).isTrue();
                List<long[]> collapsed = buckets(other);
                assertThat(collapsed.get(0)).containsExactly(0, 40, 1);
                for (int i = 1; i < 4; i++) {
                    assertThat(collapsed.get(i)).containsExactly(i, 0, 0);
                }
            }

            // And the item still sells exactly its 40 units.
            int reserved = 0;
            for (int i = 0; i < 50; i++) {
                ReserveOutcome o = shard.blocking().reserve(ReserveRequest.newBuilder().setTenantId("acme")
                        .setItemId("fold").setQuantity(1).setIdempotencyKey("k" + i).setBuyerId("b" + i)
                        .setRegion("local").build()).getOutcome();
                if (o == ReserveOutcome.RESERVED) {
                    reserved++;
                } else {
                    assertThat(o).isEqualTo(ReserveOutcome.SOLD_OUT);
                }
            }
            assertThat(reserved).isEqualTo(40);
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    private static ReserveRequest keep(String key) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("keep").setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("b-" + key).setRegion("local").build();
    }

    /** A key that the item's open buckets send to bucket 0, starting the search at {@code from}. */
    private static String keyForBucket0(LaneEngine engine, String item, int from) {
        ItemLedger ledger = engine.ledger("acme", item);
        for (int i = from; ; i++) {
            if (ledger.bucketFor("k0-" + i) == 0) {
                return "k0-" + i;
            }
        }
    }

    @Test
    void aCollapseThatGivesUpOnALock_keepsBucket0Cached() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.collapse-below", 8)).start()) {
            shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("keep")
                    .setTotal(40).setHomeRegion("local").setBucketCount(4).build());
            LaneEngine engine = shard.node().engine();
            // The engine learns the item's ledger when a lane first loads one of its buckets.
            assertThat(shard.blocking().reserve(keep("warm")).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            String first = keyForBucket0(engine, "keep", 0);
            assertThat(shard.blocking().reserve(keep(first)).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            long loads = engine.stats().bucketLoads();
            try (Connection other = shard.node().dataSource().getConnection()) {
                try (PreparedStatement lock = other.prepareStatement("SELECT available FROM buckets"
                        + " WHERE tenant_id = 'acme' AND item_id = 'keep' AND bucket_no = 2 FOR UPDATE")) {
                    lock.executeQuery().close();
                }
                ExecutionException gaveUp = catchThrowableOfType(ExecutionException.class,
                        () -> engine.collapse("acme", "keep").get(waitMillis(10), TimeUnit.MILLISECONDS));
                assertThat(((SQLException) gaveUp.getCause()).getSQLState()).isEqualTo("55P03");
                other.rollback();
            }
            // Nothing changed, so bucket 0 answers from its cache: no reload of its row and keys.
            String second = keyForBucket0(engine, "keep", Integer.parseInt(first.substring(3)) + 1);
            assertThat(shard.blocking().reserve(keep(second)).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(engine.stats().bucketLoads()).isEqualTo(loads);
            // The cached key set is still right: the first key again is its hold, not a new one.
            assertThat(shard.blocking().reserve(keep(first)).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
            try (Connection c = shard.node().dataSource().getConnection();
                 PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM holds WHERE tenant_id = 'acme'"
                         + " AND item_id = 'keep'");
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(3);
                c.rollback();
            }
        }
    }
}
