package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.ManagedChannel;
import io.lastunit.admin.observability.AlertRulesTest;
import io.lastunit.admin.observability.DashboardTest;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.admin.platform.LocalPrometheus;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.common.metrics.Scrape;
import io.lastunit.shard.ShardNode;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.awaitility.Awaitility.await;

/**
 * The shipped rules and dashboard against a running platform and a real Prometheus (Debian's,
 * on 127.0.0.1): every meter the rules and the dashboard name is exported by some service of a
 * local platform after a sale; Prometheus, scraping the platform with the shipped rules loaded,
 * has the sale's counters; and a drift written into a shard's database behind the lanes' back
 * makes LastunitInvariantDrift fire.
 */
class PrometheusPlatformIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();
    /** Meters Prometheus makes itself, or that only exist where the alert says something is wrong. */
    static final Set<String> NOT_FROM_SERVICES = Set.of("up");

    @TempDir
    Path dir;

    /** Every metric the rules and the dashboard name (base names: a histogram's without _bucket). */
    static Set<String> named() throws Exception {
        Set<String> names = new TreeSet<>(DashboardTest.metersNamed(DashboardTest.expressions()));
        String rules = Files.readString(AlertRulesTest.DIR.resolve("lastunit-rules.yml"));
        Matcher m = Pattern.compile("\\b((?:lastunit|hikaricp)_[a-z_]+|up)\\b").matcher(rules);
        while (m.find()) {
            names.add(m.group(1).replaceAll("_(bucket|count|sum)$", ""));
        }
        return names;
    }

    private static double scalar(LocalPrometheus p, String promql) throws Exception {
        JsonArray result = JsonParser.parseString(p.query(promql)).getAsJsonObject().getAsJsonObject("data")
                .getAsJsonArray("result");
        return result.isEmpty() ? Double.NaN : result.get(0).getAsJsonObject().getAsJsonArray("value").get(1).getAsDouble();
    }

    private static List<String> firing(LocalPrometheus p) throws Exception {
        List<String> names = new ArrayList<>();
        for (JsonElement a : JsonParser.parseString(p.get("/api/v1/alerts")).getAsJsonObject().getAsJsonObject("data")
                .getAsJsonArray("alerts")) {
            JsonObject alert = a.getAsJsonObject();
            if (alert.get("state").getAsString().equals("firing")) {
                names.add(alert.getAsJsonObject("labels").get("alertname").getAsString());
            }
        }
        return names;
    }

    @Test
    void theRulesAndDashboard_matchWhatThePlatformExports_andPrometheusAlertsOnDrift() throws Exception {
        try (ClusterClients clients = new ClusterClients(PG);
             LocalPlatform platform = LocalPlatform.builder(clients.databases())
                     .cell("shared", List.of("local"), 2)
                     .shardSetting("lastunit.shard.invariant-check-interval-ms", 300)
                     .shardSetting("lastunit.shard.database-sample-interval-ms", 300)
                     .start()) {
            ManagedChannel router = clients.routerChannel(platform);
            InventoryServiceGrpc.InventoryServiceBlockingStub api = ClusterClients.blocking(router, LocalPlatform.DEV_TOKEN);
            ClusterClients.createItem(api, CreateItemRequest.newBuilder().setTenantId("acme").setItemId("tee")
                    .setTotal(20).setHomeRegion("local").build());
            for (int i = 0; i < 25; i++) {
                ReserveOutcome o = api.withDeadlineAfter(ClusterClients.callDeadlineMillis(), TimeUnit.MILLISECONDS)
                        .reserve(ReserveRequest.newBuilder().setTenantId("acme").setItemId("tee").setQuantity(1)
                                .setIdempotencyKey("k" + i).setBuyerId("b" + i).setRegion("local").build())
                        .getOutcome();
                assertThat(o).isEqualTo(i < 20 ? ReserveOutcome.RESERVED : ReserveOutcome.SOLD_OUT);
            }

            // Every meter the rules and the dashboard name is exported by some service.
            Map<String, String> urls = platform.metricsUrls();
            Set<String> exported = new TreeSet<>();
            for (String url : urls.values()) {
                for (String n : Scrape.of(url).names()) {
                    exported.add(n.replaceAll("_(bucket|count|sum|max)$", ""));
                }
            }
            for (String meter : named()) {
                if (!NOT_FROM_SERVICES.contains(meter)) {
                    assertThat(exported).as("a service exports %s, which the rules or the dashboard name", meter)
                            .contains(meter);
                }
            }

            // ./lastunit top, one screen: the shards found through ZooKeeper, the router by --metrics.
            java.io.StringWriter topOut = new java.io.StringWriter();
            picocli.CommandLine cli = io.lastunit.admin.cli.LastunitCli.commandLine();
            cli.setOut(new java.io.PrintWriter(topOut, true));
            cli.setErr(new java.io.PrintWriter(new java.io.StringWriter(), true));
            assertThat(cli.execute("top", "--zookeeper", platform.zookeeper(), "--metrics", urls.get("router"),
                    "--once", "--interval", "1")).isZero();
            assertThat(topOut.toString()).startsWith("lastunit top — 3 services")
                    .contains("shared-local-1", "shared-local-2", "shed cache/s").doesNotContain("down");

            // A real Prometheus, scraping every service with the shipped rules.
            // A real Prometheus as './lastunit up --prometheus' starts it: the shipped rules, from the jar.
            assertThat(LocalPrometheus.shippedRules()).as("the jar's rules are the repository's")
                    .isEqualTo(Files.readString(AlertRulesTest.DIR.resolve("lastunit-rules.yml")));
            Path prometheusFiles;
            try (LocalPrometheus prometheus = LocalPrometheus.start(dir, 0, LocalPrometheus.jobs(urls),
                    Duration.ofSeconds(1), TestTimeouts.scaled(Duration.ofSeconds(60)))) {
                prometheusFiles = prometheus.directory();
                await().atMost(TestTimeouts.scaled(Duration.ofSeconds(60))).pollInterval(Duration.ofMillis(500))
                        .until(() -> scalar(prometheus, "sum(lastunit_holds_total{event=\"created\"})") == 20
                                && scalar(prometheus, "sum(lastunit_router_reserves_total{outcome=\"SOLD_OUT\"})") == 5
                                && scalar(prometheus, "count(up{job=\"lastunit-shard\"} == 1)") == 2);
                assertThat(prometheus.query("up == 1")).as("every service scraped, by the job names the rules use")
                        .contains("lastunit-router", "lastunit-shard", "lastunit-balancer");
                assertThat(firing(prometheus)).as("nothing wrong yet").doesNotContain("LastunitInvariantDrift");

                // Held units taken back behind the lanes' back: the bucket still adds up, its holds no longer do.
                int written = 0;
                for (String id : platform.shards().keySet()) {
                    ShardNode node = platform.shard(id);
                    try (Connection c = node.dataSource().getConnection();
                         PreparedStatement ps = c.prepareStatement("UPDATE buckets SET held = held - 1,"
                                 + " available = available + 1 WHERE tenant_id = 'acme' AND held > 0")) {
                        written += ps.executeUpdate();
                        c.commit();
                    }
                }
                assertThat(written).as("a bucket with held units took the drift").isPositive();
                await().atMost(TestTimeouts.scaled(Duration.ofSeconds(60))).pollInterval(Duration.ofMillis(500))
                        .until(() -> firing(prometheus).contains("LastunitInvariantDrift"));
                assertThat(scalar(prometheus, "max(lastunit_invariant_drift_units{scope=\"shard\"})")).isPositive();
            }
            assertThat(prometheusFiles).as("its files are deleted when it stops").doesNotExist();
        }
    }
}
