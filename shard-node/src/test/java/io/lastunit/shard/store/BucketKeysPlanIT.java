package io.lastunit.shard.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A lane that meets a bucket it has not cached reads the keys placed in it, and a collapsed
 * item's bucket 0 reads those of its closed siblings. Both must be index probes on
 * {@code holds_bucket_state}: as sequential scans of the whole holds table they took about 40 ms at
 * 400,000 holds, on the lane's thread, at the first Reserve of every new item (seen at the start
 * of the load generator's measured sale). The plans checked are those a prepared statement
 * settles on after ten executions, on the shard's own connections, on a table where the tenant's
 * other holds make every other index as unselective as a scan.
 *
 * <p>The shard keeps PostgreSQL's default {@code plan_cache_mode} ({@code auto}): with
 * {@code force_generic_plan} (tried to save the planner's 9% of a lane backend's CPU) the generic
 * plan of these reads is a sequential scan when the shard sells few distinct items, which this
 * test then fails on.
 */
class BucketKeysPlanIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    /** The statement with JDBC's {@code ?} numbered as {@code $1, $2, ...} for PREPARE. */
    private static String numbered(String sql) {
        StringBuilder out = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            if (ch == '?') {
                out.append('$').append(++n);
            } else {
                out.append(ch);
            }
        }
        return out.toString();
    }

    private static String plan(Statement s, String name, String types, String sql, String args) throws Exception {
        s.execute("PREPARE " + name + "(" + types + ") AS " + numbered(sql));
        // Past its fifth execution PostgreSQL may switch a prepared statement to its generic plan:
        // check the plan the statement settles on, not the first custom one.
        for (int i = 0; i < 10; i++) {
            s.executeQuery("EXECUTE " + name + "(" + args + ")").close();
        }
        StringBuilder plan = new StringBuilder();
        try (ResultSet rs = s.executeQuery("EXPLAIN EXECUTE " + name + "(" + args + ")")) {
            while (rs.next()) {
                plan.append(rs.getString(1)).append('\n');
            }
        }
        s.execute("DEALLOCATE " + name);
        return plan.toString();
    }

    /**
     * Also the reads that the partial index {@code holds_bucket_due} (state = 'HELD') served
     * until V3 replaced it: a bucket's earliest HELD expiry and a sweep's due holds.
     */
    @Test
    void bucketKeyLoads_areIndexProbes_inThePlansTheShardSettlesOn() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("new")
                    .setTotal(10).setHomeRegion("local").setBucketCount(4).build());
            try (Connection c = shard.node().dataSource().getConnection(); Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery("SHOW plan_cache_mode")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo("auto");
                }
                // 60,000 sold holds of three earlier sales of the same tenant, in every bucket number:
                // few distinct items, as on a shard that sells a handful of hot items, so a plan made
                // without the values would expect a twelfth of the table and scan it.
                s.execute("""
                        INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                           request_fingerprint, state, created_at, expires_at, order_ref, ended_at)
                        SELECT gen_random_uuid(), 'acme', 'old-' || (g % 3), g % 4, 'local', 1, 'b' || g, 'k' || g,
                               'f', 'SOLD', now(), now(), 'o' || g, now()
                          FROM generate_series(1, 60000) g""");
                c.commit();
                s.execute("ANALYZE holds");
                c.commit();

                String bucketKeys = plan(s, "bucket_keys", "text, text, int, int", LaneStore.BUCKET_KEYS,
                        "'acme', 'new', 0, 100001");
                assertThat(bucketKeys).contains("holds_bucket_state").contains("item_id").doesNotContain("Seq Scan");
                String siblings = plan(s, "sibling_keys", "text, text, int", ItemStore.KEYS_OUTSIDE_BUCKET0,
                        "'acme', 'new', 100001");
                assertThat(siblings).contains("holds_bucket_state").contains("item_id").doesNotContain("Seq Scan");
                // What the partial index holds_bucket_due served before V3 replaced it: either index of a
                // bucket's HELD holds (holds_live, V10, is keyed the same way), never a scan.
                String next = plan(s, "next_due", "text, text, int", LaneStore.NEXT_DUE, "'acme', 'new', 0");
                assertThat(next).containsAnyOf("holds_bucket_state", "holds_live").contains("item_id")
                        .doesNotContain("Seq Scan");
                String due = plan(s, "due", "text, text, int, int", LaneStore.DUE, "'acme', 'new', 0, 1000");
                assertThat(due).containsAnyOf("holds_bucket_state", "holds_live").contains("item_id")
                        .doesNotContain("Seq Scan");
                c.rollback();
            }

            // The lane places a hold; the key load finds exactly its key in its bucket, none in the others.
            assertThat(shard.blocking().reserve(ReserveRequest.newBuilder().setTenantId("acme").setItemId("new")
                    .setBuyerId("ann").setQuantity(1).setIdempotencyKey("ann-1").setRegion("local").build())
                    .getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            try (Connection c = shard.node().dataSource().getConnection(); Statement s = c.createStatement()) {
                int bucket;
                try (ResultSet rs = s.executeQuery("SELECT bucket_no FROM holds WHERE tenant_id = 'acme'"
                        + " AND idempotency_key = 'ann-1'")) {
                    assertThat(rs.next()).isTrue();
                    bucket = rs.getInt(1);
                }
                LaneStore store = new LaneStore();
                for (int b = 0; b < 4; b++) {
                    if (b == bucket) {
                        assertThat(store.bucketKeys(c, "acme", "new", b, 10)).containsExactly("ann-1");
                    } else {
                        assertThat(store.bucketKeys(c, "acme", "new", b, 10)).isEmpty();
                    }
                }
                c.rollback();
            }
        }
    }
}
