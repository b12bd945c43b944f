package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.balancer.v1.PullRequest;
import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.balancer.transfer.TransferFaults;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.common.metrics.Scrape;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A balancer's /metrics, scraped over HTTP (docs/observability.md, "Balancer"): the leader gauge
 * on the leader and on a standby, a pull's transfer counted by reason and outcome with the pull's
 * latency, and the cross-shard invariant check per cell — clean, drifting once units are written
 * into a shard's base behind the protocol's back, then "check failed" once a shard of the cell is
 * down (never a silent 0). The balancing loop and the scheduled check are pushed
 * out of the way (an hour apart): every count here comes from what the test did.
 */
class BalancerMetricsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static Map<String, Long> quotas(long eu, long us) {
        Map<String, Long> q = new LinkedHashMap<>();
        q.put("eu", eu);
        q.put("us", us);
        return q;
    }

    @Test
    void leaderTransfersPullsAndTheCrossShardCheck_areExportedWithExactCounts() throws Exception {
        try (BalancerCluster cluster = new BalancerCluster(PG, List.of("eu", "us")).start()) {
            BalancerNode leader = cluster.startBalancer(b -> {
                b.interval = Duration.ofHours(1);
                b.invariantInterval = Duration.ofHours(1);
            }, TransferFaults.NONE);
            Awaits.until("balancer leads", leader::isLeader);
            BalancerNode standby = cluster.startBalancer(b -> {
                b.interval = Duration.ofHours(1);
                b.invariantInterval = Duration.ofHours(1);
            }, TransferFaults.NONE);
            String leaderUrl = leader.metricsUrl().orElseThrow();
            String standbyUrl = standby.metricsUrl().orElseThrow();

            assertThat(Scrape.of(leaderUrl).value("lastunit_balancer_leader")).isEqualTo(1);
            assertThat(Scrape.of(standbyUrl).value("lastunit_balancer_leader")).isZero();
            assertThat(Scrape.of(leaderUrl).value("lastunit_zookeeper_connected")).isEqualTo(1);

            cluster.createItem("acme", "dry", quotas(500, 0));
            PullResponse r = cluster.balancerApi(leader).pull(PullRequest.newBuilder().setTenantId("acme")
                    .setItemId("dry").setRegion("us").setQuantity(3).build());
            assertThat(r.getMoved()).isPositive();

            Scrape s = Scrape.of(leaderUrl);
            assertThat(s.value("lastunit_balancer_transfers_total", "reason", "pull", "outcome", "done")).isEqualTo(1);
            assertThat(s.sum("lastunit_balancer_transfers_total")).as("every transfer, any reason or outcome")
                    .isEqualTo(1);
            assertThat(s.value("lastunit_balancer_transfer_units_total", "reason", "pull")).isEqualTo(r.getMoved());
            assertThat(s.value("lastunit_balancer_transfers_pending")).isZero();
            assertThat(s.value("lastunit_balancer_pulls_total", "outcome", "moved")).isEqualTo(1);
            assertThat(s.value("lastunit_balancer_pulls_total", "outcome", "refused")).isZero();
            assertThat(s.value("lastunit_balancer_pull_seconds_count")).isEqualTo(1);
            assertThat(s.all("lastunit_balancer_pull_seconds_bucket"))
                    .anySatisfy(b -> assertThat(b.labels()).containsEntry("le", "0.1"));
            assertThat(s.sum("lastunit_grpc_server_processing_duration_seconds_count", "method", "Pull",
                    "statusCode", "OK")).isEqualTo(1);
            // The transfer's three steps went out through the client interceptor, one call each.
            assertThat(s.sum("lastunit_grpc_client_processing_duration_seconds_count", "method", "TransferOut",
                    "statusCode", "OK")).isEqualTo(1);
            assertThat(s.sum("lastunit_grpc_client_processing_duration_seconds_count", "method", "TransferIn",
                    "statusCode", "OK")).isEqualTo(1);
            // The standby was asked nothing and moved nothing.
            assertThat(Scrape.of(standbyUrl).sum("lastunit_balancer_transfers_total")).isZero();

            leader.checkInvariantsNow();
            Scrape c = Scrape.of(leaderUrl);
            String[] cell = {"scope", "cross_shard", "cell", BalancerCluster.CELL};
            assertThat(c.value("lastunit_invariant_checks_total", with(cell, "result", "ok"))).isEqualTo(1);
            assertThat(c.value("lastunit_invariant_checks_total", with(cell, "result", "drift"))).isZero();
            assertThat(c.value("lastunit_invariant_checks_total", with(cell, "result", "failed"))).isZero();
            assertThat(c.value("lastunit_invariant_drift_units", cell)).isZero();
            assertThat(c.value("lastunit_invariant_drifting_items", cell)).isZero();
            assertThat(c.value("lastunit_invariant_drift_streak", cell)).isZero();
            assertThat(c.value("lastunit_invariant_check_failed", cell)).isZero();
            assertThat(c.value("lastunit_invariant_last_check_timestamp_seconds", cell)).isPositive();

            // Five units written into eu's base behind the transfer protocol's back: a drift of the cell.
            try (java.sql.Connection db = cluster.connect("eu"); java.sql.Statement st = db.createStatement()) {
                db.setAutoCommit(true);
                assertThat(st.executeUpdate("UPDATE items SET total = total + 5 WHERE tenant_id = 'acme'"
                        + " AND item_id = 'dry'")).isEqualTo(1);
            }
            leader.checkInvariantsNow();
            Scrape d = Scrape.of(leaderUrl);
            assertThat(d.value("lastunit_invariant_checks_total", with(cell, "result", "drift"))).isEqualTo(1);
            assertThat(d.value("lastunit_invariant_drift_units", cell)).isEqualTo(5);
            assertThat(d.value("lastunit_invariant_drifting_items", cell)).isEqualTo(1);
            assertThat(d.value("lastunit_invariant_drift_streak", cell)).isEqualTo(1);
            assertThat(d.value("lastunit_invariant_check_failed", cell)).isZero();
            leader.checkInvariantsNow();
            d = Scrape.of(leaderUrl);
            assertThat(d.value("lastunit_invariant_checks_total", with(cell, "result", "drift"))).isEqualTo(2);
            assertThat(d.value("lastunit_invariant_drift_streak", cell)).as("the alert's two in a row").isEqualTo(2);
            double checkedAt = d.value("lastunit_invariant_last_check_timestamp_seconds", cell);

            // A shard of the cell down: the check cannot run, and says so.
            cluster.stopShard("us");
            leader.checkInvariantsNow();
            Scrape f = Scrape.of(leaderUrl);
            assertThat(f.value("lastunit_invariant_check_failed", cell)).isEqualTo(1);
            assertThat(f.value("lastunit_invariant_checks_total", with(cell, "result", "failed"))).isEqualTo(1);
            assertThat(f.value("lastunit_invariant_checks_total", with(cell, "result", "ok"))).isEqualTo(1);
            assertThat(f.value("lastunit_invariant_last_check_timestamp_seconds", cell))
                    .as("the last check that ran").isEqualTo(checkedAt);
            assertThat(f.value("lastunit_invariant_drift_units", cell)).as("of the last check that ran").isEqualTo(5);
            assertThat(f.value("lastunit_invariant_drift_streak", cell)).as("kept by a check that could not run")
                    .isEqualTo(2);
            assertThat(Scrape.of(standbyUrl).all("lastunit_invariant_checks_total"))
                    .as("a standby checks nothing").isEmpty();
        }
    }

    @Test
    void metricsOff_opensNoPort() throws Exception {
        try (BalancerCluster cluster = new BalancerCluster(PG, List.of("eu")).start()) {
            BalancerNode node = cluster.startBalancer(b -> b.metrics = io.lastunit.common.metrics.MetricsConfig.OFF,
                    TransferFaults.NONE);
            Awaits.until("balancer leads", node::isLeader);
            assertThat(node.metricsUrl()).isEmpty();
            assertThat(node.meters()).isNull();
        }
    }

    private static String[] with(String[] labels, String... more) {
        String[] all = java.util.Arrays.copyOf(labels, labels.length + more.length);
        System.arraycopy(more, 0, all, labels.length, more.length);
        return all;
    }
}
