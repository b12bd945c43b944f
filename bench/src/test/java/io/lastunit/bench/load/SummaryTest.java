package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.grpc.Status;
import io.lastunit.admin.cli.ExitCodes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class SummaryTest {
    private static final long S = 1_000_000_000L;

    @Test
    void reservePerSecondRunsToTheLastUnitWhenSoldOut() {
        // 10,000 units sold 2 s after the first request; the run went on for 10 s of sold-out answers
        assertThat(SaleResult.reservePerSecond(10_000, 2 * S, 10 * S)).isEqualTo(5_000.0);
    }

    @Test
    void reservePerSecondRunsToTheEndWhenNotSoldOut() {
        assertThat(SaleResult.reservePerSecond(500, -1, 4 * S)).isEqualTo(125.0);
    }

    @Test
    void reservePerSecondOfAnEmptyWindowIsZero() {
        assertThat(SaleResult.reservePerSecond(0, -1, 0)).isZero();
        assertThat(SaleResult.reservePerSecond(0, 0, 5 * S)).isZero();
    }

    @Test
    void requestsAndBuyersPerSecondRunOverTheWholeDuration() {
        SaleResult r = result(1_000, 100, 900, 0, 1_200, 2 * S, S / 2, histogram(), histogram());
        assertThat(r.requestsPerSecond()).isEqualTo(600.0);
        assertThat(r.buyersPerSecond()).isEqualTo(500.0);
        assertThat(r.reservePerSecond()).isEqualTo(200.0);
        assertThat(r.durationSeconds()).isEqualTo(2.0);
    }

    @Test
    void percentilesInMilliseconds() {
        Histogram h = histogram();
        for (long us = 1; us <= 10_000; us++) { // 1 µs .. 10 ms, uniform
            h.recordValue(us);
        }
        LatencySummary s = LatencySummary.ofMicros(h);
        assertThat(s.count()).isEqualTo(10_000);
        assertThat(s.p50()).isCloseTo(5.0, within(0.01));
        assertThat(s.p90()).isCloseTo(9.0, within(0.01));
        assertThat(s.p99()).isCloseTo(9.9, within(0.01));
        assertThat(s.p999()).isCloseTo(9.99, within(0.01));
        assertThat(s.max()).isCloseTo(10.0, within(0.01));
        assertThat(s.mean()).isCloseTo(5.0, within(0.01));
    }

    @Test
    void anEmptyHistogramSummarisesToZeros() {
        assertThat(LatencySummary.ofMicros(histogram())).isEqualTo(LatencySummary.EMPTY);
    }

    @Test
    void retryDecisions() {
        assertThat(Outcomes.afterFailure(Status.Code.RESOURCE_EXHAUSTED, 1, 20)).isEqualTo(Outcomes.Next.RETRY);
        assertThat(Outcomes.afterFailure(Status.Code.UNAVAILABLE, 19, 20)).isEqualTo(Outcomes.Next.RETRY);
        assertThat(Outcomes.afterFailure(Status.Code.RESOURCE_EXHAUSTED, 20, 20)).isEqualTo(Outcomes.Next.LIMITED);
        assertThat(Outcomes.afterFailure(Status.Code.UNAVAILABLE, 20, 20)).isEqualTo(Outcomes.Next.ERROR);
        assertThat(Outcomes.afterFailure(Status.Code.DEADLINE_EXCEEDED, 1, 20)).isEqualTo(Outcomes.Next.ERROR);
        assertThat(Outcomes.afterFailure(Status.Code.INVALID_ARGUMENT, 1, 20)).isEqualTo(Outcomes.Next.ERROR);
    }

    @Test
    void retryDelayIsTheServersHintOrABoundedBackoff() {
        assertThat(Outcomes.retryDelayMs(0, 1)).isEqualTo(20);
        assertThat(Outcomes.retryDelayMs(0, 3)).isEqualTo(80);
        assertThat(Outcomes.retryDelayMs(0, 19)).isEqualTo(1_000);
        assertThat(Outcomes.retryDelayMs(250, 1)).isEqualTo(250);
        assertThat(Outcomes.retryDelayMs(5, 3)).isEqualTo(80);
    }

    @Test
    void theLastLinesAreForScripts() {
        Histogram all = histogram();
        all.recordValue(1_234); // 1.234 ms
        RunReport r = report(result(20, 10, 10, 0, 20, 2 * S, S, all, histogram()), 10, 10, 10, okInvariant());
        assertThat(r.scriptLines()).containsExactly("sold=10 total=10", "invariant=OK", "reserve_per_s=10",
                "p99_ms=1.23");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.OK);
    }

    @Test
    void exitCodes() {
        SaleResult clean = result(20, 10, 10, 0, 20, S, S, histogram(), histogram());
        assertThat(report(clean, 9, 10, 10, okInvariant()).exitCode()).isEqualTo(ExitCodes.FAILED);
        assertThat(report(result(20, 10, 9, 1, 20, S, S, histogram(), histogram()), 10, 10, 10, okInvariant())
                .exitCode()).isEqualTo(ExitCodes.FAILED);
        Invariant drift = new Invariant(Invariant.Status.DRIFT, "s1:TOTAL bench/x expected=1 actual=2", 2, 1, 1, 1,
                List.of("DRIFT ..."));
        RunReport drifted = report(clean, 10, 10, 10, drift);
        assertThat(drifted.exitCode()).isEqualTo(ExitCodes.FAILED);
        assertThat(drifted.scriptLines().get(1)).isEqualTo("invariant=DRIFT s1:TOTAL bench/x expected=1 actual=2");
        assertThat(report(clean, 10, 10, 10, Invariant.unchecked("s1: unreachable")).exitCode())
                .isEqualTo(ExitCodes.UNREACHABLE);
        RunReport skipped = report(clean, 10, 10, 10, Invariant.skipped());
        assertThat(skipped.exitCode()).isEqualTo(ExitCodes.OK);
        assertThat(skipped.scriptLines().get(1)).isEqualTo("invariant=SKIPPED");
        // fewer buyers than units: all of them get a unit
        assertThat(report(result(5, 5, 0, 0, 5, S, -1, histogram(), histogram()), 5, 10, 10, okInvariant())
                .exitCode()).isEqualTo(ExitCodes.OK);
    }

    @Test
    void jsonAndMarkdownCarryTheFigures() {
        Histogram all = histogram();
        all.recordValue(2_000);
        RunReport r = report(result(20, 10, 10, 0, 25, 2 * S, S, all, histogram()), 10, 10, 10, okInvariant());
        String json = r.json();
        assertThat(json).contains("\"benchmark\": \"flash-sale\"").contains("\"reserve_per_s\": 10,")
                .contains("\"requests_per_s\": 12.5,").contains("\"p99\": 2,").contains("\"cores\": 2")
                .contains("\"status\": \"OK\"").contains("\"exit_code\": 0");
        String md = r.markdown();
        assertThat(md).contains("| reserve/s | 10 |").contains("| all Reserves | 1 | 2.00 | 2.00 | 2.00 | 2.00 | 2.00 |")
                .contains("Invariant check: **OK**").endsWith("p99_ms=2.00\n```\n");
    }

    @Test
    void theSlowestSecondsAreShownAndEveryOneIsInTheJson() {
        Histogram all = histogram();
        all.recordValue(2_000);
        List<Timeline.Second> seconds = new ArrayList<>();
        for (int i = 0; i < 8; i++) { // p99 of second i: 1 + 3i ms, so seconds 4..7 are over 10 ms (3 is exactly 10)
            double p99 = 1 + 3 * i;
            seconds.add(new Timeline.Second(i, 1_000, new LatencySummary(100 + i, 0.5, p99, p99, p99, p99 + 1, 0.6)));
        }
        seconds.add(new Timeline.Second(8, 120, LatencySummary.EMPTY));
        SaleResult sale = new SaleResult(20, 10, 10, 0, 0, 0, 0, 25, 0, 2 * S, S, all, histogram(), List.of(),
                seconds, 0);
        RunReport r = report(sale, 10, 10, 10, okInvariant());
        assertThat(r.secondsLine()).isEqualTo("8 seconds with Reserves, 4 with p99 over 10 ms");
        assertThat(r.slowestSecondRows()).extracting(row -> row[0]).containsExactly("7", "6", "5", "4", "3");
        assertThat(r.slowestSecondRows().get(0)).containsExactly("7", "107", "0.50", "22.00", "23.00");

        java.io.StringWriter text = new java.io.StringWriter();
        r.printTerminal(new java.io.PrintWriter(text));
        assertThat(text.toString()).contains("Reserve latency per second (ms), by reply time: 8 seconds with "
                + "Reserves, 4 with p99 over 10 ms; the slowest:");
        String json = r.json();
        assertThat(json).contains("\"slow_seconds\": 4,").contains("\"slowest_p99_ms\": 22,")
                .contains("\"dropped\": 0,");
        for (int i = 0; i <= 8; i++) {
            assertThat(json).contains("\"second\": " + i + ",");
        }
        assertThat(r.markdown()).contains("| 7 | 107 | 0.50 | 22.00 | 23.00 |").endsWith("p99_ms=2.00\n```\n");
    }

    @Test
    void theHostProbeIsInEveryForm() {
        HostProbe probe = new HostProbe(3.0, 5_000, 0.09, 0.36, 2.44, 4.16);
        RunReport r = report(result(20, 10, 10, 0, 20, S, S, histogram(), histogram()), 10, 10, 10, okInvariant(),
                probe);
        String line = "host before the run: a thread asking to sleep 0.5 ms woke 0.09 ms late at p50, 0.36 at p99, "
                + "2.44 at p99.9, 4.16 at most (5,000 wake-ups in 3.0 s)";
        assertThat(probe.line()).isEqualTo(line);
        java.io.StringWriter text = new java.io.StringWriter();
        r.printTerminal(new java.io.PrintWriter(text));
        assertThat(text.toString()).contains("  " + line + "\n");
        assertThat(r.markdown()).contains("- " + line + "\n");
        assertThat(r.json()).contains("\"host_probe\": {").contains("\"late_p99_ms\": 0.36,")
                .contains("\"late_p99_9_ms\": 2.44,").contains("\"samples\": 5000,");
        RunReport without = report(result(20, 10, 10, 0, 20, S, S, histogram(), histogram()), 10, 10, 10,
                okInvariant());
        assertThat(without.json()).contains("\"host_probe\": null");
        assertThat(without.markdown()).doesNotContain("host before the run");
    }

    @Test
    void aRunWithoutSecondsPrintsNoTimeline() {
        RunReport r = report(result(20, 10, 10, 0, 20, S, S, histogram(), histogram()), 10, 10, 10, okInvariant());
        java.io.StringWriter text = new java.io.StringWriter();
        r.printTerminal(new java.io.PrintWriter(text));
        assertThat(text.toString()).doesNotContain("per second");
        assertThat(r.json()).contains("\"slowest_p99_ms\": null,");
    }

    @Test
    void jsonEscapesAndFormats() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "a\"b\\c\nd\u0001");
        m.put("d", 1.5);
        m.put("big", 12345678.0);
        m.put("nan", Double.NaN);
        m.put("l", List.of(1, true));
        m.put("e", List.of());
        m.put("n", null);
        assertThat(Json.write(m)).isEqualTo("{\n  \"s\": \"a\\\"b\\\\c\\nd\\u0001\",\n  \"d\": 1.5,\n"
                + "  \"big\": 12345678,\n  \"nan\": null,\n  \"l\": [\n    1,\n    true\n  ],\n  \"e\": [],\n"
                + "  \"n\": null\n}\n");
    }

    @Test
    void progressLine() {
        String l = Progress.line(new Progress.Snapshot(500, 1_000, 100, 100, 400, 0, 0, 12, 1_000, 2.0));
        assertThat(l).startsWith("[" + "#".repeat(15) + ".".repeat(15) + "] 500/1,000 buyers")
                .contains("reserved 100/100").contains("sold out 400").contains("in flight 12").endsWith("500 req/s");
    }

    private static Histogram histogram() {
        return new Histogram(SaleDriver.LATENCY_MAX_MICROS, 3);
    }

    private static SaleResult result(long buyers, long reserved, long soldOut, long errors, long calls,
            long durationNanos, long sellOutNanos, Histogram all, Histogram ok) {
        return new SaleResult(buyers, reserved, soldOut, 0, errors, 0, 0, calls, 0, durationNanos, sellOutNanos, all,
                ok, List.of(), List.of(), 0);
    }

    private static Invariant okInvariant() {
        return new Invariant(Invariant.Status.OK, "", 2, 1, 10, 0, List.of());
    }

    private static RunReport report(SaleResult sale, long sold, long total, long units, Invariant inv) {
        return report(sale, sold, total, units, inv, null);
    }

    private static RunReport report(SaleResult sale, long sold, long total, long units, Invariant inv,
            HostProbe probe) {
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("units", units);
        options.put("items", 1);
        options.put("concurrency", 512);
        options.put("rate", null);
        options.put("confirm", false);
        options.put("target", null);
        options.put("shards", 2);
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cores", 2);
        machine.put("java_version", "17");
        machine.put("java_vm", "vm");
        machine.put("os", "linux");
        return new RunReport(Instant.parse("2026-01-01T00:00:00Z"), "./lastunit bench flash-sale", options, machine,
                sale, sold, total, units, inv, List.of(), 1.0, 0.5, null, probe);
    }
}
