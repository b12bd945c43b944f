package io.lastunit.balancer.move;

import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.balancer.plan.BalancePolicy;
import io.lastunit.balancer.plan.DemandTracker;
import io.lastunit.balancer.plan.ItemView;
import io.lastunit.balancer.plan.PlannedMove;
import io.lastunit.balancer.plan.RegionLevel;
import io.lastunit.balancer.transfer.Fence;
import io.lastunit.balancer.transfer.MoveOrder;
import io.lastunit.balancer.transfer.TransferExecutor;
import io.lastunit.balancer.transfer.TransferReason;
import io.lastunit.balancer.transfer.TransferResult;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.invariant.ItemKey;
import io.lastunit.common.topology.Topology;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Decides and moves one item's stock, under that item's lock ({@link ItemLocks}): the loop's
 * step for an item (ship home, collapse, or follow demand) and a dry region's pull. Decisions
 * come from {@link BalancePolicy}; transfers go through {@link TransferExecutor}, one after
 * another. Thread-safe; blocking.
 */
public final class ItemMover {
    /** How long a pull without a deadline waits for the item's lock and may start transfers. */
    public static final Duration PULL_WAIT_DEFAULT = Duration.ofSeconds(5);
    /** The retry hint of a pull that could not get the item in time. */
    static final Duration BUSY_RETRY_AFTER = Duration.ofMillis(100);

    private final TransferExecutor executor;
    private final LevelReader reader;
    private final BalancePolicy policy;
    private final DemandTracker demand;
    private final ItemLocks locks;

    public ItemMover(TransferExecutor executor, LevelReader reader, BalancePolicy policy, DemandTracker demand,
            ItemLocks locks) {
        this.executor = executor;
        this.reader = reader;
        this.policy = policy;
        this.demand = demand;
        this.locks = locks;
    }

    /**
     * The loop's step for one item, from the view it read this interval: ship a collapsed item's
     * stray stock home, collapse an item at its end, or follow demand. Skips an item a pull holds
     * (the next interval sees what the pull did).
     *
     * @param budget most transfers to start
     * @return transfers started
     */
    public int balance(Fence fence, Topology topology, ItemView v, int budget) {
        ReentrantLock lock = locks.of(v.item());
        if (budget <= 0 || !v.active() || !lock.tryLock()) {
            return 0;
        }
        try {
            List<PlannedMove> moves;
            TransferReason reason;
            if (v.collapsed()) {
                moves = policy.collapse(v);
                reason = TransferReason.SHIP_HOME;
            } else if (policy.collapseDue(v)) {
                moves = policy.collapse(v);
                reason = TransferReason.COLLAPSE;
            } else {
                moves = policy.rebalance(v, demand.rates(v.item()));
                reason = TransferReason.REBALANCE;
            }
            int started = 0;
            for (PlannedMove m : moves) {
                if (started == budget) {
                    break;
                }
                executor.move(fence, order(topology, v.item(), m, reason));
                started++;
            }
            return started;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A dry region's pull: waits (until {@code deadlineNanos}) for whatever is in progress on the
     * item, reads it fresh, then collapses it when it is collapsed or at its end, or else moves
     * stock in from the regions with the most. Starts no transfer after the deadline; one started
     * is always finished. {@code moved} is what this call credited to the region, except when the
     * region already holds {@code quantity} on the fresh read: then it is what the region holds
     * (never 0, which would read as sold out everywhere).
     *
     * @throws Failure INVALID_FIELD (region) for a region the item is not sold in; ITEM_BUSY when the
     *     item could not be had in time; ITEM_NOT_FOUND, ITEM_NOT_ACTIVE, TENANT_MOVING,
     *     SHARD_UNAVAILABLE as the shards answer; NOT_LEADER when the fence closes
     */
    public PullResponse pull(Fence fence, Topology topology, ItemKey key, String region, long quantity,
            long deadlineNanos) throws InterruptedException {
        return pull(fence, topology, key, region, new PullCallers() {
            @Override
            public long deadlineNanos() {
                return deadlineNanos;
            }

            @Override
            public long close() {
                return quantity;
            }
        });
    }

    /**
     * The callers one pull answers together (concurrent pulls of one item into one region): the
     * latest of their deadlines so far, and, once the pull holds the item, the largest quantity
     * asked. After {@link #close()} no caller joins: each one's pull started after it asked.
     */
    public interface PullCallers {
        /** The latest deadline ({@link System#nanoTime()}) of the callers so far. */
        long deadlineNanos();

        /** Called once, holding the item's lock and before reading it: no caller joins after; the largest quantity. */
        long close();
    }

    /** Longest single wait for the item's lock before the callers' deadline is looked at again. */
    private static final long LOCK_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /**
     * {@link #pull(Fence, Topology, ItemKey, String, long, long)} for several callers at once:
     * waits for the item's lock until the latest of their deadlines, then closes the group and
     * pulls the largest quantity any of them asked for.
     */
    public PullResponse pull(Fence fence, Topology topology, ItemKey key, String region, PullCallers callers)
            throws InterruptedException {
        ReentrantLock lock = locks.of(key);
        while (!lock.tryLock(Math.min(LOCK_SLICE_NANOS, Math.max(0, callers.deadlineNanos() - System.nanoTime())),
                TimeUnit.NANOSECONDS)) {
            if (callers.deadlineNanos() - System.nanoTime() <= 0) {
                throw Failure.retryable(Reason.ITEM_BUSY, "pull for " + key + " in " + region
                        + ": another pull or transfer of the item did not finish in time", BUSY_RETRY_AFTER);
            }
        }
        try {
            long quantity = callers.close();
            long deadlineNanos = callers.deadlineNanos();
            fence.check();
            ItemView v = reader.item(topology, key);
            RegionLevel into = v.region(region).orElseThrow(() -> Failure.invalid("region", "'" + region + "': item "
                    + key + " is sold in " + v.regions().stream().map(RegionLevel::region).toList()));
            if (!v.active()) {
                throw Failure.retryable(Reason.ITEM_NOT_ACTIVE, "item " + key + " is not ACTIVE on every shard",
                        Duration.ofSeconds(1));
            }
            PullResponse.Builder answer = PullResponse.newBuilder().setHomeRegion(v.homeRegion());
            if (v.collapsed() || policy.collapseDue(v)) {
                TransferReason reason = v.collapsed() ? TransferReason.SHIP_HOME : TransferReason.COLLAPSE;
                List<TransferResult> results = new java.util.ArrayList<>();
                long moved = run(fence, topology, key, policy.collapse(v), reason, region, Long.MAX_VALUE, null,
                        results);
                for (TransferResult r : results) {
                    if (!marked(r)) {
                        // A region not known to be marked collapsed could still place a hold for a
                        // key this Reserve would place at home: not "collapsed" until all are.
                        throw Failure.retryable(Reason.ITEM_BUSY, "pull for " + key + " in " + region
                                + ": collapsing home did not reach every region (" + r.problem() + ")",
                                BUSY_RETRY_AFTER);
                    }
                }
                return answer.setCollapsed(true).setMoved(moved).build();
            }
            if (into.available() >= quantity) {
                // Filled while this pull waited (by the pull it waited for, or a release there). A
                // router reads moved = 0 as "no region has stock" (a final SOLD_OUT), so answer what
                // the region holds now: the caller sends its Reserve again.
                return answer.setMoved(into.available()).build();
            }
            long need = quantity - into.available();
            List<PlannedMove> moves = policy.pull(v, region, need, demand.rates(key));
            List<TransferResult> results = new java.util.ArrayList<>();
            long moved = run(fence, topology, key, moves, TransferReason.PULL, region, need, deadlineNanos, results);
            if (moved == 0 && results.stream().anyMatch(r -> r.problem() != null)) {
                // moved = 0 tells the router no region has stock (a final SOLD_OUT): not when the
                // transfers failed while donors had stock.
                throw Failure.retryable(Reason.ITEM_BUSY, "pull for " + key + " in " + region + ": no transfer"
                        + " completed (" + results.stream().filter(r -> r.problem() != null).findFirst().get().problem()
                        + ")", BUSY_RETRY_AFTER);
            }
            return answer.setMoved(moved).build();
        } finally {
            lock.unlock();
        }
    }

    /** Step 1 committed (the source is marked when the move collapses it). */
    private static boolean marked(TransferResult r) {
        return r.stage() != TransferResult.Stage.UNKNOWN
                && !(r.stage() == TransferResult.Stage.NOTHING && r.problem() != null);
    }

    /**
     * Runs moves in order until {@code need} units reached {@code region} or the deadline (null:
     * none) passed; returns the units credited there and adds each move's result to {@code results}.
     */
    private long run(Fence fence, Topology topology, ItemKey key, List<PlannedMove> moves, TransferReason reason,
            String region, long need, Long deadlineNanos, List<TransferResult> results) {
        long credited = 0;
        for (PlannedMove m : moves) {
            if (credited >= need || (deadlineNanos != null && System.nanoTime() - deadlineNanos > 0)) {
                break;
            }
            TransferResult r = executor.move(fence, order(topology, key, m, reason));
            results.add(r);
            if (m.to().region().equals(region)) {
                credited += r.creditedQuantity();
            }
        }
        return credited;
    }

    private static MoveOrder order(Topology topology, ItemKey key, PlannedMove m, TransferReason reason) {
        return new MoveOrder(key, shard(topology, m.from()), shard(topology, m.to()), m.maxQuantity(), m.minQuantity(),
                m.collapse(), reason);
    }

    private static ShardInfo shard(Topology topology, RegionLevel r) {
        return topology.shard(r.shardId()).orElseThrow(() -> Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE,
                "shard " + r.shardId() + " of region " + r.region() + " is not in the topology", Duration.ofSeconds(1)));
    }
}
