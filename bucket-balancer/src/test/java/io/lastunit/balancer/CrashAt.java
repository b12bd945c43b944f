package io.lastunit.balancer;

import io.lastunit.balancer.transfer.TransferFaults;
import io.lastunit.balancer.transfer.TransferStep;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A balancer "dies" at one point of one transfer: once armed, the first transfer to reach
 * {@code step} (before or after its call) throws {@link Crash} there, and the id is kept.
 * Thread-safe.
 */
final class CrashAt implements TransferFaults {
    /** The injected death; never a gRPC status, so nothing retries it. */
    static final class Crash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Crash(String message) {
            super(message);
        }
    }

    private final TransferStep step;
    private final boolean after;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final AtomicReference<String> crashed = new AtomicReference<>();

    CrashAt(TransferStep step, boolean after) {
        this.step = step;
        this.after = after;
    }

    void arm() {
        armed.set(true);
    }

    /** The transfer that crashed, or null. */
    String crashedTransfer() {
        return crashed.get();
    }

    @Override
    public void before(TransferStep s, String transferId) {
        if (!after) {
            hit(s, transferId);
        }
    }

    @Override
    public void after(TransferStep s, String transferId) {
        if (after) {
            hit(s, transferId);
        }
    }

    private void hit(TransferStep s, String transferId) {
        if (s == step && armed.compareAndSet(true, false)) {
            crashed.set(transferId);
            throw new Crash("balancer dies " + (after ? "after" : "before") + " step " + s + " of " + transferId);
        }
    }
}
