package io.lastunit.shard.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.HoldId;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.common.metrics.Scrape;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A shard node's /metrics, scraped over HTTP while it sells (docs/observability.md): exact counts
 * of holds by event, the lanes' batches and commits, the gRPC calls by method and status, the
 * expiry lag, the pools, and the scheduled invariant check — clean, then drifting after a hold is
 * written behind the lanes' back.
 */
class ShardMetricsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static ReserveRequest reserve(int i) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("hot").setQuantity(2)
                .setIdempotencyKey("k" + i).setBuyerId("b" + i).setRegion("local").build();
    }

    @Test
    void holdsLanesCallsAndInvariant_areExportedWithExactCounts() throws Exception {
        String url = PG.newDatabase("shard_metrics");
        Map<String, Object> props = Map.of("lastunit.shard.id", "m1",
                "lastunit.shard.invariant-check-interval-ms", 100,
                "lastunit.shard.database-sample-interval-ms", 100,
                "lastunit.shard.jdbc-lock-timeout-ms", 500,
                "lastunit.shard.jdbc-read-statement-timeout-ms", 2_000);
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, url, props).start()) {
            String metrics = shard.node().metricsUrl().orElseThrow();
            shard.createItem("acme", "hot", 100);
            List<String> holds = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                ReserveResponse r = shard.blocking().reserve(reserve(i));
                assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
                holds.add(r.getHold().getHoldId());
            }
            assertThat(shard.blocking().reserve(reserve(0)).getOutcome()).as("a retry by key")
                    .isEqualTo(ReserveOutcome.RESERVED);
            for (int i = 0; i < 5; i++) {
                shard.blocking().confirm(ConfirmRequest.newBuilder().setHoldId(holds.get(i)).setOrderRef("o" + i).build());
            }
            for (int i = 5; i < 8; i++) {
                shard.blocking().release(ReleaseRequest.newBuilder().setHoldId(holds.get(i)).build());
            }
            // Two holds past their expiry by the database's clock, then swept.
            try (Connection c = shard.node().dataSource().getConnection();
                 PreparedStatement ps = c.prepareStatement(
                         "UPDATE holds SET expires_at = now() - interval '2 seconds' WHERE hold_id = ?")) {
                for (int i = 8; i < 10; i++) {
                    ps.setObject(1, HoldId.decode(holds.get(i), "x").uuid());
                    assertThat(ps.executeUpdate()).isEqualTo(1);
                }
                c.commit();
            }
            int swept = 0;
            for (int b = 0; b < 8 && swept < 2; b++) {
                swept += shard.node().engine().sweep("acme", "hot", b)
                        .get(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS);
            }
            assertThat(swept).isEqualTo(2);
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(20))).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.of(metrics).sum("lastunit_invariant_checks_total", "result", "ok") >= 1
                            && Scrape.of(metrics).value("lastunit_holds_held") == 10);

            Scrape s = Scrape.of(metrics);
            assertThat(s.value("lastunit_holds_total", "event", "created")).isEqualTo(20);
            assertThat(s.value("lastunit_hold_units_total", "event", "created")).isEqualTo(40);
            assertThat(s.value("lastunit_holds_total", "event", "confirmed")).isEqualTo(5);
            assertThat(s.value("lastunit_holds_total", "event", "released")).isEqualTo(3);
            assertThat(s.value("lastunit_holds_total", "event", "expired")).isEqualTo(2);
            assertThat(s.value("lastunit_hold_units_total", "event", "expired")).isEqualTo(4);
            assertThat(s.value("lastunit_hold_expiry_lag_seconds_count")).isEqualTo(2);
            assertThat(s.value("lastunit_hold_expiry_lag_seconds_sum")).isGreaterThanOrEqualTo(4.0);
            assertThat(s.value("lastunit_holds_held")).isEqualTo(10);
            assertThat(s.value("lastunit_held_units")).isEqualTo(20);
            // Every batch took at least one operation, and every commit was timed.
            double batches = s.value("lastunit_lane_batches_total");
            assertThat(batches).isPositive();
            assertThat(s.value("lastunit_lane_batch_size_operations_count")).isEqualTo(batches);
            assertThat(s.value("lastunit_lane_commit_seconds_count")).isEqualTo(s.value("lastunit_lane_commits_total"));
            assertThat(s.all("lastunit_lane_queue_depth")).hasSize(shard.node().engine().laneCount());
            assertThat(s.value("lastunit_lane_refusals_total", "reason", "QUEUE_FULL")).isZero();
            assertThat(s.value("lastunit_db_writes_paused")).isZero();
            // gRPC, per method and status, from Micrometer's interceptor.
            assertThat(s.sum("lastunit_grpc_server_processing_duration_seconds_count", "method", "Reserve",
                    "statusCode", "OK")).isEqualTo(21);
            assertThat(s.sum("lastunit_grpc_server_processing_duration_seconds_count", "method", "Confirm")).isEqualTo(5);
            assertThat(s.all("lastunit_grpc_server_processing_duration_seconds_bucket", "method", "Reserve"))
                    .anySatisfy(b -> assertThat(b.labels()).containsEntry("le", "0.1"));
            assertThat(s.names()).contains("hikaricp_connections_active", "jvm_memory_used_bytes",
                    "lastunit_db_lock_waits", "lastunit_db_transaction_oldest_seconds");
            assertThat(s.all("hikaricp_connections_max").stream().map(x -> x.labels().get("pool")))
                    .containsExactlyInAnyOrder("shard-m1", "shard-m1-reads");
            assertThat(s.value("lastunit_invariant_drift_units", "scope", "shard")).isZero();
            assertThat(s.value("lastunit_invariant_drift_streak", "scope", "shard")).isZero();
            assertThat(s.value("lastunit_invariant_check_failed", "scope", "shard")).isZero();
            assertThat(s.value("lastunit_invariant_checks_total", "scope", "shard", "result", "drift")).isZero();

            // A hold written behind the lanes' back: the bucket's held units no longer add up.
            try (Connection c = shard.node().dataSource().getConnection();
                 PreparedStatement ps = c.prepareStatement("INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no,"
                         + " region, qty, buyer_id, idempotency_key, request_fingerprint, state, expires_at, created_at)"
                         + " SELECT gen_random_uuid(), tenant_id, item_id, bucket_no, region, 3, 'intruder', 'intruder-k',"
                         + " 'x', 'HELD', now() + interval '1 hour', now() FROM holds WHERE hold_id = ?")) {
                ps.setObject(1, HoldId.decode(holds.get(10), "x").uuid());
                assertThat(ps.executeUpdate()).isEqualTo(1);
                c.commit();
            }
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(20))).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.of(metrics).value("lastunit_invariant_drift_streak", "scope", "shard") >= 2);
            Scrape d = Scrape.of(metrics);
            assertThat(d.value("lastunit_invariant_drift_units", "scope", "shard")).isPositive();
            assertThat(d.value("lastunit_invariant_drifting_items", "scope", "shard")).isEqualTo(1);
            assertThat(d.value("lastunit_invariant_check_failed", "scope", "shard")).isZero();
            assertThat(d.value("lastunit_invariant_checks_total", "scope", "shard", "result", "drift")).isGreaterThanOrEqualTo(2);

            // A check that cannot run (its read waits for a lock past the lock timeout) is exported
            // as failed, with the last drift it did see kept apart; then it runs again.
            try (Connection locker = java.sql.DriverManager.getConnection(url, PG.user(), PG.password())) {
                locker.setAutoCommit(false);
                locker.createStatement().execute("LOCK TABLE holds IN ACCESS EXCLUSIVE MODE");
                await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).pollInterval(Duration.ofMillis(100))
                        .until(() -> Scrape.of(metrics).value("lastunit_invariant_check_failed", "scope", "shard") == 1);
                Scrape f = Scrape.of(metrics);
                assertThat(f.value("lastunit_invariant_checks_total", "scope", "shard", "result", "failed")).isPositive();
                assertThat(f.value("lastunit_invariant_drift_units", "scope", "shard")).as("the last drift seen")
                        .isPositive();
                locker.rollback();
            }
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(30))).pollInterval(Duration.ofMillis(100))
                    .until(() -> Scrape.of(metrics).value("lastunit_invariant_check_failed", "scope", "shard") == 0);
        }
    }

    @Test
    void metricsOff_opensNoPort() throws Exception {
        String url = PG.newDatabase("shard_metrics_off");
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, url, Map.of("lastunit.shard.id", "m2",
                "lastunit.shard.metrics-enabled", false)).start()) {
            assertThat(shard.node().metricsUrl()).isEmpty();
            assertThat(shard.node().meters()).isNull();
            shard.createItem("acme", "hot", 2);
            assertThat(shard.blocking().reserve(reserve(1)).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
    }
}
