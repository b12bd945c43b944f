package io.lastunit.common.invariant;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Channel;
import io.grpc.Status;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.ListTransfersRequest;
import io.lastunit.api.shard.v1.ListTransfersResponse;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferState;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Topology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Checks the item invariant across shards (DESIGN §1) over the internal shard API, cell by cell:
 * the PENDING OUT records of every shard of the cell ({@code ListTransfers}), the levels of every
 * item ({@code ListLevels}), then, at each record's target, whether the IN record is there
 * ({@code ListTransfers} by id), and {@link CrossShardInvariant} over the lot. The balancer runs
 * it on a schedule; {@code admin check} can run it on demand with its own channels.
 *
 * <p>A cell is checked only when every one of its shards answered every call; otherwise it is
 * reported as a problem and none of its items is judged (a missing shard would look like lost
 * stock). Items of tenants that now live in another cell (left behind by a move) are skipped.
 *
 * <p>Hazards: one check is not an atomic cut across databases; see {@link DriftTracker}. And a
 * shard answers at most its oldest 10,000 PENDING records per call: with more in flight than that
 * (a balancer stalled for long), the rest count as missing units until recovery catches up.
 *
 * <p>Thread-safe if the channel function is; blocking (one call per shard at a time, in
 * parallel across shards, each under {@code callTimeout}). Holds no channels of its own.
 */
public final class CrossShardChecker {
    /** Most transfer ids asked of one shard in one ListTransfers call. */
    public static final int IDS_PER_CALL_MAX = 500;

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
        Map<ShardInfo, ListTransfersResponse> pendingByShard =
                ask(shards, s -> stub(s).listTransfers(ListTransfersRequest.getDefaultInstance()), problems);
        Map<ShardInfo, ListLevelsResponse> levelsByShard =
                ask(shards, s -> stub(s).listLevels(ListLevelsRequest.getDefaultInstance()), problems);
        if (!problems.isEmpty()) {
            return unchecked(cell, problems);
        }
        List<Transfer> pendingOut = new ArrayList<>();
        Map<String, ShardInfo> sourceOf = new LinkedHashMap<>();
        for (Map.Entry<ShardInfo, ListTransfersResponse> e : pendingByShard.entrySet()) {
            for (Transfer t : e.getValue().getTransfersList()) {
                if (t.getDirection() == TransferDirection.OUT && t.getState() == TransferState.PENDING
                        && inCell(topology, t.getTenantId(), cell)) {
                    pendingOut.add(t);
                    sourceOf.put(t.getTransferId(), e.getKey());
                }
            }
        }
        Set<String> credited = creditedAtPeers(topology, pendingOut, problems);
        if (!problems.isEmpty()) {
            return unchecked(cell, problems);
        }
        List<ItemLevel> levels = new ArrayList<>();
        for (ListLevelsResponse r : levelsByShard.values()) {
            for (ItemLevel l : r.getItemsList()) {
                if (inCell(topology, l.getTenantId(), cell)) {
                    levels.add(l);
                }
            }
        }
        List<PendingTransfer> pending = new ArrayList<>();
        for (Transfer t : pendingOut) {
            pending.add(new PendingTransfer(t.getTransferId(), new ItemKey(t.getTenantId(), t.getItemId()),
                    sourceOf.get(t.getTransferId()).getShardId(), t.getPeerShardId(), t.getQuantity(),
                    credited.contains(t.getTransferId())));
        }
        return new CrossShardReport(List.of(cell), CrossShardInvariant.balances(levels, pending), List.of());
    }

    private static boolean inCell(Topology topology, String tenant, String cell) {
        return topology.cellOf(tenant).equals(cell);
    }

    /** Ids of the pending records whose target holds the IN record. */
    private Set<String> creditedAtPeers(Topology topology, List<Transfer> pendingOut, List<String> problems)
            throws InterruptedException {
        Map<ShardInfo, List<String>> idsByPeer = new LinkedHashMap<>();
        for (Transfer t : pendingOut) {
            ShardInfo peer = topology.shard(t.getPeerShardId()).orElse(null);
            if (peer == null) {
                problems.add("transfer " + t.getTransferId() + " of " + t.getTenantId() + "/" + t.getItemId()
                        + " names target shard " + t.getPeerShardId() + ", which the topology does not know");
                continue;
            }
            idsByPeer.computeIfAbsent(peer, p -> new ArrayList<>()).add(t.getTransferId());
        }
        Set<String> credited = new HashSet<>();
        for (Map.Entry<ShardInfo, List<String>> e : idsByPeer.entrySet()) {
            List<String> ids = e.getValue();
            for (int from = 0; from < ids.size(); from += IDS_PER_CALL_MAX) {
                ListTransfersRequest req = ListTransfersRequest.newBuilder()
                        .addAllTransferIds(ids.subList(from, Math.min(ids.size(), from + IDS_PER_CALL_MAX))).build();
                Map<ShardInfo, ListTransfersResponse> answer = ask(List.of(e.getKey()),
                        s -> stub(s).listTransfers(req), problems);
                for (ListTransfersResponse r : answer.values()) {
                    for (Transfer t : r.getTransfersList()) {
                        if (t.getDirection() == TransferDirection.IN) {
                            credited.add(t.getTransferId());
                        }
                    }
                }
            }
        }
        return credited;
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
