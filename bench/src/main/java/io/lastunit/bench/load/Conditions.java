package io.lastunit.bench.load;

import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.shard.lane.LaneEngine;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What the machine, this JVM, the lanes and PostgreSQL did over the measured sale: the figures a
 * latency tail is read against (how busy the cores were, how many commits the lanes made and of
 * how many operations, how long a batch took from its decision to its commit, whether a
 * checkpoint ran). Read from {@code /proc/stat}, the JVM's management beans, the local
 * platform's lanes and PostgreSQL's {@code pg_stat_bgwriter}; a figure that cannot be read (not
 * Linux, a {@code --target} platform whose lanes live elsewhere) is {@code null}.
 *
 * @param seconds      the window
 * @param cores        this machine's cores
 * @param busyPct      share of all cores' time not idle and not waiting for I/O, in %
 * @param iowaitPct    share of all cores' time idle while I/O was outstanding, in %
 * @param jvmCpuPct    this JVM's CPU time over the window, in % of one core
 * @param gcCount      collections in this JVM
 * @param gcMillis     time of those collections (G1's young and mixed collections: their pauses)
 * @param commits      transactions committed by the lanes of the local platform's shard nodes
 * @param operations   operations the lanes applied (Reserves and the rest, committed or answered from the cache)
 * @param writeNanos   the committing batches' time from decision to commit, summed
 * @param checkpoints  PostgreSQL checkpoints started (timed and requested)
 * @param walBytes     WAL PostgreSQL wrote (all databases of the server)
 */
record Conditions(double seconds, int cores, Double busyPct, Double iowaitPct, Double jvmCpuPct, long gcCount,
        long gcMillis, Long commits, Long operations, Long writeNanos, Long checkpoints, Long walBytes) {

    /** The counters at one moment; {@code null} fields were not readable. */
    record Snapshot(long nanos, long[] cpuTicks, long processCpuNanos, long gcCount, long gcMillis,
            long[] lanes, long[] database) {
    }

    /** Reads the counters now; {@code platform} may be {@code null} (a {@code --target} run). */
    static Snapshot take(LocalPlatform platform) {
        long gcCount = 0;
        long gcMillis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcCount += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        long cpu = -1;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            cpu = os.getProcessCpuTime();
        }
        return new Snapshot(System.nanoTime(), cpuTicks(), cpu, gcCount, gcMillis, lanes(platform), database(platform));
    }

    /** The figures between two snapshots. */
    static Conditions between(Snapshot a, Snapshot b) {
        double seconds = Math.max(1e-9, (b.nanos() - a.nanos()) / 1e9);
        Double busy = null;
        Double iowait = null;
        if (a.cpuTicks() != null && b.cpuTicks() != null) {
            long total = b.cpuTicks()[2] - a.cpuTicks()[2];
            if (total > 0) {
                busy = 100.0 * (b.cpuTicks()[0] - a.cpuTicks()[0]) / total;
                iowait = 100.0 * (b.cpuTicks()[1] - a.cpuTicks()[1]) / total;
            }
        }
        Double jvm = a.processCpuNanos() >= 0 && b.processCpuNanos() >= 0
                ? 100.0 * (b.processCpuNanos() - a.processCpuNanos()) / 1e9 / seconds : null;
        Long commits = null;
        Long ops = null;
        Long write = null;
        if (a.lanes() != null && b.lanes() != null) {
            commits = b.lanes()[0] - a.lanes()[0];
            ops = b.lanes()[1] - a.lanes()[1];
            write = b.lanes()[2] - a.lanes()[2];
        }
        Long checkpoints = null;
        Long wal = null;
        if (a.database() != null && b.database() != null) {
            checkpoints = b.database()[0] - a.database()[0];
            wal = b.database()[1] - a.database()[1];
        }
        return new Conditions(seconds, Runtime.getRuntime().availableProcessors(), busy, iowait, jvm,
                b.gcCount() - a.gcCount(), b.gcMillis() - a.gcMillis(), commits, ops, write, checkpoints, wal);
    }

    Double commitsPerSecond() {
        return commits == null ? null : commits / seconds;
    }

    Double operationsPerCommit() {
        return commits == null || commits == 0 ? null : (double) operations / commits;
    }

    /** Mean time of a committing batch from its decision to its commit, in ms. */
    Double writeMillisPerCommit() {
        return commits == null || commits == 0 ? null : writeNanos / 1e6 / commits;
    }

    /** The summary's lines: the machine and JVM, then the lanes and PostgreSQL. */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        out.add(String.format(Locale.ROOT, "this machine %s busy of %d cores (I/O wait %s); this JVM %s of a core; "
                        + "GC %,d collections, %,d ms", pct(busyPct), cores, iowaitPct == null ? "?" : num(iowaitPct, 1) + "%",
                pct(jvmCpuPct), gcCount,
                gcMillis));
        String lanes = commits == null ? "lanes: not known (the platform is not in this process)"
                : String.format(Locale.ROOT, "lanes: %,.0f commits/s, %s operations per commit, %s ms from decision to "
                        + "commit", commitsPerSecond(), num(operationsPerCommit(), 1), num(writeMillisPerCommit(), 2));
        String db = checkpoints == null ? "PostgreSQL: not known"
                : String.format(Locale.ROOT, "PostgreSQL: %d checkpoint%s started, %,.0f MB of WAL", checkpoints,
                        checkpoints == 1 ? "" : "s", walBytes / 1e6);
        out.add(lanes + "; " + db);
        return out;
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seconds", seconds);
        m.put("cores", cores);
        m.put("machine_busy_pct", busyPct);
        m.put("machine_iowait_pct", iowaitPct);
        m.put("jvm_cpu_pct_of_core", jvmCpuPct);
        m.put("gc_collections", gcCount);
        m.put("gc_ms", gcMillis);
        m.put("lane_commits", commits);
        m.put("lane_commits_per_s", commitsPerSecond());
        m.put("lane_operations", operations);
        m.put("lane_operations_per_commit", operationsPerCommit());
        m.put("lane_ms_decision_to_commit", writeMillisPerCommit());
        m.put("pg_checkpoints", checkpoints);
        m.put("pg_wal_bytes", walBytes);
        return m;
    }

    private static String pct(Double v) {
        return v == null ? "?" : String.format(Locale.ROOT, "%.0f%%", v);
    }

    private static String num(Double v, int decimals) {
        return v == null ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    /** {busy, iowait, total} jiffies of all cores from /proc/stat, or null. */
    static long[] cpuTicks() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
                if (line.startsWith("cpu ")) {
                    return parseCpuLine(line);
                }
            }
        } catch (Exception e) {
            return null;
        }
        return null;
    }

    /** {busy, iowait, total} of a {@code /proc/stat} "cpu" line (user nice system idle iowait irq softirq steal ...). */
    static long[] parseCpuLine(String line) {
        String[] f = line.trim().split("\\s+");
        long total = 0;
        for (int i = 1; i <= 8 && i < f.length; i++) {
            total += Long.parseLong(f[i]);
        }
        long idle = Long.parseLong(f[4]);
        long iowait = f.length > 5 ? Long.parseLong(f[5]) : 0;
        return new long[] {total - idle - iowait, iowait, total};
    }

    /** {commits, operations, writeNanos} summed over the local platform's shard nodes, or null. */
    private static long[] lanes(LocalPlatform platform) {
        if (platform == null) {
            return null;
        }
        long[] sum = new long[3];
        for (String id : platform.shards().keySet()) {
            LaneEngine.Stats s = platform.shard(id).engine().stats();
            sum[0] += s.transactions();
            sum[1] += s.opsApplied();
            sum[2] += s.writeNanos();
        }
        return sum;
    }

    /**
     * {checkpoints, WAL position in bytes} of the first shard's PostgreSQL server, or null. (The
     * checkpoint counters are in {@code pg_stat_bgwriter} up to PostgreSQL 16; on 17, which moved
     * them to {@code pg_stat_checkpointer}, the query fails and the report says "not known".)
     */
    private static long[] database(LocalPlatform platform) {
        if (platform == null || platform.shards().isEmpty()) {
            return null;
        }
        DataSource ds = platform.shard(platform.shards().keySet().iterator().next()).dataSource();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT checkpoints_timed + checkpoints_req, pg_current_wal_lsn()::text"
                     + " FROM pg_stat_bgwriter")) {
            if (!rs.next()) {
                return null;
            }
            return new long[] {rs.getLong(1), lsn(rs.getString(2))};
        } catch (Exception e) {
            return null; // a figure for the report, not a reason to fail the run
        }
    }

    /** A PostgreSQL LSN ({@code X/Y}, hexadecimal) as a byte position. */
    static long lsn(String text) {
        int slash = text.indexOf('/');
        return (Long.parseLong(text.substring(0, slash), 16) << 32) + Long.parseLong(text.substring(slash + 1), 16);
    }
}
