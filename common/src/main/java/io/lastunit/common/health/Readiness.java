package io.lastunit.common.health;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Whether a node should say SERVING: pure, from how long each of its conditions has been failing
 * and the bound each may fail for. A condition failing for longer than its bound makes the node
 * NOT_SERVING, naming why; one failing for less does not (a database restart of a second, a
 * ZooKeeper reconnect within the staleness bound, a lane in one long commit).
 */
public final class Readiness {
    private Readiness() {
    }

    /** What the node's health says, and why when it is not serving. */
    public record Verdict(boolean serving, List<String> reasons) {
        public Verdict {
            reasons = List.copyOf(reasons);
            if (serving != reasons.isEmpty()) {
                throw new IllegalArgumentException("NOT_SERVING has its reasons, SERVING none: " + reasons);
            }
        }

        public static final Verdict SERVING = new Verdict(true, List.of());
    }

    /**
     * @param failingSinceNanos per condition, when it started failing (absent: it holds)
     * @param bounds            per condition, how long it may fail before the node stops serving
     * @param nowNanos          the time of the look, on the same ticker
     */
    public static Verdict verdict(Map<String, Long> failingSinceNanos, Map<String, Duration> bounds, long nowNanos) {
        List<String> reasons = new ArrayList<>();
        for (Map.Entry<String, Long> f : failingSinceNanos.entrySet()) {
            Duration bound = Objects.requireNonNull(bounds.get(f.getKey()), () -> "no bound for " + f.getKey());
            long failingNanos = nowNanos - f.getValue();
            if (failingNanos > bound.toNanos()) {
                reasons.add(f.getKey() + " failing for " + failingNanos / 1_000_000 + " ms (bound " + bound.toMillis()
                        + " ms)");
            }
        }
        reasons.sort(null);
        return reasons.isEmpty() ? Verdict.SERVING : new Verdict(false, reasons);
    }
}
