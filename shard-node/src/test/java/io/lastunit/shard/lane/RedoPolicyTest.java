package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.lane.RedoPolicy.Stage;
import io.lastunit.shard.lane.RedoPolicy.Verdict;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What a lane does after a failed statement or commit, by SQL state and stage ({@link RedoPolicy}). */
class RedoPolicyTest {
    @ParameterizedTest(name = "{0} at {1} -> {2}")
    @CsvSource(nullValues = "null", value = {
            "40001, BEFORE_COMMIT, REDO",
            "40P01, BEFORE_COMMIT, REDO",
            "55P03, BEFORE_COMMIT, REDO_FREE",
            "23514, BEFORE_COMMIT, BUG",
            "08006, BEFORE_COMMIT, FAIL",
            "57014, BEFORE_COMMIT, FAIL",
            "LU001, BEFORE_COMMIT, FAIL",
            "null, BEFORE_COMMIT, FAIL",
            // the one statement rolled back on a refusal: as before a commit; otherwise unknown
            "40001, SELF_COMMITTING_STATEMENT, REDO",
            "40P01, SELF_COMMITTING_STATEMENT, REDO",
            "55P03, SELF_COMMITTING_STATEMENT, REDO_FREE",
            "23514, SELF_COMMITTING_STATEMENT, BUG",
            "08006, SELF_COMMITTING_STATEMENT, UNKNOWN_OUTCOME",
            "null, SELF_COMMITTING_STATEMENT, UNKNOWN_OUTCOME",
            // once the commit is sent, nothing is known
            "40001, COMMIT, UNKNOWN_OUTCOME",
            "55P03, COMMIT, UNKNOWN_OUTCOME",
            "23514, COMMIT, UNKNOWN_OUTCOME",
            "08006, COMMIT, UNKNOWN_OUTCOME",
            "null, COMMIT, UNKNOWN_OUTCOME",
    })
    void classify(String sqlState, Stage stage, Verdict expected) {
        assertThat(RedoPolicy.classify(sqlState, stage)).isEqualTo(expected);
    }
}
