package io.lastunit.shard.grpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.shard.v1.ReserveBatchRequest;
import io.lastunit.api.shard.v1.ReserveBatchResponse;
import io.lastunit.api.shard.v1.ReserveResult;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.ClaimKeyRequest;
import io.lastunit.api.shard.v1.ClaimKeyResponse;
import io.lastunit.api.shard.v1.CountItemsRequest;
import io.lastunit.api.shard.v1.CountItemsResponse;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.common.Failure;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.RequestValidator;
import io.lastunit.api.shard.v1.CompleteTransferRequest;
import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsRequest;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.ListTransfersRequest;
import io.lastunit.api.shard.v1.ListTransfersResponse;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.store.InvariantChecker;
import io.lastunit.shard.store.ReadPool;
import io.lastunit.shard.transfer.TransferStore;
import io.grpc.stub.ServerCallStreamObserver;
import io.lastunit.api.shard.v1.DropState;
import io.lastunit.api.shard.v1.DropTenantRequest;
import io.lastunit.api.shard.v1.ExportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantResponse;
import io.lastunit.api.shard.v1.SummarizeTenantRequest;
import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.api.shard.v1.TenantMoveRequest;
import io.lastunit.api.shard.v1.TenantMoveResponse;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.move.MoveCall;
import io.lastunit.shard.move.TenantExport;
import io.lastunit.shard.move.TenantMoves;
import io.lastunit.shard.move.TenantStates;
import io.lastunit.shard.move.TenantTable;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The internal shard API: the invariant check, item counts, stock levels, the three steps
 * of the demarcation protocol (DESIGN §7), the routers' batches of Reserves and the mover's calls
 * of a tenant move (DESIGN §8). An adapter: steps 1 and 2 run in bucket 0's lane of the item,
 * reads and step 3 on the read pool, each entry of a batch in its own bucket's lane, a move's calls
 * through {@link TenantMoves}. Every field is checked here, before anything runs.
 */
public final class ShardGrpcService extends ShardServiceGrpc.ShardServiceImplBase {
    /** Longest transfer id. */
    public static final int TRANSFER_ID_LENGTH_MAX = 64;
    /** Most records one ListTransfers answers. */
    public static final int LIST_TRANSFERS_MAX = 10_000;
    /** Longest window of transfer records a ListLevels snapshot may ask for: one hour. */
    public static final long TRANSFER_WINDOW_MS_MAX = 3_600_000;
    /** Longest move id (as topology's {@code moves/{move}} names allow: no '/'). */
    public static final int MOVE_ID_LENGTH_MAX = 64;
    /** Most rows one ImportTenant writes, over all its tables. */
    public static final int IMPORT_ROWS_MAX = 10_000;
    /** Longest JSON of one imported row. */
    public static final int ROW_JSON_LENGTH_MAX = 65_536;
    /** Longest {@code since_snapshot}. */
    public static final int SNAPSHOT_LENGTH_MAX = 65_536;
    /** How long an export waits for its caller to take a chunk before it gives up. */
    public static final Duration EXPORT_READY_WAIT_MAX = Duration.ofSeconds(30);
    private static final Logger log = LoggerFactory.getLogger(ShardGrpcService.class);

    private final RequestValidator validator;
    private final InvariantChecker checker;
    private final ReadPool reads;
    private final String shardId;
    private final LaneEngine engine;
    private final PlacementGuard placement;
    private final Supplier<String> region;
    private final TransferStore transfers = new TransferStore();
    private final TenantMoves moves;
    private final ReadPool completions;
    private final AtomicLong calls = new AtomicLong();

    /**
     * @param reads       committed reads (a read-only pool)
     * @param completions CompleteTransfer, which writes off the lanes (the write pool)
     * @param region      the region this shard serves now
     */
    public ShardGrpcService(RequestValidator validator, InvariantChecker checker, ReadPool reads, ReadPool completions,
                            String shardId, LaneEngine engine, PlacementGuard placement, Supplier<String> region,
                            TenantMoves moves) {
        this.moves = moves;
        this.completions = completions;
        this.validator = validator;
        this.checker = checker;
        this.reads = reads;
        this.shardId = shardId;
        this.engine = engine;
        this.placement = placement;
        this.region = region;
    }

    /** ReserveBatch entries and ClaimKeys received, answered or refused: public API calls made for the routers. */
    public long calls() {
        return calls.get();
    }

    /**
     * One entry of a ReserveBatch, decided as the same Reserve sent alone to InventoryService:
     * validated, placement-checked and handed to its bucket's lane. Throws the {@link Failure} of
     * a request refused at the edge; never blocks.
     */
    private CompletableFuture<ReserveResponse> reserve(ReserveRequest request) {
        calls.incrementAndGet();
        validator.reserve(request);
        placement.check(request.getTenantId(), request.getItemId(), request.getRegion());
        return engine.reserve(request);
    }

    /**
     * One ClaimKey: validated, placement-checked for the item's home region (this shard must be
     * the item's home) and handed to the lane of the bucket the key would be placed in.
     */
    private CompletableFuture<ReserveResponse> claim(ClaimKeyRequest request) {
        calls.incrementAndGet();
        validator.claimKey(request);
        ReserveRequest r = request.getRequest();
        placement.check(r.getTenantId(), r.getItemId(), request.getHomeRegion());
        return engine.claimKey(r, request.getHomeRegion());
    }

    /** Records a key's use by another region of the item at its home (see the proto). Never blocks. */
    @Override
    public void claimKey(ClaimKeyRequest request, StreamObserver<ClaimKeyResponse> out) {
        try {
            Replies.send(claim(request), r -> ClaimKeyResponse.newBuilder().setClaim(r.getHold()).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    /**
     * Each entry is decided on its own ({@link #reserve}; a refused entry fails its slot only);
     * the thread that completes the last entry (a lane's replier) sends the reply. Never blocks.
     */
    @Override
    public void reserveBatch(ReserveBatchRequest request, StreamObserver<ReserveBatchResponse> out) {
        int n = request.getRequestsCount();
        if (n == 0 || n > Limits.RESERVE_BATCH_MAX) {
            Replies.fail(Failure.invalid("requests", "has " + n + " entries, must be within [1, "
                    + Limits.RESERVE_BATCH_MAX + "]"), out);
            return;
        }
        ReserveResult[] results = new ReserveResult[n];
        // Each slot is written before the count drops, so whoever brings it to 0 sees every slot.
        AtomicInteger pending = new AtomicInteger(n);
        for (int i = 0; i < n; i++) {
            int slot = i;
            CompletableFuture<ReserveResponse> f;
            try {
                f = reserve(request.getRequests(i));
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            f.whenComplete((response, err) -> {
                results[slot] = err == null ? ReserveResult.newBuilder().setResponse(response).build()
                        : ReserveResult.newBuilder().setError(errorOf(err)).build();
                if (pending.decrementAndGet() == 0) {
                    try {
                        out.onNext(ReserveBatchResponse.newBuilder().addAllResults(Arrays.asList(results)).build());
                        out.onCompleted();
                    } catch (RuntimeException e) {
                        // The router cancelled the call or its deadline passed: nobody is listening.
                        log.debug("ReserveBatch reply dropped: {}", e.toString());
                    }
                }
            });
        }
    }

    /** The status a failed entry would have failed its own call with, as {@code google.rpc.Status}. */
    static com.google.rpc.Status errorOf(Throwable t) {
        StatusRuntimeException s = GrpcErrors.toStatus(t);
        com.google.rpc.Status proto = StatusProto.fromThrowable(s);
        if (proto != null) {
            return proto;
        }
        Status status = s.getStatus();
        return com.google.rpc.Status.newBuilder().setCode(status.getCode().value())
                .setMessage(String.valueOf(status.getDescription())).build();
    }

    @Override
    public void listLevels(ListLevelsRequest request, StreamObserver<ListLevelsResponse> out) {
        try {
            filter(request.getTenantId(), request.getItemId());
            long window = request.getTransferWindowMs();
            if (window < 0 || window > TRANSFER_WINDOW_MS_MAX) {
                throw Failure.invalid("transfer_window_ms", "is " + window + ", must be 0 (levels only) or within [1, "
                        + TRANSFER_WINDOW_MS_MAX + "]");
            }
            String here = region.get();
            Replies.send(reads.submit("ListLevels read failed", c -> transfers.snapshot(c, request.getTenantId(),
                    request.getItemId(), window, LIST_TRANSFERS_MAX)), snap -> {
                ListLevelsResponse.Builder b = ListLevelsResponse.newBuilder().setShardId(shardId).setRegion(here);
                for (ItemLevel.Builder l : snap.levels()) {
                    long[] demand = engine.demand(l.getTenantId(), l.getItemId());
                    b.addItems(l.setRegion(here).setReserves(demand[0]).setSoldOuts(demand[1]));
                }
                if (window > 0) {
                    b.addAllTransfers(snap.transfers()).setTransfersSinceMs(snap.sinceMs())
                            .setTransfersTruncated(snap.truncated());
                }
                return b.build();
            }, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void transferOut(TransferOutRequest r, StreamObserver<Transfer> out) {
        try {
            transferId(r.getTransferId());
            validator.tenant(r.getTenantId());
            validator.item(r.getItemId());
            peer(r.getPeerShardId());
            if (r.getMaxQuantity() < 1 || r.getMaxQuantity() > validator.limits().itemTotalMax()) {
                throw Failure.invalid("max_quantity", "is " + r.getMaxQuantity() + ", must be within [1, "
                        + validator.limits().itemTotalMax() + "]");
            }
            if (r.getMinQuantity() < 0 || r.getMinQuantity() > r.getMaxQuantity()) {
                throw Failure.invalid("min_quantity", "is " + r.getMinQuantity() + ", must be within [0, max_quantity="
                        + r.getMaxQuantity() + "]");
            }
            Replies.send(engine.transferOut(r), t -> t, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void transferIn(TransferInRequest r, StreamObserver<Transfer> out) {
        try {
            transferId(r.getTransferId());
            validator.tenant(r.getTenantId());
            validator.item(r.getItemId());
            peer(r.getPeerShardId());
            if (r.getQuantity() < 1 || r.getQuantity() > validator.limits().itemTotalMax()) {
                throw Failure.invalid("quantity", "is " + r.getQuantity() + ", must be within [1, "
                        + validator.limits().itemTotalMax() + "]");
            }
            Replies.send(engine.transferIn(r), t -> t, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void completeTransfer(CompleteTransferRequest r, StreamObserver<Transfer> out) {
        try {
            transferId(r.getTransferId());
            Replies.send(completions.submit("CompleteTransfer outcome unknown; retry with the same transfer_id",
                    c -> transfers.complete(c, r.getTransferId())), t -> {
                if (t == null) {
                    throw Failure.of(Reason.TRANSFER_NOT_FOUND, "no OUT record of transfer " + r.getTransferId()
                            + " on shard " + shardId);
                }
                return t;
            }, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void listTransfers(ListTransfersRequest r, StreamObserver<ListTransfersResponse> out) {
        try {
            if (r.getTransferIdsCount() > LIST_TRANSFERS_MAX) {
                throw Failure.invalid("transfer_ids", "has " + r.getTransferIdsCount() + " entries, at most "
                        + LIST_TRANSFERS_MAX);
            }
            for (String id : r.getTransferIdsList()) {
                transferId(id);
            }
            Replies.send(reads.submit("ListTransfers read failed",
                    c -> transfers.list(c, r.getTransferIdsList(), LIST_TRANSFERS_MAX)),
                    list -> ListTransfersResponse.newBuilder().setShardId(shardId).addAllTransfers(list).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    private static void transferId(String id) {
        if (id.isEmpty()) {
            throw Failure.invalid("transfer_id", "is required");
        }
        if (!Limits.isId(id, TRANSFER_ID_LENGTH_MAX)) {
            throw Failure.invalid("transfer_id", "must be 1.." + TRANSFER_ID_LENGTH_MAX
                    + " printable ASCII characters without spaces");
        }
    }

    private static void peer(String id) {
        if (id.isEmpty()) {
            throw Failure.invalid("peer_shard_id", "is required");
        }
        if (!Limits.isId(id, 64)) {
            throw Failure.invalid("peer_shard_id", "must be 1..64 printable ASCII characters without spaces");
        }
    }

    private void filter(String tenant, String item) {
        if (!tenant.isEmpty()) {
            validator.tenant(tenant);
        }
        if (!item.isEmpty()) {
            if (tenant.isEmpty()) {
                throw Failure.invalid("tenant_id", "is required when item_id is given");
            }
            validator.item(item);
        }
    }

    @Override
    public void countItems(CountItemsRequest request, StreamObserver<CountItemsResponse> out) {
        try {
            validator.tenant(request.getTenantId());
            // Only items this shard serves or is moving away: a move's IMPORTING copy and a MOVED
            // source (or what a failed clean-up left of either) do not make the tenant live here.
            Replies.send(reads.submit("CountItems read failed", c -> {
                try (var ps = c.prepareStatement("SELECT count(*) FROM items WHERE tenant_id = ?"
                        + " AND state IN ('ACTIVE', 'PAUSED', 'FROZEN')")) {
                    ps.setString(1, request.getTenantId());
                    try (var rs = ps.executeQuery()) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }
            }), n -> CountItemsResponse.newBuilder().setShardId(shardId).setItems(n).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void checkInvariants(CheckInvariantsRequest request, StreamObserver<InvariantReport> out) {
        try {
            if (!request.getTenantId().isEmpty()) {
                validator.tenant(request.getTenantId());
            }
            if (!request.getItemId().isEmpty()) {
                if (request.getTenantId().isEmpty()) {
                    throw Failure.invalid("tenant_id", "is required when item_id is given");
                }
                validator.item(request.getItemId());
            }
            Replies.send(reads.submit("CheckInvariants read failed",
                    c -> checker.check(c, request.getTenantId(), request.getItemId())), r -> r, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    // ---- tenant moves (the mover's calls) ----

    @Override
    public void exportTenant(ExportTenantRequest r, StreamObserver<TenantChunk> out) {
        try {
            validator.tenant(r.getTenantId());
            moveId(r.getMoveId());
            sinceSnapshot(r.getSinceSnapshot());
            if (r.getSinceCutMicros() < 0 || (r.getSinceCutMicros() > 0 && r.getSinceSnapshot().isEmpty())) {
                throw Failure.invalid("since_cut_micros", "is " + r.getSinceCutMicros()
                        + "; it is 0, or the cut_micros of the export since_snapshot names (above 0)");
            }
            int chunkRows = r.getChunkRows() == 0 ? TenantExport.CHUNK_ROWS_DEFAULT : r.getChunkRows();
            if (chunkRows < 1 || chunkRows > TenantExport.CHUNK_ROWS_MAX) {
                throw Failure.invalid("chunk_rows", "is " + r.getChunkRows() + ", must be within [1, "
                        + TenantExport.CHUNK_ROWS_MAX + "] (0 = " + TenantExport.CHUNK_ROWS_DEFAULT + ")");
            }
            ChunkStream stream = new ChunkStream((ServerCallStreamObserver<TenantChunk>) out, EXPORT_READY_WAIT_MAX);
            moves.export(r.getTenantId(), r.getMoveId(), r.getSinceSnapshot(), r.getSinceCutMicros(), chunkRows,
                            stream)
                    .whenComplete(stream::finish);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void importTenant(ImportTenantRequest r, StreamObserver<ImportTenantResponse> out) {
        try {
            validator.tenant(r.getTenantId());
            moveId(r.getMoveId());
            moverToken(r.getMoverToken());
            importedRows(r);
            Replies.send(moves.importRows(new MoveCall(r.getTenantId(), r.getMoveId(), r.getMoverToken()),
                            r.getTablesList()),
                    counts -> ImportTenantResponse.newBuilder().setShardId(shardId).setCounts(counts).build(), out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void freezeTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
        change(r, TenantStates.Change.FREEZE, out);
    }

    @Override
    public void unfreezeTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
        change(r, TenantStates.Change.UNFREEZE, out);
    }

    @Override
    public void activateTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
        change(r, TenantStates.Change.ACTIVATE, out);
    }

    @Override
    public void retireTenant(TenantMoveRequest r, StreamObserver<TenantMoveResponse> out) {
        change(r, TenantStates.Change.RETIRE, out);
    }

    private void change(TenantMoveRequest r, TenantStates.Change change, StreamObserver<TenantMoveResponse> out) {
        try {
            validator.tenant(r.getTenantId());
            moveId(r.getMoveId());
            moverToken(r.getMoverToken());
            Replies.send(moves.change(new MoveCall(r.getTenantId(), r.getMoveId(), r.getMoverToken()), change),
                    this::moveResponse, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void dropTenant(DropTenantRequest r, StreamObserver<TenantMoveResponse> out) {
        try {
            validator.tenant(r.getTenantId());
            moveId(r.getMoveId());
            moverToken(r.getMoverToken());
            ItemState state;
            if (r.getState() == DropState.IMPORTING) {
                state = ItemState.IMPORTING;
            } else if (r.getState() == DropState.MOVED) {
                state = ItemState.MOVED;
            } else {
                throw Failure.invalid("state", "is " + r.getState() + ", must be IMPORTING or MOVED");
            }
            Replies.send(moves.drop(new MoveCall(r.getTenantId(), r.getMoveId(), r.getMoverToken()), state),
                    this::moveResponse, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    @Override
    public void summarizeTenant(SummarizeTenantRequest r, StreamObserver<TenantSummary> out) {
        try {
            validator.tenant(r.getTenantId());
            if (r.getPart() == SummaryPart.UNRECOGNIZED) {
                throw Failure.invalid("part", "is " + r.getPartValue() + ", not a SummaryPart");
            }
            boolean all = r.getPart() == SummaryPart.SUMMARY_PART_ALL;
            if (all ? r.getEndedBeforeMicros() != 0 : r.getEndedBeforeMicros() <= 0) {
                throw Failure.invalid("ended_before_micros", "is " + r.getEndedBeforeMicros() + "; "
                        + (all ? "the ALL part takes none (0)" : r.getPart() + " needs a cut above 0"));
            }
            Replies.send(moves.summarize(r.getTenantId(), region.get(), r.getPart(), r.getEndedBeforeMicros()),
                    s -> s, out);
        } catch (Failure f) {
            Replies.fail(f, out);
        }
    }

    private TenantMoveResponse moveResponse(TenantStates.Changed done) {
        return TenantMoveResponse.newBuilder().setShardId(shardId).setItems(done.count())
                .setCommittedAtMicros(done.committedAtMicros()).build();
    }

    private static void moveId(String id) {
        if (id.isEmpty()) {
            throw Failure.invalid("move_id", "is required");
        }
        if (!Limits.isId(id, MOVE_ID_LENGTH_MAX) || id.indexOf('/') >= 0) {
            throw Failure.invalid("move_id", "must be 1.." + MOVE_ID_LENGTH_MAX
                    + " printable ASCII characters without spaces or '/'");
        }
    }

    /** A writing move call's fencing token: required, above 0 (the proto's 0 is "not set"). */
    private static void moverToken(long token) {
        if (token < 1) {
            throw Failure.invalid("mover_token", "is " + token + ", must be > 0: the fencing token of the mover"
                    + " that owns the move (the move's znode version after the mover adopted it)");
        }
    }

    /**
     * Empty, or a snapshot as PostgreSQL writes one ({@code xmin:xmax:xip,...}): ids from 1,
     * {@code xmin <= xmax}, each in-progress id within {@code [xmin, xmax)} and in order. What
     * PostgreSQL would refuse is refused here, as the caller's mistake, not the store's failure.
     */
    private static void sinceSnapshot(String s) {
        if (s.isEmpty()) {
            return;
        }
        if (s.length() > SNAPSHOT_LENGTH_MAX) {
            throw Failure.invalid("since_snapshot", "is " + s.length() + " characters, at most " + SNAPSHOT_LENGTH_MAX);
        }
        String[] parts = s.split(":", -1);
        boolean ok = parts.length == 3;
        if (ok) {
            long xmin = snapshotId(parts[0]);
            long xmax = snapshotId(parts[1]);
            ok = xmin >= 1 && xmin <= xmax;
            long last = xmin;
            for (String xip : parts[2].isEmpty() ? new String[0] : parts[2].split(",", -1)) {
                long x = snapshotId(xip);
                ok &= x >= last && x < xmax;
                last = Math.max(last, x);
            }
        }
        if (!ok) {
            throw Failure.invalid("since_snapshot", "is not a snapshot a previous ExportTenant returned"
                    + " (xmin:xmax:xip,... with xmin <= each xip < xmax, in order)");
        }
    }

    /** A transaction id of a snapshot's text: decimal digits only; -1 for anything else. */
    private static long snapshotId(String digits) {
        if (digits.isEmpty() || digits.length() > 19 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        return Long.parseLong(digits);
    }

    /** The tables of an import: names from the fixed set, each once; 1..IMPORT_ROWS_MAX rows, each with an item and JSON. */
    private void importedRows(ImportTenantRequest r) {
        int total = 0;
        for (TenantRows t : r.getTablesList()) {
            total += t.getRowsCount();
        }
        if (total < 1 || total > IMPORT_ROWS_MAX) {
            throw Failure.invalid("tables.rows", "has " + total + " rows over all tables, must be within [1, "
                    + IMPORT_ROWS_MAX + "]");
        }
        Set<String> seen = new HashSet<>();
        int itemIdMax = validator.limits().itemIdLengthMax();
        for (TenantRows t : r.getTablesList()) {
            if (TenantTable.named(t.getTable()).isEmpty()) {
                throw Failure.invalid("tables.table", "'" + t.getTable() + "' is not one of " + TenantTable.names());
            }
            if (!seen.add(t.getTable())) {
                throw Failure.invalid("tables.table", "'" + t.getTable() + "' appears twice");
            }
            for (TenantRow row : t.getRowsList()) {
                if (!Limits.isId(row.getItemId(), itemIdMax)) {
                    throw Failure.invalid("tables.rows.item_id", "must be 1.." + itemIdMax
                            + " printable ASCII characters without spaces (a row of " + t.getTable() + ")");
                }
                if (row.getJson().isEmpty() || row.getJson().length() > ROW_JSON_LENGTH_MAX) {
                    throw Failure.invalid("tables.rows.json", "is " + row.getJson().length()
                            + " characters (a row of " + t.getTable() + "), must be within [1, "
                            + ROW_JSON_LENGTH_MAX + "]");
                }
            }
        }
    }
}
