package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ConditionsTest {

    @Test
    void aProcStatCpuLineIsBusyIowaitAndTotal() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        long[] t = Conditions.parseCpuLine("cpu  100 5 50 800 40 3 2 0 7 0");
        assertThat(t).containsExactly(160, 40, 1000);
    }

    @Test
    void anLsnIsItsHighAndLowHalves() {
        assertThat(Conditions.lsn("0/16B3748")).isEqualTo(0x16B3748L);
        assertThat(Conditions.lsn("1A/0")).isEqualTo(0x1AL << 32);
        assertThat(Conditions.lsn("2/FF") - Conditions.lsn("1/FFFFFF00")).isEqualTo(0x1FFL);
    }

    @Test
    void figuresAreTheDifferencesOverTheWindow() {
        var a = new Conditions.Snapshot(0, new long[] {100, 10, 1_000}, 1_000_000_000L, 5, 40,
                new long[] {1_000, 8_000, 2_000_000_000L}, new long[] {7, 1L << 32});
        var b = new Conditions.Snapshot(10_000_000_000L, new long[] {1_700, 60, 3_000}, 18_000_000_000L, 17, 130,
                new long[] {18_000, 128_000, 9_650_000_000L}, new long[] {8, (1L << 32) + 400_000_000L});
        Conditions c = Conditions.between(a, b);
        assertThat(c.seconds()).isCloseTo(10.0, within(1e-9));
        assertThat(c.busyPct()).isCloseTo(80.0, within(1e-9));
        assertThat(c.iowaitPct()).isCloseTo(2.5, within(1e-9));
        assertThat(c.jvmCpuPct()).isCloseTo(170.0, within(1e-9));
        assertThat(c.gcCount()).isEqualTo(12);
        assertThat(c.gcMillis()).isEqualTo(90);
        assertThat(c.commitsPerSecond()).isCloseTo(1_700.0, within(1e-9));
        assertThat(c.operationsPerCommit()).isCloseTo(120_000.0 / 17_000, within(1e-9));
        assertThat(c.writeMillisPerCommit()).isCloseTo(0.45, within(1e-9));
        assertThat(c.checkpoints()).isEqualTo(1);
        assertThat(c.walBytes()).isEqualTo(400_000_000L);
        assertThat(c.lines()).containsExactly(
                "this machine 80% busy of " + c.cores() + " cores (I/O wait 2.5%); this JVM 170% of a core; GC 12 collections, 90 ms",
                "lanes: 1,700 commits/s, 7.1 operations per commit, 0.45 ms from decision to commit; PostgreSQL: 1 checkpoint"
                        + " started, 400 MB of WAL");
        assertThat(c.toMap()).containsEntry("lane_commits", 17_000L).containsEntry("pg_wal_bytes", 400_000_000L);
    }

    @Test
    void whatCouldNotBeReadIsSaidSo() {
        var a = new Conditions.Snapshot(0, null, -1, 0, 0, null, null);
        var b = new Conditions.Snapshot(2_000_000_000L, null, -1, 0, 0, null, null);
        Conditions c = Conditions.between(a, b);
        assertThat(c.busyPct()).isNull();
        assertThat(c.commitsPerSecond()).isNull();
        assertThat(c.lines().get(0)).startsWith("this machine ? busy");
        assertThat(c.lines().get(1)).isEqualTo("lanes: not known (the platform is not in this process); PostgreSQL: not known");
    }
}
