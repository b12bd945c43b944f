package io.lastunit.balancer;

import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;

/** Waits of the balancer tests, scaled with {@code lastunit.test.timeoutScale}. */
final class Awaits {
    static final Duration DEFAULT = Duration.ofSeconds(20);

    private Awaits() {
    }

    static void until(String what, BooleanSupplier condition) {
        until(what, DEFAULT, condition);
    }

    static void until(String what, Duration max, BooleanSupplier condition) {
        Awaitility.await(what).atMost(TestTimeouts.scaled(max)).pollInterval(Duration.ofMillis(50))
                .until(condition::getAsBoolean);
    }
}
