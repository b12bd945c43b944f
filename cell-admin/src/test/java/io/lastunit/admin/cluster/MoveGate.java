package io.lastunit.admin.cluster;

import io.lastunit.admin.move.MoveFaults;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds the movers of chosen tenants after each step they record, until {@link #open}: a test that
 * needs a move to stay at its first recorded step (its placement naming it) whatever the host's
 * speed. Every hold is bounded (30 s, scaled), so a test that forgets to open it only runs slowly.
 * Thread-safe.
 */
final class MoveGate implements MoveFaults {
    private final Set<String> tenants = ConcurrentHashMap.newKeySet();
    private final CountDownLatch open = new CountDownLatch(1);

    /** Holds the movers of {@code tenant} from now on. */
    MoveGate hold(String tenant) {
        tenants.add(tenant);
        return this;
    }

    void open() {
        open.countDown();
    }

    @Override
    public void afterRecorded(Move recorded) {
        if (!tenants.contains(recorded.getTenantId())) {
            return;
        }
        try {
            open.await(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted at the gate", e);
        }
    }
}
