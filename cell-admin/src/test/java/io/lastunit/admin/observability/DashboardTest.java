package io.lastunit.admin.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped Grafana dashboard (observability/grafana/lastunit-dashboard.json): kept in one
 * canonical form so its diffs stay readable, every panel's PromQL valid by promtool, and every
 * meter it names documented in docs/observability.md (PlatformMetricsCatalogIT checks that a
 * running platform exports them).
 */
public class DashboardTest {
    static final Path FILE = Path.of("..", "observability", "grafana", "lastunit-dashboard.json");
    /** Names of our meters and HikariCP's in a PromQL expression (recording rules have a colon). */
    static final Pattern METRIC = Pattern.compile("\\b((?:lastunit|hikaricp)_[a-z_]+)\\b");

    static JsonObject dashboard() throws Exception {
        return JsonParser.parseString(Files.readString(FILE)).getAsJsonObject();
    }

    /** Every expression of every panel. */
    public static List<String> expressions() throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonElement p : dashboard().getAsJsonArray("panels")) {
            JsonObject panel = p.getAsJsonObject();
            if (panel.has("targets")) {
                for (JsonElement t : panel.getAsJsonArray("targets")) {
                    out.add(t.getAsJsonObject().get("expr").getAsString());
                }
            }
        }
        return out;
    }

    /** The meters {@code expressions} name, by their base names (a histogram's, not its _bucket). */
    public static Set<String> metersNamed(List<String> expressions) {
        Set<String> names = new TreeSet<>();
        for (String e : expressions) {
            Matcher m = METRIC.matcher(e);
            while (m.find()) {
                names.add(m.group(1).replaceAll("_(bucket|count|sum)$", ""));
            }
        }
        return names;
    }

    @Test
    void isCanonical_twoSpaceJsonAsGsonPrintsIt() throws Exception {
        String text = Files.readString(FILE);
        String canonical = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create()
                .toJson(JsonParser.parseString(text)) + "\n";
        assertThat(text).as("the dashboard in canonical form (re-print it with Gson's pretty printer)")
                .isEqualTo(canonical);
    }

    @Test
    void everyPanelHasATitleAQueryAndAPlaceOnTheGrid() throws Exception {
        JsonObject d = dashboard();
        assertThat(d.get("uid").getAsString()).isEqualTo("lastunit");
        int queries = 0;
        for (JsonElement p : d.getAsJsonArray("panels")) {
            JsonObject panel = p.getAsJsonObject();
            assertThat(panel.get("title").getAsString()).isNotBlank();
            JsonObject grid = panel.getAsJsonObject("gridPos");
            assertThat(grid.get("x").getAsInt() + grid.get("w").getAsInt()).as(panel.get("title").getAsString())
                    .isLessThanOrEqualTo(24);
            if (!panel.get("type").getAsString().equals("row")) {
                assertThat(panel.getAsJsonArray("targets")).as(panel.get("title").getAsString()).isNotEmpty();
                queries += panel.getAsJsonArray("targets").size();
            }
        }
        assertThat(queries).isGreaterThanOrEqualTo(20);
        assertThat(String.join("\n", expressions())).contains("lastunit_holds_total", "lastunit_router_sheds_total",
                "lastunit_lane_commit_seconds_bucket", "lastunit_db_lock_waits", "lastunit_invariant_drift_units",
                "lastunit_hold_expiry_lag_seconds_bucket", "$cell");
    }

    @Test
    void everyExpressionIsValidPromQl(@TempDir Path dir) throws Exception {
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        int i = 0;
        for (String e : expressions()) {
            String concrete = e.replace("$__rate_interval", "1m").replace("$cell", ".*");
            rules.append("      - record: dashboard:expr").append(i++).append("\n        expr: '")
                    .append(concrete.replace("'", "''")).append("'\n");
        }
        Path file = dir.resolve("dashboard-rules.yml");
        Files.writeString(file, rules);
        assertThat(AlertRulesTest.promtoolIn(dir, "check", "rules", file.getFileName().toString())).contains("SUCCESS");
    }

    @Test
    void everyMeterItNames_isDocumented() throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "observability.md"));
        for (String meter : metersNamed(expressions())) {
            String base = meter.replaceAll("_total$", "");
            assertThat(doc).as("docs/observability.md documents %s", meter).containsPattern(
                    Pattern.quote(meter) + "|" + Pattern.quote(base) + "|" + Pattern.quote(meter.replaceAll("_[a-z]+$", "_*")));
        }
    }
}
