package io.lastunit.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ScrapeTest {
    private static final String TEXT = """
            # HELP lastunit_holds_total holds by event
            # TYPE lastunit_holds_total counter
            lastunit_holds_total{component="shard",event="created"} 12.0
            lastunit_holds_total{component="shard",event="expired"} 3.0
            lastunit_q{msg="a \\"quoted\\", b\\\\c",x="1"} 1.5 1700000000000
            process_uptime_seconds 42.5
            lastunit_b_bucket{le="+Inf"} 7
            lastunit_nan NaN
            """;

    @Test
    void parsesNamesLabelsAndValues() {
        Scrape s = Scrape.parse(TEXT);
        assertThat(s.value("lastunit_holds_total", "event", "created")).isEqualTo(12.0);
        assertThat(s.sum("lastunit_holds_total")).isEqualTo(15.0);
        assertThat(s.sum("lastunit_holds_total", "event", "released")).isZero();
        assertThat(s.all("lastunit_q").get(0).labels()).containsEntry("msg", "a \"quoted\", b\\c").containsEntry("x", "1");
        assertThat(s.value("lastunit_q")).isEqualTo(1.5);
        assertThat(s.value("process_uptime_seconds")).isEqualTo(42.5);
        assertThat(s.value("lastunit_b_bucket", "le", "+Inf")).isEqualTo(7);
        assertThat(s.value("lastunit_nan")).isNaN();
        assertThat(s.names()).contains("lastunit_holds_total", "process_uptime_seconds").hasSize(5);
    }

    @Test
    void value_failsUnlessExactlyOneSampleMatches() {
        Scrape s = Scrape.parse(TEXT);
        assertThatThrownBy(() -> s.value("lastunit_holds_total")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("found");
        assertThatThrownBy(() -> s.value("missing")).isInstanceOf(IllegalStateException.class);
    }
}
