package io.lastunit.bench.chaos;

import io.lastunit.admin.cli.Table;
import io.lastunit.testkit.faults.History;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What the clients saw during each fault, from the sale's history: the calls invoked between the
 * fault's start and its heal, by answer; the recovery time (from when the clients' path was whole
 * again to the first RESERVED answer after it); the acknowledged holds, among those calls, that
 * the database does not have. Pure: decides from the values given.
 */
final class FaultWindows {
    /** One fault's row. {@code recoveryMillis} is -1 when no Reserve was acknowledged after the heal. */
    record Row(FaultRunner.Applied applied, long ok, long soldOut, long unavailable, long unknown, long maxMillis,
               long recoveryMillis, long lost) {
    }

    private FaultWindows() {
    }

    static List<Row> rows(List<History.Entry> entries, List<FaultRunner.Applied> applied, Set<String> lostKeys) {
        List<Row> rows = new ArrayList<>();
        for (FaultRunner.Applied a : applied) {
            long from = a.startNanos();
            long to = a.healedNanos() >= 0 ? a.healedNanos() : Long.MAX_VALUE;
            long ok = 0;
            long soldOut = 0;
            long unavailable = 0;
            long unknown = 0;
            long lost = 0;
            long maxNanos = 0;
            long firstAckAfter = Long.MAX_VALUE;
            for (History.Entry e : entries) {
                if (e.outcome() == History.Outcome.OK && a.clientsHealedNanos() >= 0
                        && e.completeNanos() >= a.clientsHealedNanos()) {
                    firstAckAfter = Math.min(firstAckAfter, e.completeNanos());
                }
                if (e.invokeNanos() < from || e.invokeNanos() > to) {
                    continue;
                }
                if (e.completeNanos() >= 0) {
                    maxNanos = Math.max(maxNanos, e.completeNanos() - e.invokeNanos());
                }
                switch (e.outcome()) {
                    case OK -> {
                        ok++;
                        lost += lostKeys.contains(e.key()) ? 1 : 0;
                    }
                    case FAIL -> soldOut++;
                    case UNKNOWN -> {
                        if ("UNAVAILABLE".equals(e.reason())) {
                            unavailable++;
                        } else {
                            unknown++;
                        }
                    }
                    case PENDING -> unknown++;
                }
            }
            long recovery = firstAckAfter == Long.MAX_VALUE ? -1 : (firstAckAfter - a.clientsHealedNanos()) / 1_000_000;
            rows.add(new Row(a, ok, soldOut, unavailable, unknown, maxNanos / 1_000_000, recovery, lost));
        }
        return rows;
    }

    /**
     * The table: one row per fault, then the run's totals (holds lost, oversold) in the last row;
     * {@code failoverNote} is said in the failover's row (what its heal did to durability).
     */
    static Table table(List<Row> rows, long lostTotal, long oversoldTotal, String[] totals, String failoverNote) {
        Table t = new Table("#", "fault", "target", "#at s", "#for s", "#ok", "#SOLD_OUT", "#UNAVAILABLE", "#unknown",
                "#max ms", "#recovery ms", "#holds lost", "#oversold", "note");
        for (Row r : rows) {
            FaultRunner.Applied a = r.applied();
            String note = a.error() != null ? a.error()
                    : a.fault().kind() == io.lastunit.bench.chaos.plan.FaultKind.PG_FAILOVER ? failoverNote
                    : a.fault().detail();
            t.row(a.fault().number(), a.fault().kind().label(), a.fault().target(), seconds(a.startNanos()),
                    a.healedNanos() < 0 ? "?" : seconds(a.healedNanos() - a.startNanos()), r.ok(), r.soldOut(),
                    r.unavailable(), r.unknown(), r.maxMillis(), r.recoveryMillis() < 0 ? "-" : r.recoveryMillis(),
                    r.lost(), "", note);
        }
        t.row("", "whole run", "", "", "", totals[0], totals[1], totals[2], totals[3], "", "", lostTotal, oversoldTotal,
                totals[4]);
        return t;
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e9);
    }
}
