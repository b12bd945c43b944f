package io.lastunit.router.metrics;

import io.grpc.Status;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.metrics.Metrics;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyCache;
import io.lastunit.router.route.RouterObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;

/**
 * A router's own meters (docs/observability.md, "Router"): Reserve answers by outcome, sheds by
 * cause, both by the tenant's cell; retries, re-routes, pulls, and, read at scrape time, the
 * topology's staleness and the ZooKeeper connection. Every counter is made ahead, one per value of
 * a bounded enum ({@link ReserveOutcome}'s two answers, {@link Reason}, {@link Status.Code}, and the
 * {@link RouterObserver} enums) — a cell's all at once, the first time the cell is answered — so an
 * answer costs two map lookups and one increment. A label names a cell (at most
 * {@link #CELLS_MAX}), never a tenant, an item or a buyer. Thread-safe.
 */
public final class RouterMetrics implements RouterObserver {
    /**
     * At most this many cells get their own label; answers of further cells count under
     * {@value #CELL_OTHER}. Cells are few (an admin creates each), so this only bounds a runaway.
     */
    static final int CELLS_MAX = 256;
    /** The cell label past {@link #CELLS_MAX}. */
    static final String CELL_OTHER = "other";

    private final MeterRegistry registry;
    /** Answers and sheds by cell: made the first time a cell is answered, then one lookup per answer. */
    private final ConcurrentHashMap<String, CellMeters> cells = new ConcurrentHashMap<>();
    private final Map<Reroute, Counter> reroutes = new EnumMap<>(Reroute.class);
    private final Map<Pull, Counter> pulls = new EnumMap<>(Pull.class);
    private final Counter retries;

    public RouterMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (Reroute r : Reroute.values()) {
            reroutes.put(r, Counter.builder(Metrics.PREFIX + "router.reroutes").tag("why", label(r))
                    .description("calls sent again after a shard's MOVED or FORWARDED, or held for a tenant move")
                    .register(registry));
        }
        for (Pull p : Pull.values()) {
            pulls.put(p, Counter.builder(Metrics.PREFIX + "router.pulls").tag("outcome", label(p))
                    .description("balancer Pulls asked by Reserves into a dry region, by outcome").register(registry));
        }
        retries = Counter.builder(Metrics.PREFIX + "router.retries")
                .description("calls sent again to their shard after UNAVAILABLE (backoff)").register(registry);
        cell(Topology.SHARED_CELL); // exported from the start, at zero
    }

    /**
     * Makes the meters of every cell of {@code t} (a topology listener), so that a cell's series
     * exist, at zero, before its first answer: a rate over them starts at the right place.
     */
    public void onTopology(Topology t) {
        for (Cell c : t.cells()) {
            cell(c.getName());
        }
    }

    /** One cell's answer and shed counters, every one made at once. */
    private static final class CellMeters {
        final Counter reserved;
        final Counter soldOut;
        final Map<Reason, Counter> byReason = new EnumMap<>(Reason.class);
        /** Failures without a lastunit reason (a deadline, a cancellation, a transport error): by status code. */
        final Map<Status.Code, Counter> byCode = new EnumMap<>(Status.Code.class);
        final Map<Shed, Counter> sheds = new EnumMap<>(Shed.class);

        CellMeters(MeterRegistry registry, String cell) {
            reserved = answers(registry, cell, ReserveOutcome.RESERVED.name());
            soldOut = answers(registry, cell, ReserveOutcome.SOLD_OUT.name());
            for (Reason r : Reason.values()) {
                byReason.put(r, answers(registry, cell, r.name()));
            }
            for (Status.Code c : Status.Code.values()) {
                if (c != Status.Code.OK) {
                    byCode.put(c, answers(registry, cell, c.name()));
                }
            }
            for (Shed s : Shed.values()) {
                sheds.put(s, Counter.builder(Metrics.PREFIX + "router.sheds").tag("cause", label(s)).tag("cell", cell)
                        .description("Reserves answered by the router itself, by cause and tenant's cell")
                        .register(registry));
            }
        }

        private static Counter answers(MeterRegistry registry, String cell, String outcome) {
            return Counter.builder(Metrics.PREFIX + "router.reserves").tag("outcome", outcome).tag("cell", cell)
                    .description("Reserves answered, by outcome (RESERVED, SOLD_OUT, or the failure's reason)"
                            + " and tenant's cell")
                    .register(registry);
        }
    }

    private CellMeters cell(String cell) {
        CellMeters m = cells.get(cell);
        if (m != null) {
            return m;
        }
        String label = cells.size() < CELLS_MAX ? cell : CELL_OTHER;
        return cells.computeIfAbsent(label, c -> new CellMeters(registry, c));
    }

    private static String label(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /**
     * The topology's staleness ({@code lastunit_topology_staleness_seconds}) and the ZooKeeper
     * connection ({@code lastunit_zookeeper_connected}), read at scrape time.
     */
    public static void bindTopology(MeterRegistry registry, TopologyCache topology, CuratorFramework curator) {
        Gauge.builder(Metrics.PREFIX + "topology.staleness", topology, t -> t.staleness().toNanos() / 1e9)
                .baseUnit("seconds")
                .description("time since the topology view was last known current (0 while ZooKeeper is connected)")
                .register(registry);
        Gauge.builder(Metrics.PREFIX + "zookeeper.connected", curator,
                        z -> z.getZookeeperClient().isConnected() ? 1 : 0)
                .description("1 while the ZooKeeper session is connected").register(registry);
    }

    @Override
    public void reserveAnswered(String cellName, ReserveResponse response, Throwable error) {
        CellMeters cell = cell(cellName);
        if (error == null && response != null) {
            (response.getOutcome() == ReserveOutcome.RESERVED ? cell.reserved : cell.soldOut).increment();
            return;
        }
        Throwable t = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (t instanceof Failure f) {
            cell.byReason.get(f.reason()).increment();
            return;
        }
        Reason reason = GrpcErrors.errorInfo(t).map(i -> reasonOf(i.getReason())).orElse(null);
        if (reason != null) {
            cell.byReason.get(reason).increment();
            return;
        }
        Counter c = cell.byCode.get(Status.fromThrowable(t).getCode());
        (c != null ? c : cell.byCode.get(Status.Code.UNKNOWN)).increment();
    }

    private static Reason reasonOf(String name) {
        try {
            return Reason.valueOf(name);
        } catch (IllegalArgumentException e) {
            return null; // a reason this router does not know: counted by status code
        }
    }

    @Override
    public void shed(String cellName, Shed cause) {
        cell(cellName).sheds.get(cause).increment();
    }

    @Override
    public void retried() {
        retries.increment();
    }

    @Override
    public void rerouted(Reroute why) {
        reroutes.get(why).increment();
    }

    @Override
    public void pulled(Pull outcome) {
        pulls.get(outcome).increment();
    }
}
