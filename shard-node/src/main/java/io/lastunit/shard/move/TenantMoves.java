package io.lastunit.shard.move;

import io.lastunit.api.shard.v1.SummaryPart;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.shard.v1.TenantSummary;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.store.ReadPool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shard's side of a tenant move (docs/moves.md, "On the shard"): what the mover asks of a
 * shard, each call's statements on its own {@link ReadPool} (the node's move thread; a transaction of its own, never in a
 * lane), then, after a commit that changed the tenant's items, every lane's cached state of them
 * dropped ({@link LaneEngine#forgetTenant}) before the call is answered. So when FreezeTenant
 * answers, every lane has written what it took before the freeze and reads FROZEN from then on;
 * when ImportTenant or ActivateTenant answers, the lanes load the rows as written.
 *
 * <p>Requests come validated. Every call that writes is admitted by the mover's token, in its own
 * transaction ({@link MoveTokens}): a call of a mover that a newer one superseded writes nothing and
 * fails MOVE_SUPERSEDED. Every call is idempotent; one that fails after its commit (a lane's
 * queue was full) is repeated by the mover, and the repeat drops the caches again. Bounded: at most
 * {@link #EXPORTS_MAX} exports at once, each holding the move thread and its connection while its
 * receiver takes the chunks. Every call notes its tenant in {@link MoveActivity} before it runs, so
 * retention leaves the tenant's rows alone while a move works on them. Thread-safe; never blocks
 * the caller.
 */
public final class TenantMoves {
    private static final Logger log = LoggerFactory.getLogger(TenantMoves.class);
    /** Exports running at once: each holds the move thread for its length. */
    public static final int EXPORTS_MAX = 1;

    private final ReadPool reads;
    private final LaneEngine engine;
    private final String shardId;
    private final Duration retryAfter;
    private final TenantExport export;
    private final TenantImport imports = new TenantImport();
    private final TenantStates states = new TenantStates();
    private final TenantSummaries summaries = new TenantSummaries();
    private final Semaphore exports = new Semaphore(EXPORTS_MAX);
    private final MoveActivity activity;

    public TenantMoves(ReadPool reads, LaneEngine engine, String shardId, Duration retryAfter, MoveActivity activity) {
        this.activity = activity;
        this.reads = reads;
        this.engine = engine;
        this.shardId = shardId;
        this.retryAfter = retryAfter;
        this.export = new TenantExport(shardId);
    }

    /**
     * Streams the tenant's rows (all, or those written since {@code sinceSnapshot}) into
     * {@code sink} from one snapshot; completes with what was sent. QUEUE_FULL when
     * {@link #EXPORTS_MAX} exports run already.
     */
    public CompletableFuture<TenantExport.Exported> export(String tenant, String moveId, String sinceSnapshot,
                                                           long sinceCutMicros, int chunkRows,
                                                           TenantExport.Sink sink) {
        activity.touch(tenant);
        if (!exports.tryAcquire()) {
            return CompletableFuture.failedFuture(Failure.retryable(Reason.QUEUE_FULL, "shard " + shardId
                    + " runs " + EXPORTS_MAX + " export(s) already; export tenant " + tenant + " after the hint",
                    retryAfter));
        }
        long[] startedNanos = {0};
        CompletableFuture<TenantExport.Exported> f = reads.submit("ExportTenant read failed; export again", c -> {
            startedNanos[0] = System.nanoTime();
            return export.export(c, tenant, sinceSnapshot, sinceCutMicros, chunkRows, sink);
        });
        return f.whenComplete((done, err) -> {
            exports.release();
            if (done != null) {
                log.atInfo().addKeyValue("tenant", tenant)
                        .log("move {}: exported tenant {} ({}) at snapshot {} in {} ms: {}", moveId, tenant,
                        sinceSnapshot.isEmpty() ? "every row" : "since " + sinceSnapshot
                                + (sinceCutMicros > 0 ? ", by index" : ""), done.snapshot(),
                        (System.nanoTime() - startedNanos[0]) / 1_000_000,
                        done.complete() ? counts(done.counts()) : "stopped, the receiver went away");
            }
        });
    }

    /**
     * Upserts the rows in one transaction (items IMPORTING), then drops the lanes' cached state of
     * the tenant. MOVE_SUPERSEDED when a newer mover of the move has written here.
     */
    public CompletableFuture<MoveCounts> importRows(MoveCall call, List<TenantRows> tables) {
        activity.touch(call.tenant());
        return reads.submit("ImportTenant failed; nothing of it may have been written, import again",
                        c -> imports.importRows(c, call, shardId, tables))
                .thenCompose(done -> {
                    engine.importing(call.tenant(), true);
                    return engine.forgetTenant(call.tenant(), done.items()).thenApply(x -> {
                        log.debug("move {}: imported rows of tenant {} (token {}): {}", call.moveId(), call.tenant(),
                                call.token(), counts(done.counts()));
                        return done.counts();
                    });
                });
    }

    /**
     * Changes the tenant's items' state and, once committed, drops the lanes' cached state of them,
     * each lane after it wrote what it took before. The changed items' ledgers are dropped too,
     * except at a freeze: the lanes may still be selling those items until each reaches the drop.
     * MOVE_SUPERSEDED (nothing changed, no cache dropped) when a newer mover of the move has written here.
     */
    public CompletableFuture<TenantStates.Changed> change(MoveCall call, TenantStates.Change change) {
        activity.touch(call.tenant());
        long asked = System.nanoTime();
        long[] committed = {0};
        return reads.submit(change + " of the tenant's items failed; repeat it", c -> {
                    TenantStates.Changed changed = states.change(c, call, change, shardId);
                    committed[0] = System.nanoTime();
                    return changed;
                })
                .thenCompose(done -> {
                    if (change == TenantStates.Change.ACTIVATE) {
                        engine.importing(call.tenant(), false);
                    }
                    List<String> ledgersOf = change == TenantStates.Change.FREEZE ? List.of() : done.items();
                    return engine.forgetTenant(call.tenant(), ledgersOf).thenApply(x -> {
                        log.atInfo().addKeyValue("tenant", call.tenant())
                                .log("move {}: {} tenant {} (token {}): {} items {} -> {}, committed in {} ms, the"
                                        + " lanes caught up {} ms later", call.moveId(), change, call.tenant(),
                                call.token(), done.count(), change.from, change.to,
                                (committed[0] - asked) / 1_000_000, (System.nanoTime() - committed[0]) / 1_000_000);
                        return done;
                    });
                });
    }

    /**
     * Deletes the rows of the tenant's items in {@code state}, then drops the lanes' cached state of
     * them. MOVE_SUPERSEDED (nothing deleted) when a newer mover of the move has written here.
     */
    public CompletableFuture<TenantStates.Changed> drop(MoveCall call, ItemState state) {
        activity.touch(call.tenant());
        return reads.submit("DropTenant failed; repeat it", c -> states.drop(c, call, state, shardId))
                .thenCompose(done -> {
                    if (state == ItemState.IMPORTING) {
                        engine.importing(call.tenant(), false);
                    }
                    return engine.forgetTenant(call.tenant(), done.items()).thenApply(x -> {
                        log.atInfo().addKeyValue("tenant", call.tenant())
                                .log("move {}: dropped tenant {}'s {} items (token {}): {} rows", call.moveId(),
                                call.tenant(), state, call.token(), done.count());
                        return done;
                    });
                });
    }

    /** The tenant's items here, as one snapshot sees them. */
    public CompletableFuture<TenantSummary> summarize(String tenant, String region, SummaryPart part, long cutMicros) {
        activity.touch(tenant);
        return reads.submit("SummarizeTenant read failed", c -> {
            long t0 = System.nanoTime();
            TenantSummary s = summaries.summarize(c, shardId, region, tenant, part, cutMicros);
            log.atInfo().addKeyValue("tenant", tenant).log("summarized tenant {} ({}) in {} ms: {} items", tenant,
                    part, (System.nanoTime() - t0) / 1_000_000, s.getItemsCount());
            return s;
        });
    }

    private static String counts(MoveCounts m) {
        return "items=" + m.getItems() + ", buckets=" + m.getBuckets() + ", holds=" + m.getHolds() + ", usage="
                + m.getUsage() + ", transfers=" + m.getTransfers() + ", restocks=" + m.getRestocks() + ", retired="
                + m.getRetired() + ", seats=" + m.getSeats();
    }
}
