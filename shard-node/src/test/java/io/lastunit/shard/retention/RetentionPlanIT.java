package io.lastunit.shard.retention;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention's statements find their rows by index, never by reading the whole table: a batch's
 * delete reads the tenant's oldest ended holds through {@code holds_ended} (and its DONE OUT records
 * through {@code transfers_out_done}), the tenants with rows due are a loose scan of those indexes,
 * and a batch's guard probes {@code items_fenced}. Checked on the plans a prepared statement settles
 * on after ten executions (as in {@code BucketKeysPlanIT}), on the shard's own connection, with a
 * table where most holds are live or recent and one tenant has a backlog; every execution is rolled
 * back.
 */
class RetentionPlanIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String WEEK_MS = "604800000";

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

    @Test
    void retentionsStatements_areIndexProbes_inThePlansTheShardSettlesOn() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start();
             Connection c = shard.node().dataSource().getConnection(); Statement s = c.createStatement()) {
            // 60,000 holds of 20 tenants: a third live, a third ended today, a third (acme's) ended 30 days ago;
            // 20,000 transfer records, a fifth of them DONE OUT records 30 days old.
            s.execute("""
                    INSERT INTO items (tenant_id, item_id, home_region, total, initial_total, per_buyer_limit, hold_ttl_ms,
                                       extend_by_ms, bucket_count)
                    SELECT 't' || g, 'item', 'local', 1000000, 1000000, 0, 600000, 600000, 4 FROM generate_series(0, 19) g""");
            s.execute("""
                    INSERT INTO items (tenant_id, item_id, home_region, total, initial_total, per_buyer_limit, hold_ttl_ms,
                                       extend_by_ms, bucket_count)
                    VALUES ('acme', 'item', 'local', 1000000, 1000000, 0, 600000, 600000, 4)""");
            // Enough items that reading a tenant's items would cost something; none of them fenced.
            s.execute("""
                    INSERT INTO items (tenant_id, item_id, home_region, total, initial_total, per_buyer_limit, hold_ttl_ms,
                                       extend_by_ms, bucket_count)
                    SELECT 'acme', 'i' || g, 'local', 1, 1, 0, 600000, 600000, 1 FROM generate_series(1, 20000) g""");
            s.execute("""
                    INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                       request_fingerprint, state, created_at, expires_at, order_ref, ended_at)
                    SELECT gen_random_uuid(), CASE WHEN g % 3 = 2 THEN 'acme' ELSE 't' || (g % 20) END, 'item', g % 4,
                           'local', 1, 'b' || g, 'k' || g, 'f',
                           CASE WHEN g % 3 = 0 THEN 'HELD' ELSE 'SOLD' END,
                           now() - CASE WHEN g % 3 = 2 THEN interval '30 days' ELSE interval '0' END,
                           now() + interval '10 minutes', 'o' || g,
                           CASE g % 3 WHEN 0 THEN NULL WHEN 1 THEN now() ELSE now() - interval '30 days' END
                      FROM generate_series(1, 60000) g""");
            s.execute("""
                    INSERT INTO transfers (transfer_id, direction, tenant_id, item_id, peer, qty, state, created_at, done_at)
                    SELECT 'x' || g, CASE WHEN g % 2 = 0 THEN 'IN' ELSE 'OUT' END,
                           CASE WHEN g % 5 = 1 THEN 'acme' ELSE 't' || (g % 20) END, 'item', 'peer', 1,
                           CASE WHEN g % 10 = 3 THEN 'PENDING' ELSE 'DONE' END,
                           now() - interval '30 days',
                           CASE WHEN g % 10 = 3 THEN NULL WHEN g % 5 = 1 THEN now() - interval '30 days' ELSE now() END
                      FROM generate_series(1, 20000) g""");
            c.commit();
            s.execute("ANALYZE items");
            s.execute("ANALYZE holds");
            s.execute("ANALYZE transfers");
            c.commit();

            String retireHolds = plan(s, "retire_holds", "text, bigint, int", RetiredRows.RETIRE_HOLDS,
                    "'acme', " + WEEK_MS + ", 1000");
            assertThat(retireHolds).contains("holds_ended").doesNotContain("Seq Scan on holds");
            String retireTransfers = plan(s, "retire_transfers", "text, bigint, int", RetiredRows.RETIRE_TRANSFERS,
                    "'acme', " + WEEK_MS + ", 1000");
            assertThat(retireTransfers).contains("transfers_out_done").doesNotContain("Seq Scan on transfers");
            String holdTenants = plan(s, "hold_tenants", "text, text, text, bigint, int", RetiredRows.HOLDS_DUE_TENANTS,
                    "'', NULL, NULL, " + WEEK_MS + ", 100");
            assertThat(holdTenants).contains("holds_ended").doesNotContain("Seq Scan on holds");
            String transferTenants = plan(s, "transfer_tenants", "text, text, text, bigint, int",
                    RetiredRows.TRANSFERS_DUE_TENANTS, "'', NULL, NULL, " + WEEK_MS + ", 100");
            assertThat(transferTenants).contains("transfers_out_done").doesNotContain("Seq Scan on transfers");
            String guard = plan(s, "guard", "text, text, int, text, text", RetiredRows.GUARD,
                    "'30s', '1s', 1, 'acme', 'acme'");
            assertThat(guard).contains("items_fenced").doesNotContain("Seq Scan on items");
            c.rollback();
        }
    }
}
