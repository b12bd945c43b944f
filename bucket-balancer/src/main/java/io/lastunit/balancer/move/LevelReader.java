package io.lastunit.balancer.move;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Status;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.balancer.plan.ItemView;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.invariant.ItemKey;
import io.lastunit.common.topology.Topology;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads item levels from the shards ({@code ListLevels}) and assembles {@link ItemView}s: every
 * item of a cell for the balancing loop, or one item fresh for a pull. A level counts only when
 * the shard that reported it is the one placement gives the item in that region and the tenant
 * lives in that cell (leftovers of a tenant move are ignored). Calls go out in parallel, each
 * under {@code callTimeout}. Thread-safe; blocking.
 */
public final class LevelReader {
    private static final Logger log = LoggerFactory.getLogger(LevelReader.class);

    /**
     * The items of one cell that could be judged.
     *
     * @param views      complete views of the items of ACTIVE tenants of the cell
     * @param incomplete items left out: a region's shard did not answer, or the shards disagree
     * @param problems   shards that did not answer, with why
     */
    public record CellLevels(List<ItemView> views, int incomplete, List<String> problems) {
    }

    private final ShardChannels channels;
    private final Duration callTimeout;

    public LevelReader(ShardChannels channels, Duration callTimeout) {
        this.channels = channels;
        this.callTimeout = callTimeout;
    }

    /**
     * Every item of the cell's tenants that no move names: a tenant being moved between cells
     * (copying while it still sells, fenced MOVING, or cleaning up after its flip) is left alone,
     * so that what the mover copies and verifies is not changed under it by transfers.
     */
    public CellLevels cell(Topology topology, String cell) throws InterruptedException {
        List<ShardInfo> shards = topology.shards(cell);
        List<String> problems = new ArrayList<>();
        Map<ShardInfo, ListLevelsResponse> answers = ask(shards, ListLevelsRequest.getDefaultInstance(), problems);
        Map<ItemKey, Map<String, ItemLevel>> byItem = new TreeMap<>();
        for (Map.Entry<ShardInfo, ListLevelsResponse> e : answers.entrySet()) {
            for (ItemLevel l : e.getValue().getItemsList()) {
                if (topology.cellOf(l.getTenantId()).equals(cell) && !moving(topology, l.getTenantId())
                        && owns(topology, e.getKey(), l)) {
                    byItem.computeIfAbsent(new ItemKey(l.getTenantId(), l.getItemId()), k -> new LinkedHashMap<>())
                            .put(e.getKey().getShardId(), l);
                }
            }
        }
        List<ItemView> views = new ArrayList<>();
        int incomplete = 0;
        for (Map.Entry<ItemKey, Map<String, ItemLevel>> e : byItem.entrySet()) {
            try {
                views.add(ItemView.of(e.getKey(), e.getValue()));
            } catch (IllegalArgumentException ex) {
                incomplete++;
                log.debug("cell {}: {}", cell, ex.getMessage());
            }
        }
        return new CellLevels(views, incomplete, problems);
    }

    /**
     * The item as its shards report it now.
     *
     * @throws Failure ITEM_NOT_FOUND when no shard of the tenant's cell has it, SHARD_UNAVAILABLE
     *     when a shard of one of its regions did not answer, TENANT_MOVING (retryable) for a tenant
     *     that a move names: no transfer is made for it until the move has finished
     */
    public ItemView item(Topology topology, ItemKey key) throws InterruptedException {
        if (moving(topology, key.tenant())) {
            throw Failure.retryable(Reason.TENANT_MOVING, "tenant " + key.tenant() + " is moving between cells (move "
                    + topology.moveOf(key.tenant()) + ", " + topology.stateOf(key.tenant()) + "); no transfer is made"
                    + " for it until the move has finished", Duration.ofSeconds(1));
        }
        String cell = topology.cellOf(key.tenant());
        Cell c = topology.cell(cell).orElseThrow(() -> Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE,
                "tenant " + key.tenant() + " lives in cell " + cell + ", which the topology does not have",
                Duration.ofSeconds(1)));
        List<ShardInfo> shards = new ArrayList<>();
        for (String region : c.getRegionsList()) {
            topology.shardFor(key.tenant(), key.item(), region).ifPresent(shards::add);
        }
        List<String> problems = new ArrayList<>();
        ListLevelsRequest req = ListLevelsRequest.newBuilder().setTenantId(key.tenant()).setItemId(key.item()).build();
        Map<ShardInfo, ListLevelsResponse> answers = ask(shards, req, problems);
        Map<String, ItemLevel> levels = new LinkedHashMap<>();
        for (Map.Entry<ShardInfo, ListLevelsResponse> e : answers.entrySet()) {
            for (ItemLevel l : e.getValue().getItemsList()) {
                if (l.getTenantId().equals(key.tenant()) && l.getItemId().equals(key.item())
                        && owns(topology, e.getKey(), l)) {
                    levels.put(e.getKey().getShardId(), l);
                }
            }
        }
        if (levels.isEmpty()) {
            if (!problems.isEmpty()) {
                throw Failure.retryable(Reason.SHARD_UNAVAILABLE, key + ": " + String.join("; ", problems),
                        Duration.ofMillis(500));
            }
            throw Failure.of(Reason.ITEM_NOT_FOUND, "no shard of cell " + cell + " has item " + key);
        }
        try {
            return ItemView.of(key, levels);
        } catch (IllegalArgumentException e) {
            throw Failure.retryable(Reason.SHARD_UNAVAILABLE, e.getMessage()
                    + (problems.isEmpty() ? "" : " (" + String.join("; ", problems) + ")"), Duration.ofMillis(500));
        }
    }

    /** A move names the tenant (copying, fenced or cleaning up), or it is MOVING. */
    static boolean moving(Topology topology, String tenant) {
        return topology.stateOf(tenant) != TenantState.ACTIVE || !topology.moveOf(tenant).isEmpty();
    }

    private static boolean owns(Topology topology, ShardInfo shard, ItemLevel l) {
        return topology.shardFor(l.getTenantId(), l.getItemId(), l.getRegion())
                .map(s -> s.getShardId().equals(shard.getShardId())).orElse(false);
    }

    private Map<ShardInfo, ListLevelsResponse> ask(List<ShardInfo> shards, ListLevelsRequest req,
            List<String> problems) throws InterruptedException {
        Map<ShardInfo, ListenableFuture<ListLevelsResponse>> futures = new LinkedHashMap<>();
        for (ShardInfo s : shards) {
            futures.put(s, ShardServiceGrpc.newFutureStub(channels.get(s.getAddress()))
                    .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS).listLevels(req));
        }
        Map<ShardInfo, ListLevelsResponse> answers = new LinkedHashMap<>();
        try {
            for (Map.Entry<ShardInfo, ListenableFuture<ListLevelsResponse>> e : futures.entrySet()) {
                try {
                    answers.put(e.getKey(), e.getValue().get(callTimeout.toMillis() + 1_000, TimeUnit.MILLISECONDS));
                } catch (ExecutionException ex) {
                    Status st = Status.fromThrowable(ex.getCause());
                    problems.add("shard " + e.getKey().getShardId() + ": " + st.getCode()
                            + (st.getDescription() == null ? "" : " " + st.getDescription()));
                } catch (TimeoutException ex) {
                    problems.add("shard " + e.getKey().getShardId() + ": no answer within " + callTimeout.toMillis()
                            + " ms");
                }
            }
        } finally {
            futures.values().forEach(f -> f.cancel(true));
        }
        return answers;
    }
}
