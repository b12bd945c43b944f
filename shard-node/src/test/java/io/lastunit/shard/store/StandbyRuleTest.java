package io.lastunit.shard.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** When a commit could be acknowledged, from synchronous_standby_names and pg_stat_replication. */
class StandbyRuleTest {
    @ParameterizedTest(name = "\"{0}\" waits for {1}")
    @CsvSource(delimiter = '|', value = {
            "''                          | 0",
            "'   '                       | 0",
            "standby_a                   | 1",
            "'*'                         | 1",
            "'standby_a, standby_b'      | 1",
            "'2 (a, b, c)'               | 2",
            "'FIRST 2 (a, b, c)'         | 2",
            "'first 1 (\"a b\", c)'      | 1",
            "'ANY 2 (a, b, c)'           | 2",
            "'any 1 (*)'                 | 1",
            "'ANY   3(a,b,c)'            | 3"})
    void required_countsWhatACommitWaitsFor(String names, int required) {
        assertThat(StandbyRule.required(names)).isEqualTo(required);
    }

    @ParameterizedTest(name = "names=\"{0}\" commit={1} sync={2} hidden={3} → {4}")
    @CsvSource(delimiter = '|', value = {
            "''                | on           | 0 | 0 | NOT_REQUIRED",
            "standby_a         | local        | 0 | 0 | NOT_REQUIRED",
            "standby_a         | off          | 0 | 0 | NOT_REQUIRED",
            "standby_a         | on           | 1 | 0 | CONNECTED",
            "standby_a         | remote_write | 1 | 0 | CONNECTED",
            "standby_a         | remote_apply | 0 | 0 | MISSING",
            "standby_a         | on           | 0 | 0 | MISSING",
            "'ANY 2 (a, b, c)' | on           | 1 | 0 | MISSING",
            "'ANY 2 (a, b, c)' | on           | 2 | 0 | CONNECTED",
            "'FIRST 2 (a, b)'  | on           | 3 | 0 | CONNECTED",
            "standby_a         | on           | 0 | 1 | CANNOT_TELL",
            "standby_a         | on           | 1 | 1 | CONNECTED",
            "standby_a         | ''           | 0 | 0 | MISSING"})
    void verdict(String names, String commit, int sync, int hidden, StandbyRule.Verdict expected) {
        assertThat(StandbyRule.verdict(names, commit, sync, hidden)).isEqualTo(expected);
    }

    @org.junit.jupiter.api.Test
    void negativeCounts_areABug() {
        assertThatThrownBy(() -> StandbyRule.verdict("a", "on", -1, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
