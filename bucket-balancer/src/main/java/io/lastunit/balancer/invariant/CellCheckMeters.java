package io.lastunit.balancer.invariant;

import io.lastunit.common.metrics.InvariantMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The cross-shard invariant check's results per cell: a shard node's own {@link InvariantMeters}
 * with {@code scope="cross_shard"} and a {@code cell} label. A cell's meters are made the first
 * time it is checked: the series grow with the cells, never with tenants or items. Thread-safe.
 */
final class CellCheckMeters {
    static final String SCOPE = "cross_shard";

    private final MeterRegistry registry;
    private final Map<String, InvariantMeters> cells = new ConcurrentHashMap<>();

    /** @param registry where the meters go, or null: nothing is exported */
    CellCheckMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A check of {@code cell} ran: {@code units} away from the rules over {@code items} items. */
    void checked(String cell, long units, int items, long epochSeconds) {
        InvariantMeters c = cell(cell);
        if (c != null) {
            c.checked(units, items, epochSeconds);
        }
    }

    /** A check of {@code cell} could not run: the drift gauges keep the last check that ran. */
    void failed(String cell) {
        InvariantMeters c = cell(cell);
        if (c != null) {
            c.failed();
        }
    }

    /**
     * This balancer is not leading, so it checks nothing: it claims no failing check and no drift
     * streak (the leader's meters say those), keeping the last drift it saw and when.
     */
    void standingBy() {
        cells.values().forEach(InvariantMeters::standingBy);
    }

    /** The cells checked or failed so far. */
    Iterable<String> known() {
        return cells.keySet();
    }

    private InvariantMeters cell(String cell) {
        return registry == null ? null : cells.computeIfAbsent(cell,
                n -> new InvariantMeters(registry, SCOPE, Tags.of("cell", n), System.currentTimeMillis() / 1000));
    }
}
