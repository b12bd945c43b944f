package io.lastunit.admin.move;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.common.topology.Versioned;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Plans a tenant move: checks that it can be made and records it PLANNED, or refuses it with its
 * reason and changes nothing. The checks, in order: the target cell exists (UNKNOWN_CELL) and a
 * repeat of a recorded move id names the same tenant and cell (it returns the move as recorded);
 * no move of the tenant runs (MOVE_RUNNING); the tenant does not live in the target already
 * (TENANT_ALREADY_IN_CELL); it has items on its cell's shards (UNKNOWN_TENANT; CountItems on
 * every shard, SHARD_UNAVAILABLE when one cannot be asked); the target serves every region those
 * items are on (CELL_LACKS_REGIONS). The record is {@link TopologyStore#startMove}: the move and
 * the tenant's placement naming it, in one transaction, so of two racing starts one is recorded
 * and the other is MOVE_RUNNING.
 *
 * <p>Thread-safe (stateless but for its collaborators). Blocking.
 */
public final class MoveStarter {
    /** The pause budget of a move that names none (StartMoveRequest.max_pause_ms = 0). */
    public static final Duration MAX_PAUSE_DEFAULT = Duration.ofSeconds(2);
    public static final Duration MAX_PAUSE_MIN = Duration.ofMillis(100);
    public static final Duration MAX_PAUSE_MAX = Duration.ofSeconds(60);
    /** Retry hint of a refusal because a shard could not be asked. */
    static final Duration RETRY_AFTER = Duration.ofSeconds(1);

    private final TopologyStore store;
    private final TenantShards shards;
    private final InstantSource clock;
    private final String owner;

    MoveStarter(TopologyStore store, TenantShards shards, InstantSource clock, String owner) {
        this.store = store;
        this.shards = shards;
        this.clock = clock;
        this.owner = owner;
    }

    /**
     * @param maxPauseMs the pause budget, within [{@link #MAX_PAUSE_MIN}, {@link #MAX_PAUSE_MAX}]; 0 for
     *                   {@link #MAX_PAUSE_DEFAULT}
     * @param moveId     the move's id, or empty for a new one
     * @return the move as recorded: PLANNED, or a repeat's move at whatever step it is
     * @throws Failure with the refusal's reason (see the class comment)
     */
    public Versioned<Move> start(String tenant, String toCell, long maxPauseMs, String moveId)
            throws InterruptedException {
        List<Cell> cells = store.cells();
        Optional<Cell> target = cells.stream().filter(c -> c.getName().equals(toCell)).findFirst();
        if (target.isEmpty()) {
            throw Failure.of(Reason.UNKNOWN_CELL, "no cell " + toCell + "; the cells are "
                    + cells.stream().map(Cell::getName).toList(), Map.of("cell", toCell));
        }
        if (!moveId.isEmpty()) {
            Optional<Versioned<Move>> recorded = store.move(moveId);
            if (recorded.isPresent()) {
                return repeat(recorded.get(), tenant, toCell);
            }
        }
        Optional<Versioned<TenantPlacement>> placement = store.placement(tenant);
        refuseIfMoving(tenant, placement);
        int epoch = placement.map(Versioned::version).orElse(-1);
        String from = placement.map(p -> p.value().getCell()).orElse(Topology.SHARED_CELL);
        if (from.equals(toCell)) {
            throw Failure.of(Reason.TENANT_ALREADY_IN_CELL, "tenant " + tenant + " lives in cell " + toCell
                    + " already (epoch " + epoch + ")", Map.of("cell", toCell));
        }
        Set<String> regions = regionsWithItems(tenant, from);
        Set<String> missing = new TreeSet<>(regions);
        missing.removeAll(servedRegions(target.get(), store.shards(toCell)));
        if (!missing.isEmpty()) {
            throw Failure.of(Reason.CELL_LACKS_REGIONS, "cell " + toCell + " has no shard in region(s) " + missing
                    + " where tenant " + tenant + " has items (its items are in " + regions + ")",
                    Map.of("cell", toCell, "regions", String.join(",", missing)));
        }
        long now = clock.millis();
        Move move = Move.newBuilder().setMoveId(moveId.isEmpty() ? newMoveId(now) : moveId).setTenantId(tenant)
                .setFromCell(from).setToCell(toCell).setStep(MoveStep.PLANNED)
                .setMaxPauseMs(maxPauseMs == 0 ? MAX_PAUSE_DEFAULT.toMillis() : maxPauseMs)
                .setCreatedAtMs(now).setUpdatedAtMs(now).setPlannedEpoch(epoch + 1).setOwner(owner).build();
        try {
            return store.startMove(move, epoch);
        } catch (IllegalStateException | ConcurrentModificationException e) {
            // Lost a race: to another start of this tenant (a move now runs), or of this move id.
            Optional<Versioned<Move>> recorded = store.move(move.getMoveId());
            if (recorded.isPresent()) {
                return repeat(recorded.get(), tenant, toCell);
            }
            refuseIfMoving(tenant, store.placement(tenant));
            throw Failure.retryable(Reason.MOVE_RUNNING, "tenant " + tenant + " changed while the move was planned ("
                    + e.getMessage() + "); nothing was changed, start it again", RETRY_AFTER);
        }
    }

    private static void refuseIfMoving(String tenant, Optional<Versioned<TenantPlacement>> placement) {
        if (placement.isPresent() && !placement.get().value().getMoveId().isEmpty()) {
            String running = placement.get().value().getMoveId();
            throw Failure.of(Reason.MOVE_RUNNING, "tenant " + tenant + " is being moved by move " + running + " ("
                    + placement.get().value().getState() + " in " + placement.get().value().getCell() + ", epoch "
                    + placement.get().version() + ")", Map.of("move_id", running));
        }
    }

    private static Versioned<Move> repeat(Versioned<Move> recorded, String tenant, String toCell) {
        Move m = recorded.value();
        if (!m.getTenantId().equals(tenant) || !m.getToCell().equals(toCell)) {
            throw Failure.invalid("move_id", "'" + m.getMoveId() + "' is the move of tenant " + m.getTenantId()
                    + " to cell " + m.getToCell() + "; pick another id (or none)");
        }
        return recorded;
    }

    /** The regions of the source cell's shards that report items of the tenant. */
    private Set<String> regionsWithItems(String tenant, String cell) throws InterruptedException {
        List<ShardInfo> sources = store.shards(cell);
        List<Long> counts;
        try {
            counts = shards.countItems(sources, tenant, () -> { });
        } catch (TenantShards.StepFailed e) {
            throw Failure.retryable(Reason.SHARD_UNAVAILABLE, "cannot tell whether tenant " + tenant + " has items in"
                    + " cell " + cell + ": " + e.getMessage() + "; nothing was changed", RETRY_AFTER);
        }
        Set<String> regions = new TreeSet<>();
        long items = 0;
        for (int i = 0; i < sources.size(); i++) {
            if (counts.get(i) > 0) {
                regions.add(sources.get(i).getRegion());
                items += counts.get(i);
            }
        }
        if (items == 0) {
            throw Failure.of(Reason.UNKNOWN_TENANT, "tenant " + tenant + " has no items on the " + sources.size()
                    + " shard(s) of its cell " + cell + "; nothing to move ('admin tenants assign' places a tenant"
                    + " without items)", Map.of("tenant_id", tenant));
        }
        return regions;
    }

    private static Set<String> servedRegions(Cell cell, List<ShardInfo> shards) {
        Set<String> served = new TreeSet<>();
        for (ShardInfo s : shards) {
            if (cell.getRegionsList().contains(s.getRegion())) {
                served.add(s.getRegion());
            }
        }
        return served;
    }

    /** {@code mv-<ms in base 36>-<6 hex>}: sorts by time within a few years, unique enough to never clash in practice. */
    static String newMoveId(long nowMs) {
        return "mv-" + Long.toString(nowMs, 36) + "-" + String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
    }

    /**
     * The field checks of a start, for callers that validate at their edge.
     *
     * @throws Failure INVALID_FIELD naming the first bad field
     */
    public static void validate(String tenant, String toCell, long maxPauseMs, String moveId) {
        if (!TopologyStore.isName(tenant)) {
            throw Failure.invalid("tenant_id", "'" + tenant + "' is not 1..64 printable ASCII characters without '/'");
        }
        if (!TopologyStore.isName(toCell)) {
            throw Failure.invalid("to_cell", "'" + toCell + "' is not 1..64 printable ASCII characters without '/'");
        }
        if (maxPauseMs != 0 && (maxPauseMs < MAX_PAUSE_MIN.toMillis() || maxPauseMs > MAX_PAUSE_MAX.toMillis())) {
            throw Failure.invalid("max_pause_ms", maxPauseMs + " is outside [" + MAX_PAUSE_MIN.toMillis() + ", "
                    + MAX_PAUSE_MAX.toMillis() + "] (0: " + MAX_PAUSE_DEFAULT.toMillis() + ")");
        }
        if (!moveId.isEmpty() && !TopologyStore.isName(moveId)) {
            throw Failure.invalid("move_id", "'" + moveId + "' is not 1..64 printable ASCII characters without '/'");
        }
    }
}
