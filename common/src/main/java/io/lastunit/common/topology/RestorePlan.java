package io.lastunit.common.topology;

import io.lastunit.api.topology.v1.ExportedCell;
import io.lastunit.api.topology.v1.ExportedMove;
import io.lastunit.api.topology.v1.ExportedTenant;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TopologyExport;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The ZooKeeper writes that make a namespace hold a topology export, decided from what it holds
 * now. Pure: no I/O; immutable once built. {@link TopologyBackup} reads the {@link Image} and
 * carries the plan out.
 *
 * <p><b>Epochs never go back.</b> A tenant's epoch and a move's version are znode data versions,
 * and ZooKeeper starts a created znode at version 0 and adds one per write; nothing sets a version
 * directly. So the plan writes each tenant and move of the document at version
 * {@code max(here, document) + epochBump} (at least one more than here when its value changes):
 * it creates the znode and then writes it that many times, all in one transaction so nobody sees
 * the steps. A writer that read a version from before the import (a mover still running, an
 * operator's command) then fails its compare-and-set, and a mover that adopts a move after it gets
 * a token above every token the shards stored before (a shard refuses a lower one). A running
 * move's {@code planned_epoch} and {@code fenced_epoch} shift with its tenant's epoch, so its
 * mover still finds the tenant where the move left it.
 *
 * <p><b>Nothing versioned is deleted.</b> A tenant or a move here that the document does not name
 * is kept as it is: deleting it would restart its version at 0. Cells carry no fencing version:
 * a cell the document holds differently is replaced, and one it does not name is kept.
 *
 * <p><b>One transaction when it fits.</b> ZooKeeper refuses a request, and a client a reply,
 * larger than {@code jute.maxbuffer} (1 MiB less one byte by default, on every server and client).
 * The plan estimates the request (and its transaction-log record) and the reply of each write, on
 * the high side, and keeps a transaction within {@code transactionBytesMax}. When the whole import
 * does not fit, it is cut in several, ordered so that no call is routed on a partial topology:
 * the first takes every cell away (every tenant's cell is then unknown and there is no shared
 * cell: routers and shard nodes refuse every call), the middle ones write tenants and moves, each
 * znode's writes in one transaction, and the last creates every cell at once. Hazard: a plan of
 * several transactions that stops in the middle leaves a namespace without cells, which serves
 * nothing until the import is run again.
 */
public final class RestorePlan {
    /** A little under ZooKeeper's default {@code jute.maxbuffer} (1,048,575 bytes). */
    public static final int TRANSACTION_BYTES_MAX_DEFAULT = 1_000_000;
    public static final int TRANSACTION_BYTES_MIN = 16 * 1024;
    public static final int TRANSACTION_BYTES_LIMIT = 64 * 1024 * 1024;
    /** Each step of a bump is one more write of every tenant and move. */
    public static final int EPOCH_BUMP_MAX = 1_000;

    /** An ACL list as a create carries it: world:anyone is 27 bytes; room for a few digest or x509 entries. */
    static final int ACL_BYTES_ESTIMATE = 128;
    /** A znode Stat as a reply carries it. */
    static final int STAT_BYTES = 68;
    /** Each op's header in a multi request and reply: type, done, err. */
    static final int OP_HEADER_BYTES = 9;
    /** The log record's per-op type and length, beyond what the request holds. */
    static final int LOG_BYTES_PER_OP = 8;
    /** Length, request header, and the closing op header. */
    static final int REQUEST_OVERHEAD_BYTES = 4 + 8 + OP_HEADER_BYTES;
    /** Length, reply header (xid, zxid, err), and the closing op header. */
    static final int REPLY_OVERHEAD_BYTES = 4 + 16 + OP_HEADER_BYTES;

    private static final byte[] EMPTY = new byte[0];

    /** One write of a transaction; every one is conditional (a create fails on an existing znode). */
    public sealed interface Op permits Create, SetData, Delete {
        String path();

        /** High estimate of its bytes in the request and in the transaction log. */
        int requestBytes();

        /** High estimate of its bytes in the reply. */
        int replyBytes();
    }

    /** Create a persistent znode. */
    public record Create(String path, byte[] data) implements Op {
        @Override
        public int requestBytes() {
            return OP_HEADER_BYTES + LOG_BYTES_PER_OP + str(path) + 4 + data.length + ACL_BYTES_ESTIMATE + 4 + 4;
        }

        @Override
        public int replyBytes() {
            return OP_HEADER_BYTES + str(path) + STAT_BYTES;
        }
    }

    /** Write a znode at exactly {@code version} (it becomes {@code version + 1}). */
    public record SetData(String path, byte[] data, int version) implements Op {
        @Override
        public int requestBytes() {
            return OP_HEADER_BYTES + LOG_BYTES_PER_OP + str(path) + 4 + data.length + 4;
        }

        @Override
        public int replyBytes() {
            return OP_HEADER_BYTES + STAT_BYTES;
        }
    }

    /** Delete a znode at exactly {@code version}. */
    public record Delete(String path, int version) implements Op {
        @Override
        public int requestBytes() {
            return OP_HEADER_BYTES + LOG_BYTES_PER_OP + str(path) + 4;
        }

        @Override
        public int replyBytes() {
            return OP_HEADER_BYTES;
        }
    }

    /** Ops ZooKeeper applies all or none of. */
    public record Transaction(List<Op> ops) {
        public Transaction {
            ops = List.copyOf(ops);
        }

        public int requestBytes() {
            return REQUEST_OVERHEAD_BYTES + ops.stream().mapToInt(Op::requestBytes).sum();
        }

        public int replyBytes() {
            return REPLY_OVERHEAD_BYTES + ops.stream().mapToInt(Op::replyBytes).sum();
        }

        /** The larger of its request and reply: what must stay under {@code jute.maxbuffer}. */
        public int bytes() {
            return Math.max(requestBytes(), replyBytes());
        }
    }

    /**
     * What a namespace holds, read by {@link TopologyBackup#read()}.
     *
     * @param content  the cells, tenants (with epochs) and moves (with versions), canonical
     * @param versions the data version of every durable znode read, by path: the root's ancestors,
     *                 the root, its folders, cells, shards; a path not in it does not exist
     * @param leases   move id → the mover holding {@code moves/{move}/lease}
     * @param live     the shard ids registered under {@code live/}
     */
    public record Image(TopologyExport content, Map<String, Integer> versions, Map<String, String> leases,
            Set<String> live) {
        public Image {
            content = TopologyExports.content(content);
            versions = Map.copyOf(versions);
            leases = Map.copyOf(leases);
            live = Set.copyOf(live);
        }
    }

    private final List<Transaction> transactions;
    private final TopologyExport result;
    private final List<String> changes;
    private final List<String> kept;
    private final List<String> differences;
    private final boolean overwrites;

    private RestorePlan(List<Transaction> transactions, TopologyExport result, List<String> changes, List<String> kept,
            List<String> differences, boolean overwrites) {
        this.transactions = List.copyOf(transactions);
        this.result = result;
        this.changes = List.copyOf(changes);
        this.kept = List.copyOf(kept);
        this.differences = List.copyOf(differences);
        this.overwrites = overwrites;
    }

    /** The transactions, in order; empty when the namespace holds the document already. */
    public List<Transaction> transactions() {
        return transactions;
    }

    /** The topology the namespace holds once every transaction applied (content: no format or digest). */
    public TopologyExport result() {
        return result;
    }

    /** What the plan writes, a line per cell, tenant and move it changes. */
    public List<String> changes() {
        return changes;
    }

    /** What it keeps that the document does not name, a line each. */
    public List<String> kept() {
        return kept;
    }

    /** How what the namespace holds differs from the document, a line per cell, tenant and move. */
    public List<String> differences() {
        return differences;
    }

    /** True when the namespace holds a topology and it is not the document's: writing replaces it. */
    public boolean overwrites() {
        return overwrites;
    }

    public boolean isNoop() {
        return transactions.isEmpty();
    }

    /**
     * @param root                the namespace to write
     * @param here                what it holds now
     * @param wanted              a document that {@link TopologyExports#problems} accepts
     * @param epochBump           0..{@value #EPOCH_BUMP_MAX}: how far past {@code max(here, document)}
     *                            each tenant's epoch and each move's version goes
     * @param transactionBytesMax {@value #TRANSACTION_BYTES_MIN}..{@value #TRANSACTION_BYTES_LIMIT}
     * @throws IllegalArgumentException for a bump or bound out of range
     * @throws IllegalStateException when the result would break a rule (a kept cell sharing a shard
     *     id with one of the document) or a single znode's writes, or the cells alone, exceed
     *     {@code transactionBytesMax}
     */
    public static RestorePlan of(String root, Image here, TopologyExport wanted, int epochBump,
            int transactionBytesMax) {
        return of(root, here, wanted, epochBump, transactionBytesMax, false);
    }

    /**
     * As {@link #of(String, Image, TopologyExport, int, int)}; with {@code evenIfSame}, a namespace
     * that holds the document already is written all the same, so every epoch and move version
     * rises by {@code epochBump} (after ZooKeeper was restored from a snapshot of its own, whose
     * versions are older than what shards and movers have seen).
     */
    public static RestorePlan of(String root, Image here, TopologyExport wanted, int epochBump,
            int transactionBytesMax, boolean evenIfSame) {
        if (epochBump < 0 || epochBump > EPOCH_BUMP_MAX) {
            throw new IllegalArgumentException("epochBump=" + epochBump + " is outside [0, " + EPOCH_BUMP_MAX + "]");
        }
        if (transactionBytesMax < TRANSACTION_BYTES_MIN || transactionBytesMax > TRANSACTION_BYTES_LIMIT) {
            throw new IllegalArgumentException("transactionBytesMax=" + transactionBytesMax + " is outside ["
                    + TRANSACTION_BYTES_MIN + ", " + TRANSACTION_BYTES_LIMIT + "]");
        }
        return new Planner(new TopologyPaths(root), here, TopologyExports.content(wanted), epochBump,
                transactionBytesMax, evenIfSame).plan();
    }

    private static int str(String s) {
        return 4 + s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static final class Planner {
        final TopologyPaths paths;
        final Image here;
        final TopologyExport wanted;
        final int bump;
        final int budget;
        final boolean evenIfSame;
        final List<String> changes = new ArrayList<>();
        final List<String> kept = new ArrayList<>();
        final Map<String, Integer> epochShift = new HashMap<>();

        Planner(TopologyPaths paths, Image here, TopologyExport wanted, int bump, int budget, boolean evenIfSame) {
            this.paths = paths;
            this.here = here;
            this.wanted = wanted;
            this.bump = bump;
            this.budget = budget;
            this.evenIfSame = evenIfSame;
        }

        RestorePlan plan() {
            TopologyExport have = here.content();
            List<String> differences = differences(have, wanted);
            if (differences.isEmpty() && (!evenIfSame || bump == 0)) {
                return new RestorePlan(List.of(), have, List.of(), List.of(), List.of(), false);
            }
            boolean overwrites = !TopologyExports.isEmpty(have);

            Map<String, ExportedCell> haveCells = new TreeMap<>();
            have.getCellsList().forEach(c -> haveCells.put(c.getCell().getName(), c));
            Map<String, ExportedCell> resultCells = new TreeMap<>();
            List<ExportedCell> replaced = new ArrayList<>();
            List<ExportedCell> created = new ArrayList<>();
            for (ExportedCell w : wanted.getCellsList()) {
                String name = w.getCell().getName();
                ExportedCell h = haveCells.get(name);
                resultCells.put(name, w);
                if (h == null) {
                    created.add(w);
                    changes.add("cell " + name + ": create, " + w.getShardsCount() + " shard(s) " + shardIds(w));
                } else if (!h.equals(w)) {
                    replaced.add(h);
                    created.add(w);
                    changes.add("cell " + name + ": replace (here " + describe(h) + "; document " + describe(w) + ")");
                }
            }
            for (ExportedCell h : haveCells.values()) {
                if (!resultCells.containsKey(h.getCell().getName())) {
                    resultCells.put(h.getCell().getName(), h);
                    kept.add("cell " + h.getCell().getName() + " " + describe(h));
                }
            }
            checkShardIds(resultCells);

            Map<String, ExportedTenant> haveTenants = new TreeMap<>();
            have.getTenantsList().forEach(t -> haveTenants.put(t.getPlacement().getTenantId(), t));
            Map<String, ExportedTenant> resultTenants = new TreeMap<>();
            List<List<Op>> units = new ArrayList<>();
            for (ExportedTenant w : wanted.getTenantsList()) {
                String id = w.getPlacement().getTenantId();
                ExportedTenant h = haveTenants.get(id);
                Versioned<List<Op>> chain = chain(paths.tenant(id), TopologyCodec.encode(w.getPlacement()),
                        h == null ? null : h.getEpoch(), h != null && h.getPlacement().equals(w.getPlacement()),
                        w.getEpoch());
                int epoch = chain.version();
                epochShift.put(id, epoch - w.getEpoch());
                resultTenants.put(id, w.toBuilder().setEpoch(epoch).build());
                if (!chain.value().isEmpty()) {
                    units.add(chain.value());
                    changes.add("tenant " + id + ": " + placement(w.getPlacement()) + " at epoch " + epoch + " ("
                            + (h == null ? "new" : "here " + placement(h.getPlacement()) + " at epoch " + h.getEpoch())
                            + "; document epoch " + w.getEpoch() + ")");
                }
            }
            for (ExportedTenant h : haveTenants.values()) {
                if (resultTenants.putIfAbsent(h.getPlacement().getTenantId(), h) == null) {
                    kept.add("tenant " + h.getPlacement().getTenantId() + " " + placement(h.getPlacement())
                            + " at epoch " + h.getEpoch());
                }
            }

            Map<String, ExportedMove> haveMoves = new TreeMap<>();
            have.getMovesList().forEach(m -> haveMoves.put(m.getMove().getMoveId(), m));
            Map<String, ExportedMove> resultMoves = new TreeMap<>();
            for (ExportedMove w : wanted.getMovesList()) {
                Move m = shifted(w.getMove(), resultTenants);
                String id = m.getMoveId();
                ExportedMove h = haveMoves.get(id);
                Versioned<List<Op>> chain = chain(paths.move(id), TopologyCodec.encode(m),
                        h == null ? null : h.getVersion(), h != null && h.getMove().equals(m), w.getVersion());
                resultMoves.put(id, ExportedMove.newBuilder().setMove(m).setVersion(chain.version()).build());
                if (!chain.value().isEmpty()) {
                    units.add(chain.value());
                    changes.add("move " + id + ": " + m.getStep() + " at version " + chain.version() + " ("
                            + (h == null ? "new" : "here " + h.getMove().getStep() + " at version " + h.getVersion())
                            + "; document version " + w.getVersion()
                            + (m.equals(w.getMove()) ? "" : "; its epochs shifted with its tenant's: planned "
                                    + m.getPlannedEpoch() + ", fenced " + m.getFencedEpoch()) + ")");
                }
            }
            for (ExportedMove h : haveMoves.values()) {
                if (resultMoves.putIfAbsent(h.getMove().getMoveId(), h) == null) {
                    kept.add("move " + h.getMove().getMoveId() + " " + h.getMove().getStep() + " at version "
                            + h.getVersion());
                }
            }

            TopologyExport result = TopologyExports.content(TopologyExport.newBuilder()
                    .addAllCells(resultCells.values()).addAllTenants(resultTenants.values())
                    .addAllMoves(resultMoves.values()).build());

            List<Op> folders = folders();
            Integer cellsVersion = here.versions().get(paths.cells());
            List<Op> one = new ArrayList<>(folders);
            replaced.forEach(c -> one.addAll(deleteCell(c)));
            if (!replaced.isEmpty() || !created.isEmpty()) {
                if (cellsVersion != null) {
                    // Bumping the folder's version fails any createCell that read it before.
                    one.add(new SetData(paths.cells(), EMPTY, cellsVersion));
                }
            }
            created.forEach(c -> one.addAll(createCell(c)));
            units.forEach(one::addAll);
            Transaction single = new Transaction(one);
            if (single.bytes() <= budget) {
                return new RestorePlan(List.of(single), result, changes, kept, differences, overwrites);
            }
            return new RestorePlan(split(folders, haveCells.values(), resultCells.values(), units, cellsVersion,
                    single.bytes()), result, changes, kept, differences, overwrites);
        }

        /**
         * Several transactions: every cell away, then the tenants and moves, then every cell back
         * (see the class comment).
         */
        private List<Transaction> split(List<Op> folders, Iterable<ExportedCell> haveCells,
                Iterable<ExportedCell> resultCells, List<List<Op>> units, Integer cellsVersion, int singleBytes) {
            List<Transaction> out = new ArrayList<>();
            List<Op> first = new ArrayList<>(folders);
            boolean touched = false;
            for (ExportedCell c : haveCells) {
                first.addAll(deleteCell(c));
                touched = true;
            }
            if (touched && cellsVersion != null) {
                first.add(new SetData(paths.cells(), EMPTY, cellsVersion));
            }
            if (!first.isEmpty()) {
                out.add(fit(first, "taking the " + "cells away"));
            }
            List<Op> current = new ArrayList<>();
            for (List<Op> unit : units) {
                if (new Transaction(unit).bytes() > budget) {
                    throw new IllegalStateException("the writes of " + unit.get(0).path() + " alone ("
                            + unit.size() + " writes, about " + new Transaction(unit).bytes()
                            + " bytes) exceed the transaction bound of " + budget + " bytes: lower the epoch bump,"
                            + " or raise jute.maxbuffer on every ZooKeeper server and this client and the bound with it");
                }
                List<Op> next = new ArrayList<>(current);
                next.addAll(unit);
                if (new Transaction(next).bytes() > budget) {
                    out.add(new Transaction(current));
                    current = new ArrayList<>(unit);
                } else {
                    current = next;
                }
            }
            if (!current.isEmpty()) {
                out.add(new Transaction(current));
            }
            List<Op> last = new ArrayList<>();
            if (cellsVersion != null) {
                last.add(new SetData(paths.cells(), EMPTY, touched ? cellsVersion + 1 : cellsVersion));
            } else if (folders.stream().noneMatch(o -> o.path().equals(paths.cells()))) {
                throw new IllegalStateException("no cells folder planned"); // folders() always plans it
            } else {
                last.add(new SetData(paths.cells(), EMPTY, 0));
            }
            for (ExportedCell c : resultCells) {
                last.addAll(createCell(c));
            }
            out.add(fit(last, "creating every cell"));
            changes.add(0, "in " + out.size() + " transactions: the whole import needs about " + singleBytes
                    + " bytes, more than the bound of " + budget + "; no cell exists from the first to the last,"
                    + " so nothing is routed on a partial topology");
            return out;
        }

        private Transaction fit(List<Op> ops, String what) {
            Transaction t = new Transaction(ops);
            if (t.bytes() > budget) {
                throw new IllegalStateException(what + " takes one transaction of about " + t.bytes()
                        + " bytes, more than the bound of " + budget + " bytes: raise jute.maxbuffer on every"
                        + " ZooKeeper server and this client, and the bound with it");
            }
            return t;
        }

        /**
         * The writes that leave {@code path} holding {@code data} at the version this plan gives it
         * (see the class comment), and that version.
         *
         * @param haveVersion null when the znode does not exist
         */
        private Versioned<List<Op>> chain(String path, byte[] data, Integer haveVersion, boolean sameValue,
                int docVersion) {
            List<Op> ops = new ArrayList<>();
            if (haveVersion == null) {
                int target = docVersion + bump;
                ops.add(new Create(path, target == 0 ? data : EMPTY));
                for (int v = 0; v < target; v++) {
                    ops.add(new SetData(path, v == target - 1 ? data : EMPTY, v));
                }
                return new Versioned<>(ops, target);
            }
            int floor = Math.max(haveVersion, docVersion) + bump;
            if (floor == haveVersion && sameValue) {
                return new Versioned<>(ops, haveVersion);
            }
            int target = Math.max(floor, haveVersion + 1);
            for (int v = haveVersion; v < target; v++) {
                ops.add(new SetData(path, v == target - 1 ? data : EMPTY, v));
            }
            return new Versioned<>(ops, target);
        }

        /** A running move named by its tenant, with its epochs moved as far as the tenant's. */
        private Move shifted(Move m, Map<String, ExportedTenant> tenants) {
            if (m.getStep() == MoveStep.CLEANED || m.getStep() == MoveStep.ABORTED) {
                return m;
            }
            ExportedTenant t = tenants.get(m.getTenantId());
            Integer shift = epochShift.get(m.getTenantId());
            if (t == null || shift == null || shift == 0 || !t.getPlacement().getMoveId().equals(m.getMoveId())) {
                return m;
            }
            Move.Builder b = m.toBuilder().setPlannedEpoch(m.getPlannedEpoch() + shift);
            if (m.getFencedEpoch() != 0) {
                b.setFencedEpoch(m.getFencedEpoch() + shift);
            }
            return b.build();
        }

        /** The root's ancestors, the root and its three durable folders, where they are missing. */
        private List<Op> folders() {
            List<String> wantedPaths = new ArrayList<>();
            String[] segments = paths.root.substring(1).split("/");
            StringBuilder p = new StringBuilder();
            for (String s : segments) {
                p.append('/').append(s);
                wantedPaths.add(p.toString());
            }
            wantedPaths.add(paths.cells());
            wantedPaths.add(paths.tenants());
            wantedPaths.add(paths.moves());
            List<Op> ops = new ArrayList<>();
            for (String path : wantedPaths) {
                if (!here.versions().containsKey(path)) {
                    ops.add(new Create(path, EMPTY));
                }
            }
            return ops;
        }

        private List<Op> createCell(ExportedCell c) {
            String name = c.getCell().getName();
            List<Op> ops = new ArrayList<>();
            ops.add(new Create(paths.cell(name), TopologyCodec.encode(c.getCell())));
            if (c.getShardsCount() > 0) {
                ops.add(new Create(paths.shards(name), EMPTY));
                for (ShardInfo s : c.getShardsList()) {
                    ops.add(new Create(paths.shard(name, s.getShardId()), TopologyCodec.encode(s)));
                }
            }
            return ops;
        }

        private List<Op> deleteCell(ExportedCell c) {
            String name = c.getCell().getName();
            List<Op> ops = new ArrayList<>();
            for (ShardInfo s : c.getShardsList()) {
                ops.add(new Delete(paths.shard(name, s.getShardId()), version(paths.shard(name, s.getShardId()))));
            }
            if (here.versions().containsKey(paths.shards(name))) {
                ops.add(new Delete(paths.shards(name), version(paths.shards(name))));
            }
            ops.add(new Delete(paths.cell(name), version(paths.cell(name))));
            return ops;
        }

        private int version(String path) {
            Integer v = here.versions().get(path);
            if (v == null) {
                throw new IllegalStateException("no version read for " + path); // the image holds every path it names
            }
            return v;
        }

        private static void checkShardIds(Map<String, ExportedCell> cells) {
            Map<String, String> cellOf = new HashMap<>();
            List<String> problems = new ArrayList<>();
            for (ExportedCell c : cells.values()) {
                for (ShardInfo s : c.getShardsList()) {
                    String other = cellOf.putIfAbsent(s.getShardId(), c.getCell().getName());
                    if (other != null) {
                        problems.add("shard " + s.getShardId() + " would be in cells " + other + " and "
                                + c.getCell().getName());
                    }
                }
            }
            if (!problems.isEmpty()) {
                throw new IllegalStateException("the cells kept here and the document's share shard ids: "
                        + String.join("; ", problems));
            }
        }
    }

    /** How {@code have} differs from {@code wanted}, a line per cell, tenant and move; both content. */
    static List<String> differences(TopologyExport have, TopologyExport wanted) {
        List<String> out = new ArrayList<>();
        Map<String, ExportedCell> hc = new TreeMap<>();
        have.getCellsList().forEach(c -> hc.put(c.getCell().getName(), c));
        Map<String, ExportedCell> wc = new TreeMap<>();
        wanted.getCellsList().forEach(c -> wc.put(c.getCell().getName(), c));
        compare(out, "cell", hc, wc, RestorePlan::describe);
        Map<String, ExportedTenant> ht = new TreeMap<>();
        have.getTenantsList().forEach(t -> ht.put(t.getPlacement().getTenantId(), t));
        Map<String, ExportedTenant> wt = new TreeMap<>();
        wanted.getTenantsList().forEach(t -> wt.put(t.getPlacement().getTenantId(), t));
        compare(out, "tenant", ht, wt, t -> placement(t.getPlacement()) + " at epoch " + t.getEpoch());
        Map<String, ExportedMove> hm = new TreeMap<>();
        have.getMovesList().forEach(m -> hm.put(m.getMove().getMoveId(), m));
        Map<String, ExportedMove> wm = new TreeMap<>();
        wanted.getMovesList().forEach(m -> wm.put(m.getMove().getMoveId(), m));
        compare(out, "move", hm, wm, m -> m.getMove().getStep() + " at version " + m.getVersion());
        return out;
    }

    private static <T> void compare(List<String> out, String kind, Map<String, T> have, Map<String, T> wanted,
            java.util.function.Function<T, String> describe) {
        for (Map.Entry<String, T> e : have.entrySet()) {
            T w = wanted.get(e.getKey());
            if (w == null) {
                out.add(kind + " " + e.getKey() + ": here " + describe.apply(e.getValue()) + ", not in the document");
            } else if (!Objects.equals(w, e.getValue())) {
                String h = describe.apply(e.getValue());
                String d = describe.apply(w);
                out.add(kind + " " + e.getKey() + ": here " + h + "; document " + d
                        + (h.equals(d) ? " (other fields differ)" : ""));
            }
        }
        for (Map.Entry<String, T> e : wanted.entrySet()) {
            if (!have.containsKey(e.getKey())) {
                out.add(kind + " " + e.getKey() + ": not here; document " + describe.apply(e.getValue()));
            }
        }
    }

    private static String describe(ExportedCell c) {
        return "regions " + c.getCell().getRegionsList() + ", shards " + shardIds(c);
    }

    private static String shardIds(ExportedCell c) {
        List<String> s = new ArrayList<>();
        for (ShardInfo i : c.getShardsList()) {
            s.add(i.getShardId() + "=" + i.getRegion() + "=" + i.getAddress());
        }
        return s.toString();
    }

    private static String placement(TenantPlacement p) {
        return "in " + p.getCell() + " " + p.getState() + (p.getMoveId().isEmpty() ? "" : " (move " + p.getMoveId() + ")");
    }
}
