package io.lastunit.admin.move;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.shard.v1.CountItemsResponse;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.DropTenantRequest;
import io.lastunit.api.shard.v1.Drift;
import io.lastunit.api.shard.v1.DriftKind;
import io.lastunit.api.shard.v1.ExportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantResponse;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.BucketFigures;
import io.lastunit.api.shard.v1.ItemSummary;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.SummarizeTenantRequest;
import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.api.shard.v1.TenantMoveRequest;
import io.lastunit.api.shard.v1.TenantMoveResponse;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A shard node's side of tenant moves, in memory, over real gRPC on 127.0.0.1: the contract of the
 * move RPCs of {@code shard.proto} on rows of a toy shape, so the mover can be tested through
 * every step, crash and refusal apart from the real shard node's implementation. A row
 * is {@code {"k":"<key>","v":<n>}} in table items (one per item, created first), buckets or holds;
 * each write bumps the shard's version, and an export's snapshot is that version ("v42"), so an
 * export since a snapshot returns exactly the rows written after it. Items are ACTIVE (written by
 * {@link #write}), FROZEN, IMPORTING or MOVED, as the proto says.
 *
 * <p>Thread-safe: one lock per shard, so an export reads one instant (as REPEATABLE READ would) and
 * a freeze waits for the writes before it. Faults: {@link #failNext} fails the next calls of one
 * RPC with a status; {@link #pendingTransfers} makes an item report pending transfers;
 * {@link #corrupt} makes the invariant check report a drift.
 *
 * <p>The calls that write are fenced by the mover's token as the proto says: INVALID_ARGUMENT
 * without one above 0, MOVE_SUPERSEDED (nothing written) when a higher one wrote here for the
 * tenant's move; checked under the shard's lock, with the write.
 */
final class FakeShard implements AutoCloseable {
    static final Pattern ROW = Pattern.compile("\\{\"k\":\"([^\"]+)\",\"v\":(-?\\d+)\\}");
    static final List<String> TABLES = List.of("items", "buckets", "holds");

    record Row(String table, String key, long value, long version) {
    }

    /** The (tenant, move) a mover token is kept for. */
    private record MoveKey(String tenant, String move) {
    }

    static final class Item {
        String state;
        final Map<String, Row> rows = new TreeMap<>();

        Item(String state) {
            this.state = state;
        }
    }

    final ShardInfo info;
    private final Map<String, Map<String, Item>> tenants = new TreeMap<>();
    /** The highest mover token each (tenant, move) wrote with here. */
    private final Map<MoveKey, Long> tokens = new java.util.HashMap<>();
    /** Per tenant, the writing calls refused MOVE_SUPERSEDED here. */
    private final Map<String, Integer> superseded = new java.util.HashMap<>();
    private final Map<String, Fault> faults = new ConcurrentHashMap<>();
    private final Map<String, Long> pending = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> pendingLeft = new ConcurrentHashMap<>();
    private final AtomicInteger calls = new AtomicInteger();
    private volatile boolean corrupt;
    private long version;
    private final Server server;

    private record Fault(Status status, AtomicInteger left) {
    }

    FakeShard(String id, String cell, String region) throws IOException {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new Service()).build().start();
        info = ShardInfo.newBuilder().setShardId(id).setCell(cell).setRegion(region)
                .setAddress("127.0.0.1:" + server.getPort()).build();
    }

    // ---------------------------------------------------------------- what a test does to the shard

    /** Creates an item (ACTIVE) with a row, or writes a row of an ACTIVE item. */
    synchronized void create(String tenant, String item, String table, String key, long value) {
        if (!write(tenant, item, table, key, value, true)) {
            throw new IllegalStateException(tenant + "/" + item + " is not ACTIVE on " + info.getShardId());
        }
    }

    /** A sale's write to an item that exists: refused (false) unless the item is ACTIVE here. */
    synchronized boolean update(String tenant, String item, String table, String key, long value) {
        return write(tenant, item, table, key, value, false);
    }

    private boolean write(String tenant, String item, String table, String key, long value, boolean create) {
        Item it = tenants.computeIfAbsent(tenant, t -> new TreeMap<>()).get(item);
        if (it == null) {
            if (!create) {
                return false;
            }
            it = new Item("ACTIVE");
            tenants.get(tenant).put(item, it);
            it.rows.put("items:item", new Row("items", "item", 0, ++version));
        }
        if (!it.state.equals("ACTIVE")) {
            return false;
        }
        it.rows.put(table + ":" + key, new Row(table, key, value, ++version));
        return true;
    }

    /** The tenant's items here, by id, with their state and rows (a copy). */
    synchronized Map<String, Map<String, Long>> rows(String tenant, String state) {
        Map<String, Map<String, Long>> out = new TreeMap<>();
        tenants.getOrDefault(tenant, Map.of()).forEach((id, it) -> {
            if (state == null || it.state.equals(state)) {
                Map<String, Long> r = new TreeMap<>();
                it.rows.forEach((k, row) -> r.put(k, row.value()));
                out.put(id, r);
            }
        });
        return out;
    }

    synchronized Map<String, String> states(String tenant) {
        Map<String, String> out = new TreeMap<>();
        tenants.getOrDefault(tenant, Map.of()).forEach((id, it) -> out.put(id, it.state));
        return out;
    }

    void failNext(String rpc, Status status, int times) {
        faults.put(rpc, new Fault(status, new AtomicInteger(times)));
    }

    /** {@code item} reports {@code n} pending transfers in the next {@code summaries} SummarizeTenant answers. */
    void pendingTransfers(String item, long n, int summaries) {
        pending.put(item, n);
        pendingLeft.put(item, new AtomicInteger(summaries));
    }

    void corrupt(boolean on) {
        corrupt = on;
    }

    int calls() {
        return calls.get();
    }

    /** The highest mover token a writing call of {@code tenant}'s move {@code move} came with here; 0: none. */
    synchronized long token(String tenant, String move) {
        return tokens.getOrDefault(new MoveKey(tenant, move), 0L);
    }

    /** The writing calls of {@code tenant} refused here with MOVE_SUPERSEDED. */
    synchronized int superseded(String tenant) {
        return superseded.getOrDefault(tenant, 0);
    }

    /** A writing call's token: refused unless above 0 and at least the highest seen for its move; stored. */
    private synchronized void admit(String rpc, String tenant, String move, long token) {
        if (token < 1) {
            throw Failure.invalid("mover_token", "is " + token + ", must be > 0");
        }
        MoveKey key = new MoveKey(tenant, move);
        long stored = tokens.getOrDefault(key, 0L);
        if (stored > token) {
            superseded.merge(tenant, 1, Integer::sum);
            throw Failure.of(Reason.MOVE_SUPERSEDED, rpc + ": mover_token=" + token + " is older than " + stored
                    + " on " + info.getShardId());
        }
        tokens.put(key, Math.max(stored, token));
        if (rpc.equals("DropTenant MOVED")) {
            tokens.keySet().removeIf(k -> k.tenant().equals(tenant) && !k.move().equals(move));
        }
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    // ---------------------------------------------------------------- the RPCs

    private void fault(String rpc) {
        calls.incrementAndGet();
        Fault f = faults.get(rpc);
        if (f != null && f.left().getAndDecrement() > 0) {
            throw f.status().withDescription("injected at " + info.getShardId()).asRuntimeException();
        }
    }

    private synchronized List<TenantRows> export(String tenant, long since) {
        List<TenantRows> out = new ArrayList<>();
        for (String table : TABLES) {
            TenantRows.Builder t = TenantRows.newBuilder().setTable(table);
            tenants.getOrDefault(tenant, Map.of()).forEach((id, it) -> it.rows.values().stream()
                    .filter(r -> r.table().equals(table) && r.version() > since)
                    .forEach(r -> t.addRows(TenantRow.newBuilder().setItemId(id)
                            .setJson("{\"k\":\"" + r.key() + "\",\"v\":" + r.value() + "}"))));
            out.add(t.build());
        }
        return out;
    }

    private synchronized MoveCounts importRows(ImportTenantRequest req) {
        admit("ImportTenant", req.getTenantId(), req.getMoveId(), req.getMoverToken());
        Map<String, Item> items = tenants.computeIfAbsent(req.getTenantId(), t -> new TreeMap<>());
        java.util.Set<String> inRequest = new java.util.HashSet<>();
        for (TenantRows t : req.getTablesList()) {
            for (TenantRow r : t.getRowsList()) {
                Item it = items.get(r.getItemId());
                if (t.getTable().equals("items")) {
                    inRequest.add(r.getItemId());
                }
                if (t.getTable().equals("items") && it != null
                        && (it.state.equals("ACTIVE") || it.state.equals("FROZEN"))) {
                    throw Failure.of(Reason.TENANT_NOT_IMPORTABLE, "item " + r.getItemId() + " is " + it.state
                            + " on " + info.getShardId());
                }
                if (it == null && !inRequest.contains(r.getItemId())) {
                    throw Failure.invalid("tables", "row of item " + r.getItemId() + " before its item");
                }
            }
        }
        MoveCounts.Builder counts = MoveCounts.newBuilder();
        for (TenantRows t : req.getTablesList()) {
            for (TenantRow r : t.getRowsList()) {
                Matcher m = ROW.matcher(r.getJson());
                if (!m.matches()) {
                    throw Failure.invalid("json", r.getJson());
                }
                Item it = items.get(r.getItemId());
                if (t.getTable().equals("items")) {
                    if (it == null || it.state.equals("MOVED")) {
                        it = new Item("IMPORTING");
                        items.put(r.getItemId(), it);
                    }
                    counts.setItems(counts.getItems() + 1);
                } else if (t.getTable().equals("buckets")) {
                    counts.setBuckets(counts.getBuckets() + 1);
                } else {
                    counts.setHolds(counts.getHolds() + 1);
                }
                it.rows.put(t.getTable() + ":" + m.group(1), new Row(t.getTable(), m.group(1),
                        Long.parseLong(m.group(2)), ++version));
            }
        }
        return counts.build();
    }

    private synchronized long change(String rpc, TenantMoveRequest r, String from, String to) {
        admit(rpc, r.getTenantId(), r.getMoveId(), r.getMoverToken());
        String tenant = r.getTenantId();
        long n = 0;
        for (Item it : tenants.getOrDefault(tenant, Map.of()).values()) {
            if (it.state.equals(from)) {
                it.state = to;
                n++;
            }
        }
        return n;
    }

    private synchronized long drop(DropTenantRequest r) {
        String tenant = r.getTenantId();
        String state = r.getState().name();
        admit("DropTenant " + state, tenant, r.getMoveId(), r.getMoverToken());
        Map<String, Item> items = tenants.getOrDefault(tenant, new TreeMap<>());
        long before = items.size();
        items.values().removeIf(it -> it.state.equals(state));
        return before - items.size();
    }

    private long pendingNow(String item) {
        AtomicInteger left = pendingLeft.get(item);
        return left != null && left.getAndDecrement() > 0 ? pending.getOrDefault(item, 0L) : 0;
    }

    private synchronized TenantSummary summarize(String tenant) {
        TenantSummary.Builder s = TenantSummary.newBuilder().setShardId(info.getShardId()).setRegion(info.getRegion());
        tenants.getOrDefault(tenant, Map.of()).forEach((id, it) -> {
            ItemSummary.Builder b = ItemSummary.newBuilder().setItemId(id).setRegion(info.getRegion())
                    .setState(it.state).setTransfersPending(pendingNow(id));
            long sum = 0;
            for (Row r : it.rows.values()) {
                sum += r.value();
                b.putHoldsByState(r.table(), b.getHoldsByStateOrDefault(r.table(), 0) + 1);
            }
            // As the invariants of DESIGN §1 want them: the rows' values are one bucket's available units.
            s.addItems(b.setTotal(sum).setAllotment(sum).setAvailable(sum).addBuckets(BucketFigures.newBuilder()
                    .setRow(true).setAllotment(sum).setAvailable(sum)));
        });
        return s.build();
    }

    private final class Service extends ShardServiceGrpc.ShardServiceImplBase {
        private <T> void answer(String rpc, StreamObserver<T> out, java.util.function.Supplier<T> call) {
            try {
                fault(rpc);
                T v = call.get();
                out.onNext(v);
                out.onCompleted();
            } catch (Failure f) {
                out.onError(GrpcErrors.toStatus(f));
            } catch (RuntimeException e) {
                out.onError(e);
            }
        }

        private TenantMoveResponse moved(long n) {
            return TenantMoveResponse.newBuilder().setShardId(info.getShardId()).setItems(n)
                    .setCommittedAtMicros(System.currentTimeMillis() * 1_000).build();
        }

        @Override
        public void countItems(CountItemsRequest r, StreamObserver<CountItemsResponse> out) {
            answer("CountItems", out, () -> {
                long n = states(r.getTenantId()).values().stream()
                        .filter(s -> s.equals("ACTIVE") || s.equals("FROZEN")).count();
                return CountItemsResponse.newBuilder().setShardId(info.getShardId()).setItems(n).build();
            });
        }

        @Override
        public void exportTenant(ExportTenantRequest r, StreamObserver<TenantChunk> out) {
            try {
                fault("ExportTenant");
                long since = r.getSinceSnapshot().isEmpty() ? 0 : Long.parseLong(r.getSinceSnapshot().substring(1));
                List<TenantRows> tables;
                long snapshot;
                synchronized (FakeShard.this) {
                    tables = export(r.getTenantId(), since);
                    snapshot = version;
                }
                int chunkRows = r.getChunkRows() == 0 ? 1_000 : r.getChunkRows();
                TenantChunk.Builder chunk = TenantChunk.newBuilder().setShardId(info.getShardId());
                int inChunk = 0;
                long total = 0;
                for (TenantRows t : tables) {
                    TenantRows.Builder part = TenantRows.newBuilder().setTable(t.getTable());
                    for (TenantRow row : t.getRowsList()) {
                        part.addRows(row);
                        inChunk++;
                        total++;
                        if (inChunk == chunkRows) {
                            out.onNext(chunk.addTables(part).build());
                            chunk = TenantChunk.newBuilder().setShardId(info.getShardId());
                            part = TenantRows.newBuilder().setTable(t.getTable());
                            inChunk = 0;
                        }
                    }
                    if (part.getRowsCount() > 0) {
                        chunk.addTables(part);
                    }
                }
                out.onNext(chunk.setLast(true).setSnapshot("v" + snapshot)
                        .setCounts(MoveCounts.newBuilder().setHolds(total)).build());
                out.onCompleted();
            } catch (RuntimeException e) {
                out.onError(e);
            }
        }

        @Override
        public void importTenant(ImportTenantRequest r, StreamObserver<ImportTenantResponse> out) {
            answer("ImportTenant", out, () -> ImportTenantResponse.newBuilder().setShardId(info.getShardId())
                    .setCounts(importRows(r)).build());
        }

        @Override
        public void freezeTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
            answer("FreezeTenant", out, () -> moved(change("FreezeTenant", r, "ACTIVE", "FROZEN")));
        }

        @Override
        public void unfreezeTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
            answer("UnfreezeTenant", out, () -> moved(change("UnfreezeTenant", r, "FROZEN", "ACTIVE")));
        }

        @Override
        public void activateTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
            answer("ActivateTenant", out, () -> moved(change("ActivateTenant", r, "IMPORTING", "ACTIVE")));
        }

        @Override
        public void retireTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
            answer("RetireTenant", out, () -> moved(change("RetireTenant", r, "FROZEN", "MOVED")));
        }

        @Override
        public void dropTenant(DropTenantRequest r, StreamObserver<TenantMoveResponse> out) {
            answer("DropTenant", out, () -> {
                if (r.getState() == DropState.DROP_STATE_UNSPECIFIED) {
                    throw Failure.invalid("state", "IMPORTING or MOVED");
                }
                return moved(drop(r));
            });
        }

        @Override
        public void summarizeTenant(SummarizeTenantRequest r, StreamObserver<TenantSummary> out) {
            answer("SummarizeTenant", out, () -> summarize(r.getTenantId()));
        }

        @Override
        public void checkInvariants(CheckInvariantsRequest r, StreamObserver<InvariantReport> out) {
            answer("CheckInvariants", out, () -> {
                InvariantReport.Builder b = InvariantReport.newBuilder().setShardId(info.getShardId()).setOk(!corrupt);
                if (corrupt) {
                    b.addDrifts(Drift.newBuilder().setKind(DriftKind.BUCKET_SUM).setTenantId(r.getTenantId())
                            .setItemId("?").setDetail("injected drift"));
                }
                return b.build();
            });
        }
    }
}
