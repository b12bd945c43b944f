package io.lastunit.common.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.time.Duration;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;

class StalenessGateTest {
    private static final Duration STALE_MAX = Duration.ofSeconds(10);
    private final FakeClock clock = new FakeClock();
    private final StalenessGate gate = new StalenessGate("topology root=/t", STALE_MAX, clock, true);

    @Test
    void connected_serves() {
        assertThatCode(gate::check).doesNotThrowAnyException();
        assertThat(gate.state()).isEqualTo(ConnectionState.CONNECTED);
    }

    @Test
    void suspended_servesUpToStaleMax_thenRefuses() {
        gate.onStateChanged(ConnectionState.SUSPENDED);
        clock.advance(STALE_MAX);
        assertThatCode(gate::check).doesNotThrowAnyException();

        clock.advance(Duration.ofMillis(1));
        Failure f = catchThrowableOfType(Failure.class, gate::check);
        assertThat(f.reason()).isEqualTo(Reason.TOPOLOGY_UNAVAILABLE);
        assertThat(f.retryAfter()).isEqualTo(StalenessGate.RETRY_AFTER);
        assertThat(f.getMessage()).contains("topology root=/t", "SUSPENDED", "10001 ms", "staleMax=10000 ms");
    }

    @Test
    void staleness_isZeroWhileConnected_growsFromTheFirstSuspension_throughLost_andIsZeroAgainOnReconnect() {
        assertThat(gate.staleness()).isZero();
        gate.onStateChanged(ConnectionState.SUSPENDED);
        clock.advance(Duration.ofSeconds(3));
        gate.onStateChanged(ConnectionState.LOST);
        clock.advance(Duration.ofSeconds(20));
        assertThat(gate.staleness()).as("past staleMax, refused, still measured").isEqualTo(Duration.ofSeconds(23));

        gate.onStateChanged(ConnectionState.RECONNECTED);
        assertThat(gate.staleness()).isZero();
    }

    @Test
    void lost_refusesAtOnce() {
        gate.onStateChanged(ConnectionState.LOST);
        Failure f = catchThrowableOfType(Failure.class, gate::check);
        assertThat(f.reason()).isEqualTo(Reason.TOPOLOGY_UNAVAILABLE);
        assertThat(f.getMessage()).contains("LOST");
    }

    @Test
    void lost_afterSuspended_keepsTheFirstDowntime() {
        gate.onStateChanged(ConnectionState.SUSPENDED);
        clock.advance(Duration.ofSeconds(4));
        gate.onStateChanged(ConnectionState.LOST);
        clock.advance(Duration.ofSeconds(1));
        assertThat(catchThrowableOfType(Failure.class, gate::check).getMessage()).contains("5000 ms");
    }

    @Test
    void repeatedSuspended_doesNotRestartTheBound() {
        gate.onStateChanged(ConnectionState.SUSPENDED);
        clock.advance(Duration.ofSeconds(8));
        gate.onStateChanged(ConnectionState.SUSPENDED);
        clock.advance(Duration.ofSeconds(3));
        assertThat(catchThrowableOfType(Failure.class, gate::check)).isNotNull();
    }

    @Test
    void reconnected_servesAgain_andResetsTheBound() {
        gate.onStateChanged(ConnectionState.LOST);
        gate.onStateChanged(ConnectionState.RECONNECTED);
        assertThatCode(gate::check).doesNotThrowAnyException();

        clock.advance(Duration.ofMinutes(5));
        gate.onStateChanged(ConnectionState.SUSPENDED);
        clock.advance(Duration.ofSeconds(9));
        assertThatCode(gate::check).doesNotThrowAnyException();
    }

    @Test
    void startingDisconnected_countsFromConstruction() {
        StalenessGate down = new StalenessGate("x", STALE_MAX, clock, false);
        assertThatCode(down::check).doesNotThrowAnyException();
        clock.advance(STALE_MAX.plusMillis(1));
        assertThat(catchThrowableOfType(Failure.class, down::check)).isNotNull();
    }
}
