package io.lastunit.bench.load;

import io.lastunit.admin.cli.ExitCodes;
import io.lastunit.admin.cli.Table;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Everything a flash-sale run measured, and its three renderings: the terminal summary (whose last
 * four lines are for scripts), a JSON document and a Markdown page. Pure: rendering does no I/O.
 *
 * @param options     the run's options, in order (names as on the command line, without "--")
 * @param machine     cores, Java, OS, ...
 * @param sold        units taken, Σ (held + sold) over the items, read back through the router
 * @param total       Σ total over the items, read back
 * @param units       units put on sale
 * @param stockErrors items whose stock could not be read back
 * @param hostProbe   how late the host woke a sleeping thread before the run, or {@code null} (no {@code --host-probe})
 */
record RunReport(Instant startedAt, String commandLine, Map<String, Object> options, Map<String, Object> machine,
        SaleResult sale, long sold, long total, long units, Invariant invariant, List<String> stockErrors,
        double setupSeconds, double checkSeconds, Conditions conditions, HostProbe hostProbe) {

    static final String RESERVE_PER_S_DEFINITION = "successful reservations (RESERVED) divided by the seconds from "
            + "the first request to the reply that reserved the last unit, or to the last reply when not every unit "
            + "was reserved";
    static final String REQUESTS_PER_S_DEFINITION = "Reserve calls sent, retries included, divided by the seconds "
            + "from the first request to the last reply";
    /** A second whose p99 is over this is counted as slow: the p99 target of the half-load runs (bench/run). */
    static final double SLOW_SECOND_P99_MS = 10.0;
    /** Seconds listed by the terminal and Markdown summaries, slowest first. */
    static final int SLOWEST_SECONDS_SHOWN = 5;
    static final String SECONDS_DEFINITION = "the run cut into windows of one second by reply time, each with the "
            + "percentiles of the Reserves answered in it; a slow second has a p99 over "
            + String.format(Locale.ROOT, "%.0f", SLOW_SECOND_P99_MS) + " ms";
    static final String LATENCY_DEFINITION = "per buyer's Reserve, from its send (open loop: its intended send "
            + "time) to its final answer, retries included; 'all' counts every Reserve, 'reserved' those answered "
            + "RESERVED";

    long expectedSold() {
        return Math.min(units, sale.buyers());
    }

    boolean exact() {
        return sold == expectedSold() && total == units && sale.errors() == 0 && stockErrors.isEmpty();
    }

    /** 0 when exact and no drift; 1 on errors, an inexact sale or a drift; 3 when only the check was incomplete. */
    int exitCode() {
        if (!exact() || invariant.status() == Invariant.Status.DRIFT) {
            return ExitCodes.FAILED;
        }
        return invariant.status() == Invariant.Status.UNCHECKED ? ExitCodes.UNREACHABLE : ExitCodes.OK;
    }

    /** The last lines of the terminal summary, exactly: sold/total, invariant, reserve_per_s, p99_ms. */
    List<String> scriptLines() {
        return List.of("sold=" + sold + " total=" + total, invariant.line(),
                "reserve_per_s=" + Math.round(sale.reservePerSecond()),
                "p99_ms=" + String.format(Locale.ROOT, "%.2f", sale.allLatency().p99()));
    }

    /** The rows of the figures table: name, value, note. */
    List<String[]> figures() {
        List<String[]> rows = new ArrayList<>();
        rows.add(row("buyers", count(sale.buyers()), ""));
        rows.add(row("units", count(units), ""));
        rows.add(row("duration", String.format(Locale.ROOT, "%.2f s", sale.durationSeconds()),
                "first request to last reply"));
        rows.add(row("reserved", count(sale.reserved()), ""));
        rows.add(row("sold out", count(sale.soldOut()), ""));
        rows.add(row("limited", count(sale.limited()), "LIMIT_EXCEEDED, or RESOURCE_EXHAUSTED after "
                + SaleDriver.ATTEMPTS_MAX + " attempts"));
        rows.add(row("errors", count(sale.errors()), sale.confirmErrors() > 0
                ? count(sale.confirmErrors()) + " of them Confirms" : ""));
        rows.add(row("retries", count(sale.retries()), "RESOURCE_EXHAUSTED / UNAVAILABLE, same idempotency key"));
        if (Boolean.TRUE.equals(options.get("confirm"))) {
            rows.add(row("confirmed", count(sale.confirmed()), ""));
        }
        rows.add(row("sold out after", sale.sellOutNanos() >= 0
                ? String.format(Locale.ROOT, "%.2f s", sale.sellOutNanos() / 1e9) : "not sold out", ""));
        rows.add(row("reserve/s", String.format(Locale.ROOT, "%,.0f", sale.reservePerSecond()),
                "reserved / s to the last unit's reservation"));
        rows.add(row("requests/s", String.format(Locale.ROOT, "%,.0f", sale.requestsPerSecond()),
                "Reserve calls (retries included) / duration"));
        rows.add(row("buyers/s", String.format(Locale.ROOT, "%,.0f", sale.buyersPerSecond()), "buyers / duration"));
        rows.add(row("sold", count(sold) + " of " + count(total), "held + sold, read back through the router"));
        return rows;
    }

    /** The rows of the latency table: which, count, p50, p90, p99, p99.9, max (ms). */
    List<String[]> latencyRows() {
        return List.of(latencyRow("all Reserves", sale.allLatency()),
                latencyRow("RESERVED", sale.reservedLatency()));
    }

    /** The rows of the slowest-seconds table: second, count, p50, p99, max (ms). */
    List<String[]> slowestSecondRows() {
        List<String[]> rows = new ArrayList<>();
        for (Timeline.Second s : Timeline.slowest(sale.seconds(), SLOWEST_SECONDS_SHOWN)) {
            LatencySummary l = s.latency();
            rows.add(new String[] {Integer.toString(s.index()), count(l.count()), ms(l.p50()), ms(l.p99()), ms(l.max())});
        }
        return rows;
    }

    /** One line: how many seconds the run had, and how many of them were slow. */
    String secondsLine() {
        long windows = sale.seconds().stream().filter(s -> s.latency().count() > 0).count();
        return String.format(Locale.ROOT, "%,d second%s with Reserves, %,d with p99 over %.0f ms%s", windows,
                windows == 1 ? "" : "s", Timeline.over(sale.seconds(), SLOW_SECOND_P99_MS), SLOW_SECOND_P99_MS,
                sale.secondsDropped() > 0 ? String.format(Locale.ROOT, " (the %,d seconds after the first %,d not kept)",
                        sale.secondsDropped(), Timeline.SECONDS_MAX) : "");
    }

    void printTerminal(PrintWriter out) {
        out.println();
        out.printf("flash sale: %s%n", headline());
        Table t = new Table("figure", "#value", "note");
        for (String[] r : figures()) {
            t.row((Object[]) r);
        }
        t.print(out, "  ");
        out.println();
        out.println("Reserve latency (ms), " + (isOpenLoop() ? "open loop, from the intended send time"
                : "closed loop") + ", retries included:");
        Table l = new Table("", "#count", "#p50", "#p90", "#p99", "#p99.9", "#max");
        for (String[] r : latencyRows()) {
            l.row((Object[]) r);
        }
        l.print(out, "  ");
        if (!sale.seconds().isEmpty()) {
            out.println();
            out.println("Reserve latency per second (ms), by reply time: " + secondsLine() + "; the slowest:");
            Table w = new Table("#second", "#count", "#p50", "#p99", "#max");
            for (String[] r : slowestSecondRows()) {
                w.row((Object[]) r);
            }
            w.print(out, "  ");
        }
        if (conditions != null) {
            out.println();
            out.printf(Locale.ROOT, "over the sale (%.1f s):%n", conditions.seconds());
            for (String c : conditions.lines()) {
                out.println("  " + c);
            }
        }
        if (hostProbe != null) {
            out.println("  " + hostProbe.line());
        }
        for (String e : sale.errorSamples()) {
            out.println("  error: " + e);
        }
        for (String e : stockErrors) {
            out.println("  error: " + e);
        }
        out.println();
        out.printf(Locale.ROOT, "invariant check: %s%s%n", invariant.status(), invariant.status() == Invariant.Status.SKIPPED
                ? " (a --target without --zookeeper: the shards are not known)"
                : String.format(Locale.ROOT, " on %d shard%s (%,d items, %,d holds) in %.2f s", invariant.shards(),
                        invariant.shards() == 1 ? "" : "s", invariant.items(), invariant.holds(), checkSeconds));
        for (String p : invariant.problems()) {
            out.println("  " + p);
        }
        if (!exact()) {
            out.printf("expected sold=%d total=%d with no errors%n", expectedSold(), units);
        }
    }

    String headline() {
        String loop = isOpenLoop()
                ? String.format(Locale.ROOT, "open loop at %,.0f Reserves/s (at most %s in flight)", options.get("rate"),
                        options.get("concurrency"))
                : "closed loop, " + options.get("concurrency") + " in flight";
        Object items = options.get("items");
        return String.format(Locale.ROOT, "%,d buyers for %,d units of %s item%s, %s%s", sale.buyers(), units, items,
                Integer.valueOf(1).equals(items) ? "" : "s", loop,
                options.get("target") != null ? ", router " + options.get("target")
                        : ", local platform with " + options.get("shards") + " shards");
    }

    boolean isOpenLoop() {
        return options.get("rate") instanceof Number n && n.doubleValue() > 0;
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("benchmark", "flash-sale");
        m.put("started_at", startedAt.toString());
        m.put("command", commandLine);
        m.put("options", options);
        m.put("machine", machine);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("mode", isOpenLoop() ? "open-loop" : "closed-loop");
        s.put("buyers", sale.buyers());
        s.put("units", units);
        s.put("duration_s", sale.durationSeconds());
        s.put("reserved", sale.reserved());
        s.put("sold_out", sale.soldOut());
        s.put("limited", sale.limited());
        s.put("errors", sale.errors());
        s.put("confirm_errors", sale.confirmErrors());
        s.put("retries", sale.retries());
        s.put("calls", sale.calls());
        s.put("confirmed", sale.confirmed());
        s.put("sold_out_after_s", sale.sellOutNanos() >= 0 ? sale.sellOutNanos() / 1e9 : null);
        s.put("reserve_per_s", sale.reservePerSecond());
        s.put("requests_per_s", sale.requestsPerSecond());
        s.put("buyers_per_s", sale.buyersPerSecond());
        s.put("error_samples", sale.errorSamples());
        m.put("sale", s);
        Map<String, Object> lat = new LinkedHashMap<>();
        lat.put("all", latencyMap(sale.allLatency()));
        lat.put("reserved", latencyMap(sale.reservedLatency()));
        m.put("latency_ms", lat);
        Map<String, Object> per = new LinkedHashMap<>();
        per.put("window_ms", 1_000);
        per.put("slow_p99_ms", SLOW_SECOND_P99_MS);
        per.put("slow_seconds", Timeline.over(sale.seconds(), SLOW_SECOND_P99_MS));
        per.put("slowest_p99_ms", Timeline.slowest(sale.seconds(), 1).stream().map(x -> x.latency().p99()).findFirst()
                .orElse(null));
        per.put("dropped", sale.secondsDropped());
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Timeline.Second x : sale.seconds()) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("second", x.index());
            r.put("ms", x.millis());
            r.put("count", x.latency().count());
            r.put("p50", x.latency().p50());
            r.put("p99", x.latency().p99());
            r.put("max", x.latency().max());
            rows.add(r);
        }
        per.put("seconds", rows);
        m.put("latency_per_second", per);
        m.put("conditions", conditions == null ? null : conditions.toMap());
        m.put("host_probe", hostProbe == null ? null : hostProbe.toMap());
        Map<String, Object> stock = new LinkedHashMap<>();
        stock.put("sold", sold);
        stock.put("total", total);
        stock.put("expected_sold", expectedSold());
        stock.put("errors", stockErrors);
        m.put("stock", stock);
        Map<String, Object> inv = new LinkedHashMap<>();
        inv.put("status", invariant.status().name());
        inv.put("detail", invariant.detail());
        inv.put("shards", invariant.shards());
        inv.put("items", invariant.items());
        inv.put("holds", invariant.holds());
        inv.put("drifts", invariant.drifts());
        inv.put("problems", invariant.problems());
        inv.put("check_s", checkSeconds);
        m.put("invariant", inv);
        m.put("setup_s", setupSeconds);
        m.put("exit_code", exitCode());
        Map<String, Object> defs = new LinkedHashMap<>();
        defs.put("reserve_per_s", RESERVE_PER_S_DEFINITION);
        defs.put("requests_per_s", REQUESTS_PER_S_DEFINITION);
        defs.put("latency", LATENCY_DEFINITION);
        defs.put("latency_per_second", SECONDS_DEFINITION);
        defs.put("sold", "units taken: sum of held + sold over the items, read back through the router");
        m.put("definitions", defs);
        m.put("script_lines", scriptLines());
        return m;
    }

    String json() {
        return Json.write(toMap());
    }

    String markdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Flash sale, ").append(startedAt).append("\n\n");
        sb.append("`").append(commandLine).append("`\n\n");
        sb.append(headline()).append(".\n\n");
        sb.append("Machine: ").append(machine.get("cores")).append(" cores");
        if (machine.get("cpu") != null) {
            sb.append(" (").append(machine.get("cpu")).append(")");
        }
        sb.append(", Java ").append(machine.get("java_version")).append(" (").append(machine.get("java_vm"))
                .append("), ").append(machine.get("os")).append(".\n\n");
        sb.append("| figure | value | note |\n|---|---:|---|\n");
        for (String[] r : figures()) {
            sb.append("| ").append(r[0]).append(" | ").append(r[1]).append(" | ").append(r[2]).append(" |\n");
        }
        sb.append("\n| Reserve latency (ms) | count | p50 | p90 | p99 | p99.9 | max |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (String[] r : latencyRows()) {
            sb.append("| ").append(String.join(" | ", r)).append(" |\n");
        }
        if (!sale.seconds().isEmpty()) {
            sb.append("\nPer second, by reply time: ").append(secondsLine()).append(". The slowest:\n\n");
            sb.append("| second | count | p50 | p99 | max |\n|---:|---:|---:|---:|---:|\n");
            for (String[] r : slowestSecondRows()) {
                sb.append("| ").append(String.join(" | ", r)).append(" |\n");
            }
        }
        if (conditions != null) {
            sb.append(String.format(Locale.ROOT, "\nOver the sale (%.1f s):\n\n", conditions.seconds()));
            for (String c : conditions.lines()) {
                sb.append("- ").append(c).append('\n');
            }
        }
        if (hostProbe != null) {
            sb.append(conditions == null ? "\n" : "").append("- ").append(hostProbe.line()).append('\n');
        }
        sb.append("\nInvariant check: **").append(invariant.status()).append("**");
        if (invariant.status() != Invariant.Status.SKIPPED) {
            sb.append(String.format(Locale.ROOT, " on %d shards (%,d items, %,d holds)", invariant.shards(),
                    invariant.items(), invariant.holds()));
        }
        sb.append(".\n");
        for (String p : invariant.problems()) {
            sb.append("- ").append(p).append('\n');
        }
        sb.append("\nOptions:\n\n| option | value |\n|---|---|\n");
        options.forEach((k, v) -> sb.append("| ").append(k).append(" | ").append(v == null ? "" : v).append(" |\n"));
        sb.append("\nDefinitions: reserve/s is ").append(RESERVE_PER_S_DEFINITION).append(". Requests/s is ")
                .append(REQUESTS_PER_S_DEFINITION).append(". Latency is ").append(LATENCY_DEFINITION)
                .append(". Per second: ").append(SECONDS_DEFINITION).append(".\n\n");
        sb.append("```\n");
        for (String l : scriptLines()) {
            sb.append(l).append('\n');
        }
        sb.append("```\n");
        return sb.toString();
    }

    private static Map<String, Object> latencyMap(LatencySummary s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("count", s.count());
        m.put("p50", s.p50());
        m.put("p90", s.p90());
        m.put("p99", s.p99());
        m.put("p99_9", s.p999());
        m.put("max", s.max());
        m.put("mean", s.mean());
        return m;
    }

    private static String[] latencyRow(String name, LatencySummary s) {
        return new String[] {name, count(s.count()), ms(s.p50()), ms(s.p90()), ms(s.p99()), ms(s.p999()), ms(s.max())};
    }

    private static String[] row(String name, String value, String note) {
        return new String[] {name, value, note};
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    private static String ms(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
