package io.lastunit.common.health;

import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a node's gRPC health true (docs/operations.md, "Health"): every {@code interval} it asks
 * each condition whether it holds, and sets the node's services SERVING or NOT_SERVING by
 * {@link Readiness#verdict}. Changes are logged (WARN when it stops serving, with why). After
 * {@link #drain} the health is NOT_SERVING for good. One daemon thread; conditions must be cheap
 * and never block (they read state the node keeps anyway).
 */
public final class ReadinessWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReadinessWatch.class);

    /** One condition: its name (in the log and the reasons), how long it may fail, whether it holds now. */
    public record Condition(String name, Duration bound, BooleanSupplier holds) {
    }

    private final String node;
    private final HealthStatusManager health;
    private final List<String> services;
    private final List<Condition> conditions;
    private final Map<String, Duration> bounds = new LinkedHashMap<>();
    private final Map<String, Long> failingSince = new LinkedHashMap<>();
    private final LongSupplier ticker;
    private final Duration interval;
    private final Thread thread;
    private volatile Readiness.Verdict verdict = Readiness.Verdict.SERVING;
    private volatile boolean draining;
    /** The conditions past their bounds at the last change logged. */
    private java.util.Set<String> loggedPast = java.util.Set.of();

    public ReadinessWatch(String node, HealthStatusManager health, List<String> services, List<Condition> conditions,
                          Duration interval, LongSupplier ticker) {
        this.node = node;
        this.health = health;
        this.services = List.copyOf(services);
        this.conditions = List.copyOf(conditions);
        for (Condition c : conditions) {
            if (bounds.put(c.name(), c.bound()) != null) {
                throw new IllegalArgumentException("two conditions named " + c.name());
            }
        }
        this.interval = interval;
        this.ticker = ticker;
        this.thread = new Thread(this::run, "readiness-" + node);
        thread.setDaemon(true);
    }

    /** Starts looking; the health is set SERVING first (the node starts it once it listens). */
    public ReadinessWatch start() {
        apply(Readiness.Verdict.SERVING);
        thread.start();
        return this;
    }

    /** The last verdict. */
    public Readiness.Verdict verdict() {
        return verdict;
    }

    private void run() {
        while (!draining) {
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            look();
        }
    }

    /** One look at every condition, and the health set by it. */
    synchronized void look() {
        if (draining) {
            return;
        }
        long now = ticker.getAsLong();
        for (Condition c : conditions) {
            boolean holds;
            try {
                holds = c.holds().getAsBoolean();
            } catch (RuntimeException e) {
                holds = false;
            }
            if (holds) {
                failingSince.remove(c.name());
            } else {
                failingSince.putIfAbsent(c.name(), now);
            }
        }
        Readiness.Verdict v = Readiness.verdict(failingSince, bounds, now);
        java.util.Set<String> past = new java.util.TreeSet<>();
        for (Map.Entry<String, Long> f : failingSince.entrySet()) {
            if (now - f.getValue() > bounds.get(f.getKey()).toNanos()) {
                past.add(f.getKey());
            }
        }
        if (!past.equals(loggedPast)) {
            loggedPast = past;
            if (v.serving()) {
                log.info("{}: SERVING again", node);
            } else {
                log.warn("{}: NOT_SERVING: {}", node, String.join("; ", v.reasons()));
            }
        }
        apply(v);
    }

    private void apply(Readiness.Verdict v) {
        verdict = v;
        ServingStatus s = v.serving() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
        for (String service : services) {
            health.setStatus(service, s);
        }
    }

    /**
     * Graceful shutdown's first step: NOT_SERVING for good, then a wait of {@code grace} so that
     * load balancers and clients probing health stop sending before the server stops taking calls.
     */
    public void drain(Duration grace) {
        synchronized (this) {
            draining = true;
            thread.interrupt();
            verdict = new Readiness.Verdict(false, List.of("shutting down"));
            for (String service : services) {
                health.setStatus(service, ServingStatus.NOT_SERVING);
            }
        }
        if (!grace.isZero()) {
            log.info("{}: NOT_SERVING, draining for {} ms before it stops taking calls", node, grace.toMillis());
            try {
                Thread.sleep(grace.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        draining = true;
        thread.interrupt();
    }
}
