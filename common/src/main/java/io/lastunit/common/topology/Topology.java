package io.lastunit.common.topology;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * One immutable snapshot of the topology (DESIGN §3): the cells, the shards of each cell, the
 * shards that are live, and where each tenant lives with its epoch. Routers, shard nodes and the
 * balancer take one snapshot per request from {@link TopologyCache#current()} and make every
 * decision of that request against it, carrying the tenant's epoch along.
 *
 * <p>Immutable and thread-safe. {@link #of} checks the invariants the store keeps (unique cell
 * names and shard ids, every shard in a known cell and one of its regions, tenant keys matching
 * their placements) and refuses a snapshot that breaks them.
 *
 * <p>Hazard: placement deliberately ignores liveness. Stock lives in the database of the shard
 * that {@link Placement} picks over the cell's fixed shard set; routing around a dead shard would
 * look for stock where it is not. A dead shard makes its items unavailable, never re-placed.
 */
public final class Topology {
    /** The cell of every tenant that has no placement of its own. */
    public static final String SHARED_CELL = "shared";
    /** No cells, no shards, no tenants. */
    public static final Topology EMPTY = of(List.of(), List.of(), List.of(), Map.of());

    private static final Comparator<ShardInfo> BY_ID = Comparator.comparing(ShardInfo::getShardId);

    private final Map<String, Cell> cells;
    private final Map<String, ShardInfo> shardsById;
    private final Map<String, List<ShardInfo>> shardsByCell;
    /** cell → region → shards sorted by id: the hot path of {@link #shardFor}. */
    private final Map<String, Map<String, List<ShardInfo>>> shardsByCellRegion;
    private final Map<String, LiveShard> live;
    private final Map<String, Versioned<TenantPlacement>> tenants;

    private Topology(Map<String, Cell> cells, Map<String, ShardInfo> shardsById,
            Map<String, List<ShardInfo>> shardsByCell, Map<String, Map<String, List<ShardInfo>>> shardsByCellRegion,
            Map<String, LiveShard> live, Map<String, Versioned<TenantPlacement>> tenants) {
        this.cells = cells;
        this.shardsById = shardsById;
        this.shardsByCell = shardsByCell;
        this.shardsByCellRegion = shardsByCellRegion;
        this.live = live;
        this.tenants = tenants;
    }

    /**
     * A snapshot of the given values.
     *
     * @param tenants tenant id → placement and epoch (the znode version of {@code tenants/{tenant}})
     * @throws IllegalArgumentException naming every broken invariant
     */
    public static Topology of(Collection<Cell> cells, Collection<ShardInfo> shards, Collection<LiveShard> live,
            Map<String, Versioned<TenantPlacement>> tenants) {
        List<String> problems = new ArrayList<>();
        Map<String, Cell> cellMap = new TreeMap<>();
        for (Cell cell : cells) {
            if (cellMap.put(cell.getName(), cell) != null) {
                problems.add("cell " + cell.getName() + " appears twice");
            }
        }
        List<ShardInfo> sorted = new ArrayList<>(shards);
        sorted.sort(BY_ID);
        Map<String, ShardInfo> byId = new LinkedHashMap<>();
        Map<String, List<ShardInfo>> byCell = new TreeMap<>();
        Map<String, Map<String, List<ShardInfo>>> byCellRegion = new HashMap<>();
        for (ShardInfo shard : sorted) {
            Cell cell = cellMap.get(shard.getCell());
            if (byId.put(shard.getShardId(), shard) != null) {
                problems.add("shard " + shard.getShardId() + " appears twice");
            } else if (cell == null) {
                problems.add("shard " + shard.getShardId() + " is in unknown cell " + shard.getCell());
            } else if (!cell.getRegionsList().contains(shard.getRegion())) {
                problems.add("shard " + shard.getShardId() + " is in region " + shard.getRegion()
                        + ", not one of cell " + cell.getName() + "'s regions " + cell.getRegionsList());
            }
            byCell.computeIfAbsent(shard.getCell(), c -> new ArrayList<>()).add(shard);
            byCellRegion.computeIfAbsent(shard.getCell(), c -> new HashMap<>())
                    .computeIfAbsent(shard.getRegion(), r -> new ArrayList<>()).add(shard);
        }
        Map<String, LiveShard> liveMap = new TreeMap<>();
        for (LiveShard l : live) {
            if (liveMap.put(l.getShardId(), l) != null) {
                problems.add("live shard " + l.getShardId() + " appears twice");
            }
        }
        for (Map.Entry<String, Versioned<TenantPlacement>> e : tenants.entrySet()) {
            TenantPlacement p = e.getValue().value();
            if (!e.getKey().equals(p.getTenantId())) {
                problems.add("tenant " + e.getKey() + " holds the placement of tenant_id=" + p.getTenantId());
            }
            if (p.getCell().isEmpty()) {
                problems.add("tenant " + e.getKey() + " has no cell");
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid topology: " + String.join("; ", problems));
        }
        byCell.replaceAll((c, list) -> List.copyOf(list));
        byCellRegion.values().forEach(regions -> regions.replaceAll((r, list) -> List.copyOf(list)));
        byCellRegion.replaceAll((c, regions) -> Map.copyOf(regions));
        return new Topology(Collections.unmodifiableMap(cellMap), Collections.unmodifiableMap(byId),
                Collections.unmodifiableMap(byCell), Map.copyOf(byCellRegion), Collections.unmodifiableMap(liveMap),
                Collections.unmodifiableMap(new TreeMap<>(tenants)));
    }

    /** The tenant's cell: its placement's, or {@value #SHARED_CELL} when it has none. */
    public String cellOf(String tenant) {
        Versioned<TenantPlacement> p = tenants.get(tenant);
        return p == null ? SHARED_CELL : p.value().getCell();
    }

    /** The tenant's epoch (the version of {@code tenants/{tenant}}), or -1 when it has no placement. */
    public int epochOf(String tenant) {
        Versioned<TenantPlacement> p = tenants.get(tenant);
        return p == null ? -1 : p.version();
    }

    /** The tenant's state; a tenant without a placement is {@link TenantState#ACTIVE} in the shared cell. */
    public TenantState stateOf(String tenant) {
        Versioned<TenantPlacement> p = tenants.get(tenant);
        return p == null ? TenantState.ACTIVE : p.value().getState();
    }

    /**
     * The move that names the tenant ({@code TenantPlacement.move_id}): set from a move's start
     * (the tenant still selling, ACTIVE) through its fence (MOVING) to its clean-up; empty when
     * no move runs. The balancer leaves a tenant with a move alone.
     */
    public String moveOf(String tenant) {
        Versioned<TenantPlacement> p = tenants.get(tenant);
        return p == null ? "" : p.value().getMoveId();
    }

    /** The tenant's placement and epoch, when it has one. */
    public Optional<Versioned<TenantPlacement>> placement(String tenant) {
        return Optional.ofNullable(tenants.get(tenant));
    }

    /** Every tenant with a placement, by tenant id. */
    public Map<String, Versioned<TenantPlacement>> tenants() {
        return tenants;
    }

    /** The shards of {@code cell} in {@code region}, sorted by shard id; empty when there are none. */
    public List<ShardInfo> shards(String cell, String region) {
        Map<String, List<ShardInfo>> regions = shardsByCellRegion.get(cell);
        if (regions == null) {
            return List.of();
        }
        return regions.getOrDefault(region, List.of());
    }

    /** Every shard of {@code cell}, sorted by shard id. */
    public List<ShardInfo> shards(String cell) {
        return shardsByCell.getOrDefault(cell, List.of());
    }

    /**
     * The shard that holds {@code (tenant, item)} in {@code region}: {@link Placement#pick} over
     * the shards of the tenant's cell in that region. Empty when that cell has no shard there.
     * Live or not: see the class comment.
     */
    public Optional<ShardInfo> shardFor(String tenant, String item, String region) {
        List<ShardInfo> candidates = shards(cellOf(tenant), region);
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(Placement.pick(tenant, item, candidates));
    }

    /** True when a shard node has registered {@code live/{shardId}}. */
    public boolean isLive(String shardId) {
        return live.containsKey(shardId);
    }

    /** The registration of a live shard node. */
    public Optional<LiveShard> liveShard(String shardId) {
        return Optional.ofNullable(live.get(shardId));
    }

    /** The ids of the live shards, sorted. */
    public Set<String> liveShardIds() {
        return live.keySet();
    }

    /** Every cell, sorted by name. */
    public Collection<Cell> cells() {
        return cells.values();
    }

    public Optional<Cell> cell(String name) {
        return Optional.ofNullable(cells.get(name));
    }

    public Optional<ShardInfo> shard(String shardId) {
        return Optional.ofNullable(shardsById.get(shardId));
    }

    @Override
    public String toString() {
        return "Topology{cells=" + cells.keySet() + ", shards=" + shardsById.size() + ", live=" + live.size()
                + ", tenants=" + tenants.size() + "}";
    }
}
