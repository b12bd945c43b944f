package io.lastunit.admin.metrics;

import io.lastunit.admin.move.MoverObserver;
import io.lastunit.admin.move.Mover;
import io.lastunit.admin.move.Moves;
import io.lastunit.common.metrics.Metrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The admin service's meters of tenant moves (docs/observability.md, "Admin"): runs by how they
 * ended, the pause each move imposed on its tenant (fenced to flipped: the "pause per tenant move"
 * SLI, by the cells it left and entered, with no tenant label), and the moves running here.
 * Thread-safe.
 */
public final class MoveMetrics implements MoverObserver {
    private final Map<Mover.Result, Counter> ended = new EnumMap<>(Mover.Result.class);
    private final MeterRegistry registry;

    public MoveMetrics(MeterRegistry registry, Moves moves) {
        for (Mover.Result r : Mover.Result.values()) {
            ended.put(r, Counter.builder(Metrics.PREFIX + "moves").tag("outcome", r.name().toLowerCase(Locale.ROOT))
                    .description("runs of tenant moves by how they ended: cleaned and aborted once per finished move;"
                            + " halted, stopped and busy when a run gave up for now").register(registry));
        }
        this.registry = registry;
        Gauge.builder(Metrics.PREFIX + "moves.running", moves, m -> m.running().size())
                .description("moves run by this admin process now").register(registry);
    }

    @Override
    public void moveEnded(Mover.Result result) {
        ended.get(result).increment();
    }

    @Override
    public void paused(String fromCell, String toCell, long pauseMs) {
        // Made at the first move between two cells: moves are rare, and cells are few.
        Timer.builder(Metrics.PREFIX + "move.pause").tag("from_cell", fromCell).tag("to_cell", toCell)
                .description("the pause each move imposed on its tenant's calls, from fenced to flipped")
                .register(registry).record(pauseMs, TimeUnit.MILLISECONDS);
    }
}
