package io.lastunit.admin.cli;

import io.lastunit.api.shard.v1.Drift;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.topology.v1.ShardInfo;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The invariant check across shards: CheckInvariants on each, as one result with a table, a line
 * per drift and a line per shard that could not be asked. Used by {@code admin check} and the demo.
 * Immutable once built.
 */
public final class InvariantSweep {
    /** At most this many drifts are listed by one shard's report. */
    static final int DRIFTS_PER_REPORT_MAX = 1_000;

    private final List<ShardProbe.Answer<InvariantReport>> answers;

    private InvariantSweep(List<ShardProbe.Answer<InvariantReport>> answers) {
        this.answers = List.copyOf(answers);
    }

    public static InvariantSweep run(ShardProbe probe, List<ShardInfo> shards, String tenant, String item,
            Duration timeout) throws InterruptedException {
        return new InvariantSweep(probe.checkInvariants(shards, tenant, item, timeout));
    }

    public int shards() {
        return answers.size();
    }

    public int driftCount() {
        return answers.stream().filter(ShardProbe.Answer::ok).mapToInt(a -> a.value().getDriftsCount()).sum();
    }

    public List<ShardProbe.Answer<InvariantReport>> unreachable() {
        return answers.stream().filter(a -> !a.ok()).toList();
    }

    public boolean ok() {
        return driftCount() == 0 && unreachable().isEmpty();
    }

    public long items() {
        return answers.stream().filter(ShardProbe.Answer::ok).mapToLong(a -> a.value().getItemsChecked()).sum();
    }

    public long buckets() {
        return answers.stream().filter(ShardProbe.Answer::ok).mapToLong(a -> a.value().getBucketsChecked()).sum();
    }

    public long holds() {
        return answers.stream().filter(ShardProbe.Answer::ok).mapToLong(a -> a.value().getHoldsChecked()).sum();
    }

    public Table table() {
        Table t = new Table("cell", "shard", "#items", "#buckets", "#holds", "#drifts");
        for (ShardProbe.Answer<InvariantReport> a : answers) {
            if (a.ok()) {
                InvariantReport r = a.value();
                t.row(a.shard().getCell(), a.shard().getShardId(), r.getItemsChecked(), r.getBucketsChecked(),
                        r.getHoldsChecked(), r.getDriftsCount() >= DRIFTS_PER_REPORT_MAX ? ">=" + r.getDriftsCount()
                                : String.valueOf(r.getDriftsCount()));
            } else {
                t.row(a.shard().getCell(), a.shard().getShardId(), "?", "?", "?", "unreachable");
            }
        }
        return t;
    }

    /** One line per drift, then one per shard that could not be asked. */
    public List<String> problemLines() {
        List<String> lines = new ArrayList<>();
        for (ShardProbe.Answer<InvariantReport> a : answers) {
            if (a.ok()) {
                for (Drift d : a.value().getDriftsList()) {
                    lines.add(Drifts.line(a.shard().getCell(), a.shard().getShardId(), d));
                }
            }
        }
        for (ShardProbe.Answer<InvariantReport> a : unreachable()) {
            lines.add("UNREACHABLE " + a.shard().getCell() + "/" + a.shard().getShardId() + " at "
                    + a.shard().getAddress() + ": " + a.error());
        }
        return lines;
    }

    /** The drifts as one line's tail: {@code shard:KIND tenant/item#b expected=E actual=A; ...}. */
    public String driftSummary() {
        List<String> parts = new ArrayList<>();
        for (ShardProbe.Answer<InvariantReport> a : answers) {
            if (a.ok()) {
                for (Drift d : a.value().getDriftsList()) {
                    parts.add(a.shard().getShardId() + ":" + Drifts.brief(d));
                }
            }
        }
        return String.join("; ", parts);
    }

    public void print(PrintWriter out, String indent) {
        table().print(out, indent);
        for (String l : problemLines()) {
            out.println(indent + l);
        }
    }
}
