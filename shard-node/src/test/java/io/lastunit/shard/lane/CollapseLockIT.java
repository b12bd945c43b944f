package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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
 * {@link Lane#COLLAPSE_LOCK_TIMEOUT_MILLIS}, changes nothing, and collapses on a later try.
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
                        () -> engine.collapse("acme", "fold").get(10, TimeUnit.SECONDS));
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
                assertThat(engine.collapse("acme", "fold").get(30, TimeUnit.SECONDS)).isTrue();
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
}
