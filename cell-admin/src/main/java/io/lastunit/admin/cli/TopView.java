package io.lastunit.admin.cli;

import io.lastunit.common.metrics.Scrape;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@code ./lastunit top} shows, from two scrapes of every service a few seconds apart: pure
 * (the command does the scraping and the terminal). Rates are the counters' increase over the
 * interval; a counter that went down (a restarted service) counts from zero. Quantiles come from
 * the histograms' buckets over the interval, as Prometheus's {@code histogram_quantile} does.
 */
public final class TopView {
    private TopView() {
    }

    /** One service's two scrapes: {@code before} null on the first look. */
    public record Source(String name, Scrape before, Scrape now) {
    }

    /** The screen: a header line, the shards' table, the routers' table. */
    public static List<String> render(List<Source> sources, double seconds) {
        List<String> out = new ArrayList<>();
        Table shards = new Table("shard", "cell", "#sales/s", "#sold/s", "#expired/s", "#held", "#batch", "#queue",
                "#commit p99", "#refused/s", "drift", "writes");
        Table routers = new Table("router", "#reserves/s", "#sold-out/s", "#errors/s", "#shed cache/s", "#shed rate/s",
                "#shed in-flight/s", "#p99");
        double sales = 0;
        long drift = 0;
        int down = 0;
        for (Source s : sources) {
            if (s.now() == null) {
                down++;
                shards.row(s.name(), "-", "down", "", "", "", "", "", "", "", "", "");
                continue;
            }
            Scrape n = s.now();
            Scrape b = s.before();
            if (!n.all("lastunit_lane_batches_total").isEmpty()) {
                double created = rate(b, n, seconds, "lastunit_holds_total", "event", "created");
                sales += created;
                long d = (long) n.sum("lastunit_invariant_drift_units");
                drift += d;
                double batches = increase(b, n, "lastunit_lane_batch_size_operations_count");
                double ops = increase(b, n, "lastunit_lane_batch_size_operations_sum");
                shards.row(shardName(s), label(n, "lastunit_shard_info", "cell"),
                        fmt(created), fmt(rate(b, n, seconds, "lastunit_holds_total", "event", "confirmed")),
                        fmt(rate(b, n, seconds, "lastunit_holds_total", "event", "expired")),
                        (long) n.sum("lastunit_holds_held"), batches == 0 ? "-" : fmt(ops / batches),
                        (long) max(n, "lastunit_lane_queue_depth"),
                        ms(quantile(b, n, "lastunit_lane_commit_seconds_bucket", 0.99)),
                        fmt(rate(b, n, seconds, "lastunit_lane_refusals_total")),
                        n.sum("lastunit_invariant_check_failed") > 0 ? d + " (check failing)" : Long.toString(d),
                        n.sum("lastunit_db_writes_paused") > 0 ? "PAUSED" : "ok");
            }
            if (!n.all("lastunit_router_reserves_total").isEmpty()) {
                routers.row(s.name(), fmt(rate(b, n, seconds, "lastunit_router_reserves_total")),
                        fmt(rate(b, n, seconds, "lastunit_router_reserves_total", "outcome", "SOLD_OUT")),
                        fmt(rate(b, n, seconds, "lastunit_router_reserves_total")
                                - rate(b, n, seconds, "lastunit_router_reserves_total", "outcome", "RESERVED")
                                - rate(b, n, seconds, "lastunit_router_reserves_total", "outcome", "SOLD_OUT")),
                        fmt(rate(b, n, seconds, "lastunit_router_sheds_total", "cause", "sold_out_cache")),
                        fmt(rate(b, n, seconds, "lastunit_router_sheds_total", "cause", "rate_limit")),
                        fmt(rate(b, n, seconds, "lastunit_router_sheds_total", "cause", "in_flight")),
                        ms(quantile(b, n, "lastunit_grpc_server_processing_duration_seconds_bucket", 0.99,
                                "method", "Reserve")));
            }
        }
        out.add(String.format(Locale.ROOT, "lastunit top — %d services, %s holds created/s, drift %d units%s",
                sources.size(), fmt(sales), drift, down == 0 ? "" : ", " + down + " not answering"));
        out.add("");
        if (shards.size() > 0) {
            out.addAll(shards.lines());
            out.add("");
        }
        if (routers.size() > 0) {
            out.addAll(routers.lines());
        }
        return out;
    }

    private static String shardName(Source s) {
        List<Scrape.Sample> info = s.now().all("lastunit_shard_info");
        return info.isEmpty() ? s.name() : info.get(0).labels().getOrDefault("shard", s.name());
    }

    private static String label(Scrape n, String metric, String label) {
        List<Scrape.Sample> m = n.all(metric);
        return m.isEmpty() ? "-" : m.get(0).labels().getOrDefault(label, "-");
    }

    /** The counter's increase between the scrapes (from 0 on the first look or after a restart). */
    static double increase(Scrape before, Scrape now, String name, String... labels) {
        double n = now.sum(name, labels);
        double b = before == null ? n : before.sum(name, labels);
        return n >= b ? n - b : n;
    }

    static double rate(Scrape before, Scrape now, double seconds, String name, String... labels) {
        return before == null || seconds <= 0 ? 0 : increase(before, now, name, labels) / seconds;
    }

    private static double max(Scrape n, String name) {
        return n.all(name).stream().mapToDouble(Scrape.Sample::value).max().orElse(0);
    }

    /**
     * The {@code q} quantile of a histogram over the interval (its buckets summed over the other
     * labels), in its unit: the upper bound of the first bucket holding it; NaN without observations.
     */
    static double quantile(Scrape before, Scrape now, String bucketName, double q, String... labels) {
        Map<Double, Double> byLe = new TreeMap<>();
        for (Scrape.Sample s : now.all(bucketName, labels)) {
            double le = Double.parseDouble(s.labels().get("le").replace("+Inf", "Infinity"));
            byLe.merge(le, s.value(), Double::sum);
        }
        if (before != null) {
            for (Scrape.Sample s : before.all(bucketName, labels)) {
                double le = Double.parseDouble(s.labels().get("le").replace("+Inf", "Infinity"));
                byLe.merge(le, -s.value(), Double::sum);
            }
        }
        double total = byLe.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
        if (total <= 0) {
            return Double.NaN;
        }
        for (Map.Entry<Double, Double> e : byLe.entrySet()) {
            if (e.getValue() >= q * total) {
                return e.getKey();
            }
        }
        return Double.POSITIVE_INFINITY;
    }

    private static String fmt(double v) {
        if (v >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String ms(double seconds) {
        if (Double.isNaN(seconds)) {
            return "-";
        }
        if (Double.isInfinite(seconds)) {
            return "> 10 s";
        }
        return "≤ " + fmt(seconds * 1000) + " ms";
    }
}
