package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.ShardConfig.DbTimeouts;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The database bounds are refused at start when they could not work together. */
class DbTimeoutsTest {
    private static DbTimeouts with(long socketMs, long lockMs, long idleMs, long readMs) {
        return new DbTimeouts(Duration.ofSeconds(5), Duration.ofMillis(socketMs), Duration.ofMillis(lockMs),
                Duration.ofMillis(idleMs), Duration.ofMillis(readMs), Duration.ofMillis(500));
    }

    @Test
    void theDefaults_haveNoProblem() {
        assertThat(DbTimeouts.DEFAULTS.problems()).isEmpty();
    }

    @Test
    void aSocketTimeoutAtOrBelowTheLockTimeout_isRefused_soLockWaitsEndOnTheServer() {
        assertThat(with(2_000, 2_000, 60_000, 30_000).problems()).singleElement().asString()
                .contains("socket=PT2S must be above lock=PT2S");
    }

    @Test
    void aSocketTimeoutInMilliseconds_isRefused_becausePgjdbcTakesWholeSeconds() {
        assertThat(with(15_500, 2_000, 60_000, 30_000).problems()).singleElement().asString()
                .contains("must be whole seconds");
    }

    @Test
    void anIdleInTransactionTimeoutAMoveExportCouldOutwait_isRefused() {
        assertThat(with(15_000, 2_000, 30_000, 30_000).problems()).singleElement().asString()
                .contains("idleInTransaction=PT30S must be above PT30S");
    }

    @Test
    void zeroOrNegativeBounds_areEachNamed() {
        assertThat(new DbTimeouts(Duration.ZERO, Duration.ofSeconds(15), Duration.ofMillis(-1),
                Duration.ofMinutes(1), null, Duration.ZERO).problems())
                .containsExactly("jdbc timeout connect must be positive, got PT0S",
                        "jdbc timeout lock must be positive, got PT-0.001S",
                        "jdbc timeout readStatement must be positive, got null",
                        "jdbc timeout standbyCheck must be positive, got PT0S");
    }
}
