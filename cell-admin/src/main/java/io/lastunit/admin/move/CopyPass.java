package io.lastunit.admin.move;

import io.lastunit.admin.move.plan.RowPlacement;
import io.lastunit.api.shard.v1.ExportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantRequest;
import io.lastunit.api.shard.v1.ImportTenantResponse;
import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.api.topology.v1.ShardInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * One copy pass of a move: every source shard's export (everything, or what changed since the
 * snapshot the previous pass read there), each row routed to its target shard
 * ({@link RowPlacement}) and imported there in requests of at most {@code importRowsMax} rows and
 * {@code importBytesMax} bytes. Source shards are copied in parallel on the caller's pool; the
 * rows of one source reach each target in the order they were exported, so an item always arrives
 * before its buckets and holds.
 *
 * <p>Not thread-safe itself (one pass, one caller); its sources' tasks share nothing but the
 * {@link Checkpoint}, which must be thread-safe. Hazard: a pass that fails half-way has imported
 * part of the rows. That is harmless (imports are upserts and the items stay IMPORTING, never
 * served), and the next pass, or the roll-back's DropTenant IMPORTING, deals with them.
 */
final class CopyPass {
    /** Called between chunks, from the pass's threads: the mover's lease check and abort poll. */
    @FunctionalInterface
    interface Checkpoint {
        void check();
    }

    /**
     * @param rowsExported rows the sources exported (a row exported twice after a retried stream counts once)
     * @param copied       rows the targets wrote, by kind
     * @param snapshots    per source shard id, the snapshot its export read and its cut: the next pass's since
     */
    record Result(long rowsExported, MoveCounts copied, Map<String, Since> snapshots) {
    }

    /**
     * Where a source's next export starts: the snapshot its last export read and that export's cut
     * (0: none known; the shard then reads every row and filters it by its writer).
     */
    record Since(String snapshot, long cutMicros) {
        static final Since EVERYTHING = new Since("", 0);
    }

    private final TenantShards shards;
    private final MoverSettings settings;
    private final MoveFaults faults;

    CopyPass(TenantShards shards, MoverSettings settings, MoveFaults faults) {
        this.shards = shards;
        this.settings = settings;
        this.faults = faults;
    }

    /**
     * @param moverToken      the mover's fencing token, sent with every import
     * @param since           per source shard id, the snapshot (and cut) to copy from; a source without one is
     *                        copied whole
     * @param targetsByRegion the target cell's shards by region
     * @param deadlineNanos   when the whole pass must have ended ({@link TenantShards#NO_DEADLINE}: each
     *                        export has its own timeout)
     * @throws TenantShards.StepFailed when a source or target failed for good
     * @throws TenantShards.Superseded when a target refused an import: another mover owns the move
     */
    Result run(String tenant, String moveId, long moverToken, List<ShardInfo> sources,
            Map<String, List<ShardInfo>> targetsByRegion, Map<String, Since> since, TenantShards.Guard guard,
            Checkpoint checkpoint, long deadlineNanos, ExecutorService pool) throws InterruptedException {
        ImportTenantRequest imports = ImportTenantRequest.newBuilder().setTenantId(tenant).setMoveId(moveId)
                .setMoverToken(moverToken).build();
        List<Future<Result>> futures = new ArrayList<>();
        for (ShardInfo source : sources) {
            List<ShardInfo> targets = targetsByRegion.getOrDefault(source.getRegion(), List.of());
            futures.add(pool.submit(() -> copyOne(imports, source, targets, since.getOrDefault(
                    source.getShardId(), Since.EVERYTHING), guard, checkpoint, deadlineNanos)));
        }
        long rows = 0;
        MoveCounts copied = MoveCounts.getDefaultInstance();
        Map<String, Since> snapshots = new LinkedHashMap<>();
        RuntimeException failure = null;
        try {
            for (Future<Result> f : futures) {
                if (failure != null) {
                    break; // the others were cancelled; their threads stop at their next call
                }
                try {
                    Result r = f.get();
                    rows += r.rowsExported();
                    copied = add(copied, r.copied());
                    snapshots.putAll(r.snapshots());
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause() instanceof RuntimeException re ? re
                                : new IllegalStateException("copy pass of tenant " + tenant + ": " + e.getCause(),
                                        e.getCause());
                        futures.forEach(other -> other.cancel(true));
                    }
                }
            }
        } finally {
            futures.forEach(f -> f.cancel(true));
        }
        if (failure != null) {
            throw failure;
        }
        return new Result(rows, copied, snapshots);
    }

    /** @param imports the tenant, move and token of every import this source's rows make */
    private Result copyOne(ImportTenantRequest imports, ShardInfo source, List<ShardInfo> targets, Since since,
            TenantShards.Guard guard, Checkpoint checkpoint, long deadlineNanos) throws InterruptedException {
        String tenant = imports.getTenantId();
        Map<String, ShardInfo> targetById = new HashMap<>();
        targets.forEach(t -> targetById.put(t.getShardId(), t));
        Map<String, Batch> batches = new LinkedHashMap<>();
        MoveCounts[] copied = {MoveCounts.getDefaultInstance()};
        ExportTenantRequest req = ExportTenantRequest.newBuilder().setTenantId(tenant).setMoveId(imports.getMoveId())
                .setSinceSnapshot(since.snapshot()).setSinceCutMicros(since.snapshot().isEmpty() ? 0 : since.cutMicros())
                .setChunkRows(settings.chunkRows()).build();
        TenantShards.Exported exported = shards.export(source, req, guard, deadlineNanos, (TenantChunk chunk) -> {
            checkpoint.check();
            Map<String, List<TenantRows>> routed;
            try {
                routed = RowPlacement.route(tenant, chunk.getTablesList(), targets);
            } catch (IllegalArgumentException e) {
                throw new TenantShards.StepFailed("source " + source.getShardId() + " in region " + source.getRegion()
                        + ": the target cell has no shard in that region (" + e.getMessage() + ")");
            }
            for (Map.Entry<String, List<TenantRows>> e : routed.entrySet()) {
                Batch b = batches.computeIfAbsent(e.getKey(), id -> new Batch(targetById.get(id)));
                for (TenantRows t : e.getValue()) {
                    for (TenantRow row : t.getRowsList()) {
                        if (!b.fits(row)) {
                            copied[0] = add(copied[0], flush(imports, b, guard, deadlineNanos));
                        }
                        b.add(t.getTable(), row);
                    }
                }
            }
        });
        for (Batch b : batches.values()) {
            if (!b.isEmpty()) {
                copied[0] = add(copied[0], flush(imports, b, guard, deadlineNanos));
            }
        }
        return new Result(exported.rows(), copied[0], Map.of(source.getShardId(),
                new Since(exported.snapshot(), exported.cutMicros())));
    }

    private MoveCounts flush(ImportTenantRequest imports, Batch b, TenantShards.Guard guard, long deadlineNanos)
            throws InterruptedException {
        ImportTenantRequest req = imports.toBuilder().addAllTables(b.drain()).build();
        faults.beforeImport(imports.getMoveId(), b.target);
        ImportTenantResponse r = shards.importRows(b.target, req, guard, deadlineNanos);
        return r.getCounts();
    }

    /** The rows waiting for one target shard, in export order, within the import bounds. */
    private final class Batch {
        final ShardInfo target;
        private final List<TenantRows.Builder> tables = new ArrayList<>();
        private int rows;
        private long bytes;

        Batch(ShardInfo target) {
            this.target = target;
        }

        boolean fits(TenantRow row) {
            return rows == 0 || (rows + 1 <= settings.importRowsMax()
                    && bytes + row.getSerializedSize() + 16 <= settings.importBytesMax());
        }

        void add(String table, TenantRow row) {
            TenantRows.Builder last = tables.isEmpty() ? null : tables.get(tables.size() - 1);
            if (last == null || !last.getTable().equals(table)) {
                last = TenantRows.newBuilder().setTable(table);
                tables.add(last);
            }
            last.addRows(row);
            rows++;
            bytes += row.getSerializedSize() + 16;
        }

        boolean isEmpty() {
            return rows == 0;
        }

        List<TenantRows> drain() {
            List<TenantRows> out = tables.stream().map(TenantRows.Builder::build).toList();
            tables.clear();
            rows = 0;
            bytes = 0;
            return out;
        }
    }

    static MoveCounts add(MoveCounts a, MoveCounts b) {
        return MoveCounts.newBuilder().setItems(a.getItems() + b.getItems()).setBuckets(a.getBuckets() + b.getBuckets())
                .setHolds(a.getHolds() + b.getHolds()).setUsage(a.getUsage() + b.getUsage())
                .setTransfers(a.getTransfers() + b.getTransfers()).setRestocks(a.getRestocks() + b.getRestocks())
                .setRetired(a.getRetired() + b.getRetired()).setSeats(a.getSeats() + b.getSeats()).build();
    }
}
