package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code ./lastunit demo} in process, on its embedded PostgreSQL: the sale is exact, and the
 * output ends as scripts and the README expect, after the line that says the demo is not the
 * benchmark.
 */
class DemoCommandIT {

    @Test
    void demo_sellsExactly_andEndsWithTheScriptLines() {
        CliRun r = CliRun.of("demo", "--units", "20", "--buyers", "200", "--items", "2", "--tenants", "2",
                "--concurrency", "16", "--seed", "7");

        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(lines.size() - 2)).isEqualTo("sold=20 total=20");
        assertThat(lines.get(lines.size() - 1)).isEqualTo("invariant=OK");
        assertThat(r.out()).contains("starting ZooKeeper, an embedded PostgreSQL,")
                .contains("the demo is not the benchmark").contains("bench/run")
                .doesNotContain("fsync OFF", "WARNING");
        assertThat(r.out().indexOf("the demo is not the benchmark")).isLessThan(r.out().indexOf("sold=20 total=20"));
    }
}
