package io.lastunit.common.topology;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.Failure;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

/**
 * Reads and writes the topology in ZooKeeper (DESIGN §3, §8) through a started
 * {@link CuratorFramework}, under a namespace root (default {@value #ROOT_DEFAULT}). This is
 * the admin path: cell-admin and tests write through it, services read {@link TopologyCache}.
 *
 * <p>Every write is a compare-and-set: a create that fails if the znode exists, or a
 * {@code setData} with the version that was read. A lost race surfaces as
 * {@link ConcurrentModificationException} naming the path, the expected and the found version.
 * Writes are idempotent: Curator retries a write after a connection loss, and a write that did
 * apply before the loss then finds its own value one version on; that counts as success. So a
 * caller may repeat a write with the same arguments after an unknown outcome
 * ({@link Reason#TOPOLOGY_UNAVAILABLE}).
 *
 * <p>Thread-safe (no state of its own). Blocking: every method makes foreground ZooKeeper calls
 * (see {@link Curators} for how long they can block). Hazards: the version of
 * {@code tenants/{tenant}} is the tenant's fencing epoch, so this class never deletes a tenant
 * (a re-created znode would restart at epoch 0 and un-fence stale writers); and a cell's shard
 * set is fixed once created, because {@link Placement} over a changed set re-homes stock.
 */
public final class TopologyStore {
    public static final String ROOT_DEFAULT = "/lastunit";
    /** Longest shard address ({@code host:port}). */
    static final int ADDRESS_LENGTH_MAX = 255;

    private static final byte[] EMPTY = new byte[0];

    private final CuratorFramework client;
    private final TopologyPaths paths;
    private final InstantSource clock;

    /**
     * @param client started by the caller, who also closes it
     * @param root   the namespace root, e.g. {@value #ROOT_DEFAULT}
     * @param clock  stamps {@code created_at_ms} of new cells
     */
    public TopologyStore(CuratorFramework client, String root, InstantSource clock) {
        this.client = Objects.requireNonNull(client, "client");
        this.paths = new TopologyPaths(root);
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * True for a name a cell, shard, tenant, region or move may have: 1..64 printable ASCII
     * characters without {@code /}, and not {@code .} or {@code ..} (each becomes a path segment).
     */
    public static boolean isName(String s) {
        return TopologyPaths.isName(s);
    }

    /**
     * Creates the {@value Topology#SHARED_CELL} cell with {@code regions} and no shards when it is
     * absent, so that tenants without a placement have a cell. Its shards come later with
     * {@code createCell("shared", regions, shards)}, which adopts this shard-less cell.
     *
     * @throws IllegalStateException when the shared cell exists with other regions
     */
    public void ensureSharedCell(List<String> regions) {
        List<String> problems = new ArrayList<>();
        checkRegions(problems, regions);
        failIfAny(problems);
        String path = paths.cell(Topology.SHARED_CELL);
        zk("create " + path, () -> {
            ensureFolder(paths.cells());
            try {
                client.create().forPath(path, TopologyCodec.encode(newCell(Topology.SHARED_CELL, regions)));
            } catch (KeeperException.NodeExistsException e) {
                Cell existing = readData(path, Cell.newBuilder(), null);
                if (!Set.copyOf(existing.getRegionsList()).equals(Set.copyOf(regions))) {
                    throw new IllegalStateException("cell " + Topology.SHARED_CELL + " exists with regions "
                            + existing.getRegionsList() + ", not " + regions);
                }
            }
            return null;
        });
    }

    /**
     * Creates {@code cell} with its regions and its fixed set of shards in one ZooKeeper
     * transaction: either all of it exists afterwards or none of it.
     *
     * <p>Refused ({@link IllegalArgumentException}, every problem named) unless: names are
     * 1..64 printable ASCII characters without {@code /}; each shard names this cell and one of
     * {@code regions}; each region has at least one shard; shard ids are unique. Refused with
     * {@link IllegalStateException} when the cell exists with shards ({@code "cell X exists"}) or
     * a shard id is taken by another cell. A shard-less cell left by {@link #ensureSharedCell} is
     * adopted. Concurrent cell creations are serialised by a compare-and-set on the
     * {@code cells} znode's version, so two cells can never claim one shard id.
     */
    public void createCell(String cell, List<String> regions, List<ShardInfo> shards) {
        checkCell(cell, regions, shards);
        zk("create cell " + cell, () -> {
            ensureFolder(paths.cells());
            Stat cellsStat = new Stat();
            List<String> existingCells = client.getChildren().storingStatIn(cellsStat).forPath(paths.cells());
            Stat placeholder = null;
            Map<String, String> cellOfShard = new HashMap<>();
            for (String other : existingCells) {
                List<String> ids = childrenOrEmpty(paths.shards(other));
                if (other.equals(cell)) {
                    if (client.checkExists().forPath(paths.shards(cell)) != null) {
                        throw new IllegalStateException("cell " + cell + " exists with shards " + new TreeSet<>(ids));
                    }
                    placeholder = client.checkExists().forPath(paths.cell(cell));
                }
                ids.forEach(id -> cellOfShard.put(id, other));
            }
            List<String> taken = new ArrayList<>();
            for (ShardInfo s : shards) {
                if (cellOfShard.containsKey(s.getShardId())) {
                    taken.add(s.getShardId() + " (in cell " + cellOfShard.get(s.getShardId()) + ")");
                }
            }
            if (!taken.isEmpty()) {
                throw new IllegalStateException("cell " + cell + ": shard ids already taken: " + taken);
            }
            commitCell(cell, regions, shards, cellsStat.getVersion(), placeholder);
            return null;
        });
    }

    private void commitCell(String cell, List<String> regions, List<ShardInfo> shards, int cellsVersion,
            Stat placeholder) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        List<String> opPaths = new ArrayList<>();
        // Bumping the folder's version makes every concurrent createCell that read the same
        // cells (and so checked shard ids against the same set) fail as a whole.
        ops.add(client.transactionOp().setData().withVersion(cellsVersion).forPath(paths.cells(), EMPTY));
        opPaths.add(paths.cells() + " (version " + cellsVersion + ")");
        byte[] cellData = TopologyCodec.encode(newCell(cell, regions));
        if (placeholder == null) {
            ops.add(client.transactionOp().create().forPath(paths.cell(cell), cellData));
            opPaths.add(paths.cell(cell));
        } else {
            ops.add(client.transactionOp().setData().withVersion(placeholder.getVersion()).forPath(paths.cell(cell), cellData));
            opPaths.add(paths.cell(cell) + " (version " + placeholder.getVersion() + ")");
        }
        ops.add(client.transactionOp().create().forPath(paths.shards(cell), EMPTY));
        opPaths.add(paths.shards(cell));
        for (ShardInfo s : shards) {
            ops.add(client.transactionOp().create().forPath(paths.shard(cell, s.getShardId()), TopologyCodec.encode(s)));
            opPaths.add(paths.shard(cell, s.getShardId()));
        }
        try {
            client.transaction().forOperations(ops);
        } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                | KeeperException.NoNodeException e) {
            if (sameShards(shards(cell), shards)) {
                return; // our own transaction, applied before a connection loss and retried
            }
            throw new ConcurrentModificationException("create cell " + cell + ": " + e.code() + " at "
                    + failedOp(e, opPaths) + "; the cells changed concurrently, read again");
        }
    }

    /** Every cell, sorted by name. */
    public List<Cell> cells() {
        return zk("read " + paths.cells(), () -> {
            List<Cell> cells = new ArrayList<>();
            for (String name : childrenOrEmpty(paths.cells())) {
                Cell c = readData(paths.cell(name), Cell.newBuilder(), null);
                if (c != null) {
                    cells.add(c);
                }
            }
            cells.sort(Comparator.comparing(Cell::getName));
            return cells;
        });
    }

    /** The shards of {@code cell}, sorted by shard id; empty for an unknown or shard-less cell. */
    public List<ShardInfo> shards(String cell) {
        requireName("cell", cell);
        return zk("read " + paths.shards(cell), () -> {
            List<ShardInfo> shards = new ArrayList<>();
            for (String id : childrenOrEmpty(paths.shards(cell))) {
                ShardInfo s = readData(paths.shard(cell, id), ShardInfo.newBuilder(), null);
                if (s != null) {
                    shards.add(s);
                }
            }
            shards.sort(Comparator.comparing(ShardInfo::getShardId));
            return shards;
        });
    }

    /** The tenant's placement and epoch, read together; empty when the tenant lives in the shared cell by default. */
    public Optional<Versioned<TenantPlacement>> placement(String tenant) {
        requireName("tenant", tenant);
        return zk("read " + paths.tenant(tenant), () -> readTenant(paths.tenant(tenant)));
    }

    /** The tenant's epoch, or -1 when it has no placement. */
    public int epoch(String tenant) {
        return placement(tenant).map(Versioned::version).orElse(-1);
    }

    /**
     * Places {@code tenant} in {@code cell}, ACTIVE, if its epoch is still {@code expectedEpoch}
     * (-1: it has no placement yet). Whether the tenant may move (no items yet, or a move at its
     * commit point) is the caller's to decide.
     *
     * @return the new epoch
     * @throws IllegalArgumentException for a bad name or an unknown cell
     * @throws IllegalStateException when the cell has no shards (nothing could serve the tenant)
     * @throws ConcurrentModificationException when the epoch is no longer {@code expectedEpoch}
     */
    public int assignTenant(String tenant, String cell, int expectedEpoch) {
        return assignTenant(tenant, cell, "", expectedEpoch);
    }

    /**
     * {@link #assignTenant(String, String, int)} naming a move: a move's flip (its commit point)
     * places the tenant in the target cell, ACTIVE, still naming the move until it has cleaned up,
     * so the balancer keeps leaving the tenant alone.
     *
     * @param moveId empty or null for none
     */
    public int assignTenant(String tenant, String cell, String moveId, int expectedEpoch) {
        requireName("tenant", tenant);
        requireName("cell", cell);
        requireEpoch(expectedEpoch);
        String move = moveId == null ? "" : moveId;
        if (!move.isEmpty()) {
            requireName("move id", move);
        }
        zk("read " + paths.cell(cell), () -> {
            if (client.checkExists().forPath(paths.cell(cell)) == null) {
                throw new IllegalArgumentException("unknown cell " + cell + " for tenant " + tenant);
            }
            if (client.checkExists().forPath(paths.shards(cell)) == null) {
                throw new IllegalStateException("cell " + cell + " has no shards yet; tenant " + tenant + " not placed");
            }
            return null;
        });
        TenantPlacement value = TenantPlacement.newBuilder()
                .setTenantId(tenant).setCell(cell).setState(TenantState.ACTIVE).setMoveId(move).build();
        return writeTenant(tenant, value, expectedEpoch);
    }

    /**
     * Sets the tenant's state, keeping its cell, if its epoch is still {@code expectedEpoch}
     * (-1: it has no placement, so it is in the shared cell and gets a placement there).
     *
     * @param moveId the move in progress: required for MOVING (fenced); for ACTIVE, empty or null
     *               when no move runs, or the move that is copying the tenant while it still sells
     * @return the new epoch
     * @throws ConcurrentModificationException when the epoch is no longer {@code expectedEpoch}
     */
    public int setTenantState(String tenant, TenantState state, String moveId, int expectedEpoch) {
        requireName("tenant", tenant);
        requireEpoch(expectedEpoch);
        String move = moveId == null ? "" : moveId;
        if (state == TenantState.MOVING && !TopologyPaths.isName(move)) {
            throw new IllegalArgumentException("tenant " + tenant + ": MOVING needs a move id of 1.."
                    + TopologyPaths.NAME_LENGTH_MAX + " printable ASCII characters, got '" + move + "'");
        } else if (state == TenantState.ACTIVE && !move.isEmpty() && !TopologyPaths.isName(move)) {
            throw new IllegalArgumentException("tenant " + tenant + ": move id '" + move + "' is not a name of 1.."
                    + TopologyPaths.NAME_LENGTH_MAX + " printable ASCII characters without '/'");
        } else if (state != TenantState.MOVING && state != TenantState.ACTIVE) {
            throw new IllegalArgumentException("tenant " + tenant + ": state must be ACTIVE or MOVING, got " + state);
        }
        String cell = Topology.SHARED_CELL;
        if (expectedEpoch != -1) {
            Optional<Versioned<TenantPlacement>> current = placement(tenant);
            if (current.isEmpty() || current.get().version() != expectedEpoch) {
                throw new ConcurrentModificationException(paths.tenant(tenant) + ": expected epoch " + expectedEpoch
                        + ", found " + describe(current));
            }
            cell = current.get().value().getCell();
        }
        TenantPlacement value = TenantPlacement.newBuilder()
                .setTenantId(tenant).setCell(cell).setState(state).setMoveId(move).build();
        return writeTenant(tenant, value, expectedEpoch);
    }

    /**
     * Records a new tenant move (DESIGN §8) and names it in the tenant's placement, in one
     * ZooKeeper transaction: {@code tenants/{tenant}} becomes ACTIVE in its cell with
     * {@code move_id} (compare-and-set on {@code expectedEpoch}; -1 creates the placement of a
     * tenant that lived in the shared cell by default) and {@code moves/{id}} is created with
     * {@code move}. Either both are written or neither: of two moves started on one tenant from
     * the same epoch exactly one is recorded, and the other changes nothing.
     *
     * @param move step PLANNED, {@code from_cell} the tenant's cell at {@code expectedEpoch},
     *             {@code planned_epoch} = {@code expectedEpoch + 1}
     * @return the move as recorded (version 0)
     * @throws IllegalArgumentException for a bad name, step or epoch, or a from_cell that is not
     *     the tenant's cell
     * @throws IllegalStateException when the placement at {@code expectedEpoch} names a move already
     * @throws ConcurrentModificationException when the tenant's epoch is no longer
     *     {@code expectedEpoch} (another move or placement came first), or the move id is taken
     */
    public Versioned<Move> startMove(Move move, int expectedEpoch) {
        checkNewMove(move, expectedEpoch);
        String tenant = move.getTenantId();
        String tenantPath = paths.tenant(tenant);
        String movePath = paths.move(move.getMoveId());
        TenantPlacement placed = TenantPlacement.newBuilder().setTenantId(tenant).setCell(move.getFromCell())
                .setState(TenantState.ACTIVE).setMoveId(move.getMoveId()).build();
        return zk("start move " + move.getMoveId(), () -> {
            Optional<Versioned<TenantPlacement>> current = readTenant(tenantPath);
            if (current.map(Versioned::version).orElse(-1) == expectedEpoch) {
                TenantPlacement p = current.map(Versioned::value).orElse(null);
                String cell = p == null ? Topology.SHARED_CELL : p.getCell();
                if (p != null && !p.getMoveId().isEmpty()) {
                    throw new IllegalStateException("tenant " + tenant + ": move " + p.getMoveId()
                            + " is running (epoch " + expectedEpoch + ")");
                }
                if (!cell.equals(move.getFromCell())) {
                    throw new IllegalArgumentException("move " + move.getMoveId() + ": from_cell " + move.getFromCell()
                            + ", but tenant " + tenant + " lives in cell " + cell + " at epoch " + expectedEpoch);
                }
            }
            ensureFolder(paths.moves());
            ensureFolder(paths.tenants());
            byte[] tenantData = TopologyCodec.encode(placed);
            List<CuratorOp> ops = new ArrayList<>();
            ops.add(expectedEpoch == -1 ? client.transactionOp().create().forPath(tenantPath, tenantData)
                    : client.transactionOp().setData().withVersion(expectedEpoch).forPath(tenantPath, tenantData));
            ops.add(client.transactionOp().create().forPath(movePath, TopologyCodec.encode(move)));
            try {
                client.transaction().forOperations(ops);
                return new Versioned<>(move, 0);
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                    | KeeperException.NoNodeException e) {
                Optional<Versioned<TenantPlacement>> now = readTenant(tenantPath);
                Optional<Versioned<Move>> recorded = readMove(movePath);
                if (now.isPresent() && now.get().version() == expectedEpoch + 1 && now.get().value().equals(placed)
                        && recorded.isPresent() && recorded.get().value().equals(move)) {
                    return recorded.get(); // our own transaction, applied before a connection loss and retried
                }
                if (recorded.isPresent()) {
                    throw new ConcurrentModificationException(movePath + " exists (" + describeMove(recorded.get())
                            + "); move " + move.getMoveId() + " not started");
                }
                throw new ConcurrentModificationException(tenantPath + ": expected epoch " + expectedEpoch
                        + (expectedEpoch == -1 ? " (no placement)" : "") + ", found " + describe(now)
                        + "; move " + move.getMoveId() + " not started");
            }
        });
    }

    /** The move and its version, read together; empty when there is no such move. */
    public Optional<Versioned<Move>> move(String moveId) {
        requireName("move id", moveId);
        return zk("read " + paths.move(moveId), () -> readMove(paths.move(moveId)));
    }

    /** Every recorded move with its version, in no particular order. */
    public List<Versioned<Move>> moves() {
        return zk("read " + paths.moves(), () -> {
            List<Versioned<Move>> moves = new ArrayList<>();
            for (String id : childrenOrEmpty(paths.moves())) {
                readMove(paths.move(id)).ifPresent(moves::add);
            }
            return moves;
        });
    }

    /**
     * Writes {@code move} over {@code moves/{id}} if its version is still {@code expectedVersion}:
     * the only way a move changes, so a mover acting on an old view of its move (another mover
     * took it over, an operator asked it to abort) fails instead of overwriting.
     *
     * @return the new version
     * @throws IllegalArgumentException for a bad move id or version
     * @throws ConcurrentModificationException when the version is no longer {@code expectedVersion}
     *     or the move does not exist
     */
    public int updateMove(Move move, int expectedVersion) {
        requireName("move id", move.getMoveId());
        if (expectedVersion < 0) {
            // -1 would be "any version" to ZooKeeper: a blind overwrite.
            throw new IllegalArgumentException("expectedVersion=" + expectedVersion + " must be >= 0");
        }
        String path = paths.move(move.getMoveId());
        byte[] data = TopologyCodec.encode(move);
        return zk("write " + path, () -> {
            try {
                return client.setData().withVersion(expectedVersion).forPath(path, data).getVersion();
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                Optional<Versioned<Move>> now = readMove(path);
                if (now.isPresent() && now.get().version() == expectedVersion + 1 && now.get().value().equals(move)) {
                    return expectedVersion + 1; // our own write, applied before a connection loss and retried
                }
                throw new ConcurrentModificationException(path + ": expected version " + expectedVersion + ", found "
                        + now.map(TopologyStore::describeMove).orElse("no move"));
            }
        });
    }

    private Optional<Versioned<Move>> readMove(String path) throws Exception {
        Stat stat = new Stat();
        Move m = readData(path, Move.newBuilder(), stat);
        return m == null ? Optional.empty() : Optional.of(new Versioned<>(m, stat.getVersion()));
    }

    private static String describeMove(Versioned<Move> m) {
        Move v = m.value();
        return "version " + m.version() + " (tenant=" + v.getTenantId() + ", " + v.getFromCell() + " -> "
                + v.getToCell() + ", step=" + v.getStep() + (v.getOwner().isEmpty() ? "" : ", owner=" + v.getOwner())
                + ")";
    }

    private static void checkNewMove(Move move, int expectedEpoch) {
        List<String> problems = new ArrayList<>();
        for (String[] f : new String[][] {{"move_id", move.getMoveId()}, {"tenant_id", move.getTenantId()},
                {"from_cell", move.getFromCell()}, {"to_cell", move.getToCell()}}) {
            if (!TopologyPaths.isName(f[1])) {
                problems.add(f[0] + ": '" + f[1] + "' is not a name of 1.." + TopologyPaths.NAME_LENGTH_MAX
                        + " printable ASCII characters without '/'");
            }
        }
        if (move.getFromCell().equals(move.getToCell())) {
            problems.add("from_cell and to_cell are both " + move.getToCell());
        }
        if (move.getStep() != MoveStep.PLANNED) {
            problems.add("a new move is PLANNED, not " + move.getStep());
        }
        if (expectedEpoch < -1) {
            problems.add("expectedEpoch=" + expectedEpoch + " (use -1 for a tenant with no placement)");
        } else if (move.getPlannedEpoch() != expectedEpoch + 1) {
            problems.add("planned_epoch " + move.getPlannedEpoch() + " must be the epoch the start writes, "
                    + (expectedEpoch + 1));
        }
        failIfAny(problems);
    }

    private int writeTenant(String tenant, TenantPlacement value, int expectedEpoch) {
        String path = paths.tenant(tenant);
        byte[] data = TopologyCodec.encode(value);
        return zk("write " + path, () -> {
            try {
                if (expectedEpoch == -1) {
                    client.create().creatingParentsIfNeeded().forPath(path, data);
                    return 0;
                }
                return client.setData().withVersion(expectedEpoch).forPath(path, data).getVersion();
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                    | KeeperException.NoNodeException e) {
                Optional<Versioned<TenantPlacement>> now = readTenant(path);
                if (now.isPresent() && now.get().version() == expectedEpoch + 1 && now.get().value().equals(value)) {
                    return expectedEpoch + 1; // our own write, applied before a connection loss and retried
                }
                throw new ConcurrentModificationException(path + ": expected epoch " + expectedEpoch
                        + (expectedEpoch == -1 ? " (no placement)" : "") + ", found " + describe(now));
            }
        });
    }

    private Optional<Versioned<TenantPlacement>> readTenant(String path) throws Exception {
        Stat stat = new Stat();
        TenantPlacement p = readData(path, TenantPlacement.newBuilder(), stat);
        return p == null ? Optional.empty() : Optional.of(new Versioned<>(p, stat.getVersion()));
    }

    /** The decoded value at {@code path}, or null when the znode does not exist. */
    private <T extends com.google.protobuf.Message> T readData(String path, com.google.protobuf.Message.Builder builder,
            Stat stat) throws Exception {
        byte[] data;
        try {
            data = stat == null ? client.getData().forPath(path) : client.getData().storingStatIn(stat).forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        return TopologyCodec.decode(path, data, builder);
    }

    private List<String> childrenOrEmpty(String path) throws Exception {
        try {
            return client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /** Creates {@code path} and its parents as empty persistent znodes when absent; never overwrites. */
    private void ensureFolder(String path) throws Exception {
        if (client.checkExists().forPath(path) != null) {
            return;
        }
        try {
            client.create().creatingParentsIfNeeded().forPath(path, EMPTY);
        } catch (KeeperException.NodeExistsException e) {
            // created concurrently: fine, folders carry no data
        }
    }

    private Cell newCell(String name, List<String> regions) {
        return Cell.newBuilder().setName(name).addAllRegions(regions).setCreatedAtMs(clock.millis()).build();
    }

    private boolean sameShards(List<ShardInfo> stored, List<ShardInfo> wanted) {
        return new HashSet<>(stored).equals(new HashSet<>(wanted)) && stored.size() == wanted.size();
    }

    /** The path of the op a failed multi names as its cause (ZooKeeper marks the others RUNTIMEINCONSISTENCY). */
    static String failedOp(KeeperException e, List<String> opPaths) {
        List<OpResult> results = e.getResults();
        if (results != null) {
            for (int i = 0; i < results.size() && i < opPaths.size(); i++) {
                if (results.get(i) instanceof OpResult.ErrorResult err
                        && err.getErr() != KeeperException.Code.OK.intValue()
                        && err.getErr() != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                    return opPaths.get(i);
                }
            }
        }
        return e.getPath() != null ? e.getPath() : "(unknown op)";
    }

    private static String describe(Optional<Versioned<TenantPlacement>> p) {
        return p.map(v -> "epoch " + v.version() + " (cell=" + v.value().getCell() + ", state=" + v.value().getState()
                + (v.value().getMoveId().isEmpty() ? "" : ", move=" + v.value().getMoveId()) + ")")
                .orElse("no placement");
    }

    private static void checkCell(String cell, List<String> regions, List<ShardInfo> shards) {
        List<String> problems = new ArrayList<>();
        if (!TopologyPaths.isName(cell)) {
            problems.add("cell: '" + cell + "' is not a name of 1.." + TopologyPaths.NAME_LENGTH_MAX
                    + " printable ASCII characters without '/'");
        }
        checkRegions(problems, regions);
        Set<String> ids = new HashSet<>();
        Set<String> served = new HashSet<>();
        for (ShardInfo s : shards) {
            String id = s.getShardId();
            if (!TopologyPaths.isName(id)) {
                problems.add("shard id '" + id + "' is not a name of 1.." + TopologyPaths.NAME_LENGTH_MAX
                        + " printable ASCII characters without '/'");
            } else if (!ids.add(id)) {
                problems.add("shard id " + id + " appears twice");
            }
            if (!s.getCell().equals(cell)) {
                problems.add("shard " + id + " names cell '" + s.getCell() + "', not " + cell);
            }
            if (!regions.contains(s.getRegion())) {
                problems.add("shard " + id + " is in region '" + s.getRegion() + "', not one of " + regions);
            }
            if (!Limits.isId(s.getAddress(), ADDRESS_LENGTH_MAX)) {
                problems.add("shard " + id + " has address '" + s.getAddress() + "', not 1.." + ADDRESS_LENGTH_MAX
                        + " printable ASCII characters");
            }
            served.add(s.getRegion());
        }
        for (String r : regions) {
            if (!served.contains(r)) {
                problems.add("region " + r + " has no shard");
            }
        }
        failIfAny(problems);
    }

    private static void checkRegions(List<String> problems, List<String> regions) {
        if (regions.isEmpty()) {
            problems.add("regions: at least one region is required");
        }
        if (new LinkedHashSet<>(regions).size() != regions.size()) {
            problems.add("regions " + regions + " repeat a region");
        }
        for (String r : regions) {
            if (!TopologyPaths.isName(r)) {
                problems.add("region '" + r + "' is not a name of 1.." + TopologyPaths.NAME_LENGTH_MAX
                        + " printable ASCII characters without '/'");
            }
        }
    }

    private static void failIfAny(List<String> problems) {
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
    }

    private static void requireName(String field, String value) {
        if (!TopologyPaths.isName(value)) {
            throw new IllegalArgumentException(field + ": '" + value + "' is not a name of 1.."
                    + TopologyPaths.NAME_LENGTH_MAX + " printable ASCII characters without '/'");
        }
    }

    private static void requireEpoch(int expectedEpoch) {
        // Never pass -1 on to setData: to ZooKeeper it means "any version", a blind overwrite.
        if (expectedEpoch < -1) {
            throw new IllegalArgumentException("expectedEpoch=" + expectedEpoch + " (use -1 for a tenant with no placement)");
        }
    }

    @FunctionalInterface
    interface ZkCall<T> {
        T call() throws Exception;
    }

    /**
     * Runs a ZooKeeper call, turning connection trouble (after Curator's retries) into a
     * retryable {@link Reason#TOPOLOGY_UNAVAILABLE}; the outcome of a write is then unknown.
     */
    private <T> T zk(String what, ZkCall<T> call) {
        return zk(paths.root, what, call);
    }

    /** {@link #zk(String, ZkCall)} for any class of this package that reads or writes under {@code root}. */
    static <T> T zk(String root, String what, ZkCall<T> call) {
        try {
            return call.call();
        } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException
                | KeeperException.OperationTimeoutException | KeeperException.SessionMovedException e) {
            throw unavailable(root, what + ": " + e.code() + " (a write may or may not have applied; repeat it)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable(root, what + ": interrupted (a write may or may not have applied)");
        } catch (RuntimeException e) {
            throw e;
        } catch (KeeperException e) {
            throw new IllegalStateException(what + ": " + e.code() + " at " + e.getPath(), e);
        } catch (Exception e) {
            throw new IllegalStateException(what + ": " + e, e);
        }
    }

    private static Failure unavailable(String root, String message) {
        return Failure.retryable(Reason.TOPOLOGY_UNAVAILABLE, "topology root=" + root + ": " + message,
                StalenessGate.RETRY_AFTER);
    }
}
