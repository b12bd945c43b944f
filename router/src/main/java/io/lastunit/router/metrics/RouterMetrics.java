package io.lastunit.router.metrics;

import io.grpc.Status;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.common.metrics.Metrics;
import io.lastunit.common.topology.TopologyCache;
import io.lastunit.router.route.RouterObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.apache.curator.framework.CuratorFramework;

/**
 * A router's own meters (docs/observability.md, "Router"): Reserve answers by outcome, sheds by
 * cause, retries, re-routes, pulls, and, read at scrape time, the topology's staleness and the
 * ZooKeeper connection. Every counter is made at start, one per value of a bounded enum
 * ({@link ReserveOutcome}'s two answers, {@link Reason}, {@link Status.Code}, and the
 * {@link RouterObserver} enums), so an answer costs one map lookup and one increment, and no label
 * ever names a tenant, an item or a buyer. Thread-safe.
 */
public final class RouterMetrics implements RouterObserver {
    private final Counter reserved;
    private final Counter soldOut;
    private final Map<Reason, Counter> byReason = new EnumMap<>(Reason.class);
    /** Failures without a lastunit reason (a deadline, a cancellation, a transport error): by status code. */
    private final Map<Status.Code, Counter> byCode = new EnumMap<>(Status.Code.class);
    private final Map<Shed, Counter> sheds = new EnumMap<>(Shed.class);
    private final Map<Reroute, Counter> reroutes = new EnumMap<>(Reroute.class);
    private final Map<Pull, Counter> pulls = new EnumMap<>(Pull.class);
    private final Counter retries;

    public RouterMetrics(MeterRegistry registry) {
        reserved = answers(registry, ReserveOutcome.RESERVED.name());
        soldOut = answers(registry, ReserveOutcome.SOLD_OUT.name());
        for (Reason r : Reason.values()) {
            byReason.put(r, answers(registry, r.name()));
        }
        for (Status.Code c : Status.Code.values()) {
            if (c != Status.Code.OK) {
                byCode.put(c, answers(registry, c.name()));
            }
        }
        for (Shed s : Shed.values()) {
            sheds.put(s, Counter.builder(Metrics.PREFIX + "router.sheds").tag("cause", label(s))
                    .description("Reserves answered by the router itself, by cause").register(registry));
        }
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
    }

    private static Counter answers(MeterRegistry registry, String outcome) {
        return Counter.builder(Metrics.PREFIX + "router.reserves").tag("outcome", outcome)
                .description("Reserves answered, by outcome: RESERVED, SOLD_OUT, or the failure's reason")
                .register(registry);
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
    public void reserveAnswered(ReserveResponse response, Throwable error) {
        if (error == null && response != null) {
            (response.getOutcome() == ReserveOutcome.RESERVED ? reserved : soldOut).increment();
            return;
        }
        Throwable t = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (t instanceof Failure f) {
            byReason.get(f.reason()).increment();
            return;
        }
        Reason reason = GrpcErrors.errorInfo(t).map(i -> reasonOf(i.getReason())).orElse(null);
        if (reason != null) {
            byReason.get(reason).increment();
            return;
        }
        Counter c = byCode.get(Status.fromThrowable(t).getCode());
        (c != null ? c : byCode.get(Status.Code.UNKNOWN)).increment();
    }

    private static Reason reasonOf(String name) {
        try {
            return Reason.valueOf(name);
        } catch (IllegalArgumentException e) {
            return null; // a reason this router does not know: counted by status code
        }
    }

    @Override
    public void shed(Shed cause) {
        sheds.get(cause).increment();
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
