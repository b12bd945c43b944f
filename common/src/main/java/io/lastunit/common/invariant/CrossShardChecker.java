package io.lastunit.common.invariant;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Channel;
import io.grpc.Status;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.ListTransfersRequest;
import io.lastunit.api.shard.v1.ListTransfersResponse;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Topology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Checks the item invariant across shards (DESIGN §1) over the internal shard API, cell by cell.
 * Each shard of the cell answers one ListLevels with its levels and its transfer records read in
 * one snapshot (every PENDING record and those of the last {@link #TRANSFER_WINDOW}); the
 * {@link TransferMatcher} then counts each transfer whose OUT and IN records the snapshots did not
 * see together as in flight, asking a shard by id (ListTransfers) for a side its snapshot did not
 * list, and {@link CrossShardInvariant} sums the lot. One check is therefore exact although the
 * shards are read at different moments: a transfer step committing between two reads no longer
 * shows up as a drift. The balancer runs it on a schedule; {@code admin check} can run it on
 * demand with its own channels.
 *
 * <p>A cell is checked only when every one of its shards answered every call; otherwise it is
 * reported as a problem and none of its items is judged (a missing shard would look like lost
 * stock). Items of tenants that now live in another cell (left behind by a move) are skipped.
 *
 * <p>Hazards: a shard lists at most 10,000 records per snapshot; with more PENDING records or
 * more transfers in the window than that (a balancer stalled for long, or moving stock faster
 * than 300 transfers a second per shard), the cell is reported as not checked. A transfer step
 * whose transaction lasts longer than the window could be counted on the wrong side of a
 * snapshot, and snapshots taken more than {@link #SNAPSHOT_SPREAD_MAX} apart are not judged;
 * {@link DriftTracker} still asks for a drift to persist before anyone is alerted.
 *
 * <p>Thread-safe if the channel function is; blocking (one call per shard at a time, in
 * parallel across shards, each under {@code callTimeout}). Holds no channels of its own.
 */
public final class CrossShardChecker {
    /** Most transfer ids asked of one shard in one ListTransfers call. */
    public static final int IDS_PER_CALL_MAX = 500;
    /**
     * How far back each snapshot lists transfer records: far longer than a transfer step's
     * transaction, short enough that a busy balancer's records fit in one answer.
     */
    public static final Duration TRANSFER_WINDOW = Duration.ofSeconds(30);
    /**
     * Longest time from asking the first shard for its snapshot to the last answer: two snapshots
     * must lie well within one window of each other (see {@link TransferMatcher}).
     */
    public static final Duration SNAPSHOT_SPREAD_MAX = TRANSFER_WINDOW.dividedBy(2);

    private final Function<String, Channel> channels;
    private final Duration callTimeout;

    /**
     * @param channels    a channel to the shard node at a {@code host:port} address (owned by the caller)
     * @param callTimeout deadline of each call
     */
    public CrossShardChecker(Function<String, Channel> channels, Duration callTimeout) {
        this.channels = Objects.requireNonNull(channels, "channels");
        if (callTimeout.isNegative() || callTimeout.isZero()) {
            throw new IllegalArgumentException("callTimeout must be positive, got " + callTimeout);
        }
        this.callTimeout = callTimeout;
    }

    /** Checks every cell of the topology. */
    public CrossShardReport check(Topology topology) throws InterruptedException {
        List<String> checked = new ArrayList<>();
        List<ItemBalance> balances = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (Cell cell : topology.cells()) {
            CrossShardReport r = checkCell(topology, cell.getName());
            checked.addAll(r.cellsChecked());
            balances.addAll(r.balances());
            problems.addAll(r.problems());
        }
        return new CrossShardReport(checked, balances, problems);
    }

    /** Checks one cell (a cell without shards is checked trivially). */
    public CrossShardReport checkCell(Topology topology, String cell) throws InterruptedException {
        List<ShardInfo> shards = topology.shards(cell);
        List<String> problems = new ArrayList<>();
        ListLevelsRequest snapshot = ListLevelsRequest.newBuilder()
                .setTransferWindowMs(TRANSFER_WINDOW.toMillis()).build();
        long started = System.nanoTime();
        Map<ShardInfo, ListLevelsResponse> snapshots = ask(shards, s -> stub(s).listLevels(snapshot), problems);
        long spreadMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        if (spreadMs > SNAPSHOT_SPREAD_MAX.toMillis()) {
            problems.add("the shards' snapshots took " + spreadMs + " ms, more than the "
                    + SNAPSHOT_SPREAD_MAX.toMillis() + " ms within which the matcher can tell their order");
        }
        Map<String, ShardInfo> byId = new LinkedHashMap<>();
        for (Map.Entry<ShardInfo, ListLevelsResponse> e : snapshots.entrySet()) {
            byId.put(e.getKey().getShardId(), e.getKey());
            if (!e.getValue().getShardId().equals(e.getKey().getShardId())) {
                problems.add("shard " + e.getKey().getShardId() + " at " + e.getKey().getAddress()
                        + " answered as shard " + e.getValue().getShardId());
            }
        }
        if (!problems.isEmpty()) {
            return unchecked(cell, problems);
        }
        TransferMatcher.Result matched = TransferMatcher.match(snapshots.values(), t -> inCell(topology, t, cell),
                (shardId, ids) -> {
                    List<String> failed = new ArrayList<>();
                    ListTransfersRequest req = ListTransfersRequest.newBuilder().addAllTransferIds(ids).build();
                    Map<ShardInfo, ListTransfersResponse> answer = ask(List.of(byId.get(shardId)),
                            s -> stub(s).listTransfers(req), failed);
                    if (!failed.isEmpty()) {
                        throw new TransferMatcher.LookupFailed(failed.get(0));
                    }
                    return answer.values().iterator().next().getTransfersList();
                });
        if (!matched.problems().isEmpty()) {
            return unchecked(cell, matched.problems());
        }
        return new CrossShardReport(List.of(cell), matched.balances(), List.of());
    }

    private static boolean inCell(Topology topology, String tenant, String cell) {
        return topology.cellOf(tenant).equals(cell);
    }

    private ShardServiceGrpc.ShardServiceFutureStub stub(ShardInfo shard) {
        return ShardServiceGrpc.newFutureStub(channels.apply(shard.getAddress()))
                .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One call per shard, in parallel; a shard that fails adds a problem and is absent from the answer. */
    private <T> Map<ShardInfo, T> ask(List<ShardInfo> shards, Function<ShardInfo, ListenableFuture<T>> call,
            List<String> problems) throws InterruptedException {
        Map<ShardInfo, ListenableFuture<T>> futures = new LinkedHashMap<>();
        for (ShardInfo s : shards) {
            try {
                futures.put(s, call.apply(s));
            } catch (RuntimeException e) {
                problems.add("shard " + s.getShardId() + " at " + s.getAddress() + ": " + e);
            }
        }
        Map<ShardInfo, T> answers = new LinkedHashMap<>();
        for (Map.Entry<ShardInfo, ListenableFuture<T>> e : futures.entrySet()) {
            ShardInfo s = e.getKey();
            try {
                answers.put(s, e.getValue().get(callTimeout.toMillis() + 1_000, TimeUnit.MILLISECONDS));
            } catch (ExecutionException ex) {
                Status st = Status.fromThrowable(ex.getCause());
                problems.add("shard " + s.getShardId() + " at " + s.getAddress() + ": " + st.getCode()
                        + (st.getDescription() == null ? "" : " " + st.getDescription()));
            } catch (TimeoutException ex) {
                e.getValue().cancel(true);
                problems.add("shard " + s.getShardId() + " at " + s.getAddress() + ": no answer within "
                        + callTimeout.toMillis() + " ms");
            } catch (InterruptedException ex) {
                futures.values().forEach(f -> f.cancel(true));
                throw ex;
            }
        }
        return answers;
    }

    private static CrossShardReport unchecked(String cell, List<String> problems) {
        return new CrossShardReport(List.of(), List.of(),
                List.of("cell " + cell + " not checked: " + String.join("; ", problems)));
    }
}
