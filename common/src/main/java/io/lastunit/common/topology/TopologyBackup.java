package io.lastunit.common.topology;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ExportedCell;
import io.lastunit.api.topology.v1.ExportedMove;
import io.lastunit.api.topology.v1.ExportedTenant;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TopologyExport;
import io.lastunit.common.Reason;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Reads the durable topology under a root with every version ({@link #read}) and writes a
 * {@link RestorePlan} ({@link #apply}): the ZooKeeper side of {@code admin topology export} and
 * {@code import}.
 *
 * <p>ZooKeeper has no snapshot read, so {@link #read} reads the whole namespace twice and returns
 * only when both passes agree (at most {@value #READ_PASSES_MAX} passes): an export never mixes a
 * tenant before a move with the move after it. Ephemeral znodes ({@code live/},
 * {@code balancer/}, {@code moves/{move}/lease}) are not part of the topology; the image reports
 * the live shards and the move leases only so an import can refuse to run under a mover.
 *
 * <p>Thread-safe (no state of its own); blocking, with Curator's retries ({@link Curators}). A
 * write whose outcome is unknown after a connection loss surfaces as
 * {@link Reason#TOPOLOGY_UNAVAILABLE}; {@link #apply} of the same plan later finds its own
 * transactions applied and goes on, since each transaction's end state is checked before it is
 * counted as a lost race.
 */
public final class TopologyBackup {
    static final int READ_PASSES_MAX = 4;

    private final CuratorFramework client;
    private final TopologyPaths paths;

    /** @param client started by the caller, who also closes it */
    public TopologyBackup(CuratorFramework client, String root) {
        this.client = Objects.requireNonNull(client, "client");
        this.paths = new TopologyPaths(root);
    }

    public String root() {
        return paths.root;
    }

    /**
     * What the namespace holds, read until two passes agree.
     *
     * @throws IllegalStateException naming the znode when a value is not one lastunit writes
     * @throws ConcurrentModificationException when it changed during every pass
     */
    public RestorePlan.Image read() {
        RestorePlan.Image previous = null;
        for (int pass = 1; pass <= READ_PASSES_MAX; pass++) {
            RestorePlan.Image image = zk("read " + paths.root, this::readOnce);
            if (image != null && image.equals(previous)) {
                return image;
            }
            previous = image;
        }
        throw new ConcurrentModificationException("the topology under " + paths.root + " changed during each of "
                + READ_PASSES_MAX + " reads; stop what writes it (movers, admin commands) and read again");
    }

    /** One pass; null when a znode went away while it was read (the next pass reads again). */
    private RestorePlan.Image readOnce() throws Exception {
        Map<String, Integer> versions = new HashMap<>();
        StringBuilder p = new StringBuilder();
        for (String s : paths.root.substring(1).split("/")) {
            p.append('/').append(s);
            Stat stat = client.checkExists().forPath(p.toString());
            if (stat == null) {
                return new RestorePlan.Image(TopologyExport.getDefaultInstance(), versions, Map.of(), Set.of());
            }
            versions.put(p.toString(), stat.getVersion());
        }
        try {
            TopologyExport.Builder content = TopologyExport.newBuilder();
            for (String name : folder(paths.cells(), versions)) {
                Stat stat = new Stat();
                Cell cell = read(paths.cell(name), Cell.newBuilder(), stat);
                expect(paths.cell(name), "name", name, cell.getName());
                versions.put(paths.cell(name), stat.getVersion());
                ExportedCell.Builder ec = ExportedCell.newBuilder().setCell(cell);
                for (String id : folder(paths.shards(name), versions)) {
                    Stat s = new Stat();
                    ShardInfo shard = read(paths.shard(name, id), ShardInfo.newBuilder(), s);
                    expect(paths.shard(name, id), "shard_id", id, shard.getShardId());
                    expect(paths.shard(name, id), "cell", name, shard.getCell());
                    versions.put(paths.shard(name, id), s.getVersion());
                    ec.addShards(shard);
                }
                content.addCells(ec);
            }
            for (String id : folder(paths.tenants(), versions)) {
                Stat stat = new Stat();
                TenantPlacement t = read(paths.tenant(id), TenantPlacement.newBuilder(), stat);
                expect(paths.tenant(id), "tenant_id", id, t.getTenantId());
                versions.put(paths.tenant(id), stat.getVersion());
                content.addTenants(ExportedTenant.newBuilder().setPlacement(t).setEpoch(stat.getVersion()));
            }
            Map<String, String> leases = new TreeMap<>();
            for (String id : folder(paths.moves(), versions)) {
                Stat stat = new Stat();
                Move m = read(paths.move(id), Move.newBuilder(), stat);
                expect(paths.move(id), "move_id", id, m.getMoveId());
                versions.put(paths.move(id), stat.getVersion());
                content.addMoves(ExportedMove.newBuilder().setMove(m).setVersion(stat.getVersion()));
                if (stat.getNumChildren() > 0) {
                    try {
                        leases.put(id, new String(client.getData().forPath(paths.moveLease(id)), StandardCharsets.UTF_8));
                    } catch (KeeperException.NoNodeException e) {
                        // no lease: another child, or the lease went since; the second pass tells
                    }
                }
            }
            Set<String> live = new TreeSet<>();
            try {
                live.addAll(client.getChildren().forPath(paths.live()));
            } catch (KeeperException.NoNodeException e) {
                // no shard node registered yet
            }
            return new RestorePlan.Image(content.build(), versions, leases, live);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /** The children of a folder (its version recorded), sorted; none when it does not exist. */
    private List<String> folder(String path, Map<String, Integer> versions) throws Exception {
        Stat stat = client.checkExists().forPath(path);
        if (stat == null) {
            return List.of();
        }
        versions.put(path, stat.getVersion());
        List<String> children = new ArrayList<>(client.getChildren().forPath(path));
        children.sort(null);
        return children;
    }

    private <T extends com.google.protobuf.Message> T read(String path, com.google.protobuf.Message.Builder b, Stat stat)
            throws Exception {
        byte[] data = client.getData().storingStatIn(stat).forPath(path);
        try {
            return TopologyCodec.decode(path, data, b);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage() + " (not a value lastunit writes: repair or remove the"
                    + " znode by hand, or import a backup over it)");
        }
    }

    private static void expect(String path, String field, String fromPath, String fromValue) {
        if (!fromPath.equals(fromValue)) {
            throw new IllegalStateException(path + ": " + field + "=" + fromValue + " does not match its path"
                    + " (not a value lastunit writes)");
        }
    }

    /**
     * Carries out {@code plan}, transaction by transaction, then reads the namespace back.
     *
     * @param progress a line per transaction applied
     * @return what the namespace holds afterwards; its content equals {@link RestorePlan#result()}
     * @throws ConcurrentModificationException when a transaction lost a race (it wrote nothing; the
     *     message says which transactions before it applied)
     * @throws IllegalStateException when the namespace afterwards is not the plan's result
     */
    public RestorePlan.Image apply(RestorePlan plan, Consumer<String> progress) {
        List<RestorePlan.Transaction> txns = plan.transactions();
        for (int i = 0; i < txns.size(); i++) {
            RestorePlan.Transaction txn = txns.get(i);
            String which = "transaction " + (i + 1) + " of " + txns.size();
            int index = i;
            zk(which, () -> {
                commit(txn, which, index);
                return null;
            });
            progress.accept(which + ": " + txn.ops().size() + " writes, about " + txn.bytes() + " bytes, applied");
        }
        RestorePlan.Image after = read();
        List<String> diff = RestorePlan.differences(after.content(), plan.result());
        if (!diff.isEmpty()) {
            throw new IllegalStateException("after the import the namespace " + paths.root + " is not what was"
                    + " planned (someone wrote it meanwhile?): " + String.join("; ", diff));
        }
        return after;
    }

    private void commit(RestorePlan.Transaction txn, String which, int index) throws Exception {
        List<CuratorOp> ops = new ArrayList<>(txn.ops().size());
        for (RestorePlan.Op op : txn.ops()) {
            if (op instanceof RestorePlan.Create c) {
                ops.add(client.transactionOp().create().forPath(c.path(), c.data()));
            } else if (op instanceof RestorePlan.SetData s) {
                ops.add(client.transactionOp().setData().withVersion(s.version()).forPath(s.path(), s.data()));
            } else {
                RestorePlan.Delete d = (RestorePlan.Delete) op;
                ops.add(client.transactionOp().delete().withVersion(d.version()).forPath(d.path()));
            }
        }
        try {
            client.transaction().forOperations(ops);
        } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                | KeeperException.NoNodeException | KeeperException.NotEmptyException e) {
            if (applied(txn)) {
                return; // our own transaction, applied before a connection loss and retried by Curator
            }
            String at = TopologyStore.failedOp(e, txn.ops().stream().map(RestorePlan.Op::path).toList());
            throw new ConcurrentModificationException(which + ": " + e.code() + " at " + at
                    + "; the topology changed meanwhile and this transaction wrote nothing"
                    + (index == 0 ? "" : " (transactions 1.." + index + " applied: the namespace holds no cells"
                            + " and serves nothing until the import is run again)"));
        }
    }

    /** True when every znode the transaction writes is as the transaction leaves it. */
    private boolean applied(RestorePlan.Transaction txn) throws Exception {
        Map<String, RestorePlan.Op> last = new HashMap<>();
        txn.ops().forEach(op -> last.put(op.path(), op));
        for (RestorePlan.Op op : last.values()) {
            Stat stat = new Stat();
            byte[] data;
            try {
                data = client.getData().storingStatIn(stat).forPath(op.path());
            } catch (KeeperException.NoNodeException e) {
                if (op instanceof RestorePlan.Delete) {
                    continue;
                }
                return false;
            }
            boolean ok;
            if (op instanceof RestorePlan.Create c) {
                ok = Arrays.equals(data, c.data());
            } else if (op instanceof RestorePlan.SetData s) {
                ok = stat.getVersion() == s.version() + 1 && Arrays.equals(data, s.data());
            } else {
                ok = false; // a delete, but the znode is there
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private <T> T zk(String what, TopologyStore.ZkCall<T> call) {
        return TopologyStore.zk(paths.root, what, call);
    }
}
