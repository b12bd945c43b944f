package io.lastunit.shard.escrow;

import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.Transactions;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The low-water mark (docs/escrow-buckets.md, "The low-water mark: collapse"): when an item's
 * published units fall under {@code collapse-below}, its buckets collapse into bucket 0, in a
 * transaction of their own run by bucket 0's lane. One per lane: {@link #requestIfLow} runs on
 * any lane's thread after its commit, {@link #collapse} on bucket 0's lane.
 *
 * <p>Hazard: bucket 0's lane stands still while the collapse waits for a row lock, so each wait is
 * bounded ({@link #COLLAPSE_LOCK_TIMEOUT_MILLIS}); a collapse that gave up changed nothing and is
 * tried again at once, up to {@link #COLLAPSE_ATTEMPTS} times, then queued again after a later batch.
 */
public final class Collapser {
    private static final Logger log = LoggerFactory.getLogger(Collapser.class);
    /**
     * How long a collapse waits for each bucket row lock. Other lanes hold a row only for the end
     * of a batch or for one borrow (a few milliseconds), and borrows lock in bucket order as the
     * collapse does, so this is generous; it bounds how long bucket 0's lane can stand still
     * behind a commit the disk stalls.
     */
    public static final long COLLAPSE_LOCK_TIMEOUT_MILLIS = 100;
    private static final String LOCK_NOT_AVAILABLE = "55P03";

    /**
     * How many times one request runs a collapse that gave up on a lock ({@link #changedNothing}):
     * the first try and two more, each queued straight back to bucket 0's lane, so an item whose
     * sale has ended (no later batch to queue it again) still collapses; at most this many lock
     * waits of {@link #COLLAPSE_LOCK_TIMEOUT_MILLIS} stand bucket 0's lane still per request.
     */
    public static final int COLLAPSE_ATTEMPTS = 3;

    /**
     * Queues the collapse of an item to bucket 0's lane; the future completes as
     * {@link #collapse} does, or fails at once when the lane refused it (queue full, shutting down).
     */
    @FunctionalInterface
    public interface Requests {
        CompletableFuture<Boolean> collapse(String tenant, String item);
    }

    /** A committed collapse: bucket 0's row after it and the keys of the holds in the closed buckets. */
    public record Collapsed(LaneStore.BucketRow bucket0, List<String> keysOutsideBucket0) {
    }

    private final int laneIndex;
    private final Transactions transactions;
    private final ItemStore items;
    private final ItemLedgers ledgers;
    private final int keyIndexMax;
    private final long collapseBelow;
    private final Requests requests;
    /** Collapses committed (written by the lane thread, read by metrics). */
    private final java.util.concurrent.atomic.AtomicLong collapses = new java.util.concurrent.atomic.AtomicLong();

    public Collapser(int laneIndex, Transactions transactions, ItemStore items, ItemLedgers ledgers, int keyIndexMax,
                     long collapseBelow, Requests requests) {
        this.laneIndex = laneIndex;
        this.transactions = transactions;
        this.items = items;
        this.ledgers = ledgers;
        this.keyIndexMax = keyIndexMax;
        this.collapseBelow = collapseBelow;
        this.requests = requests;
    }

    /** Below the low-water mark, an item with several open buckets collapses into bucket 0 (queued once). */
    public void requestIfLow(ItemLedger ledger) {
        if (ledger.open().length > 1 && ledger.availableSum() < collapseBelow && ledger.claimCollapse()) {
            request(ledger, 1);
        }
    }

    private void request(ItemLedger ledger, int attempt) {
        requests.collapse(ledger.tenantId, ledger.itemId).whenComplete((done, e) -> {
            if (e == null) {
                return;
            }
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (!(cause instanceof SQLException)) {
                ledger.collapseFailed(); // never ran (the lane refused it): a later batch queues it again
            } else if (changedNothing((SQLException) cause) && attempt < COLLAPSE_ATTEMPTS
                    && ledger.open().length > 1 && ledger.claimCollapse()) {
                request(ledger, attempt + 1);
            }
        });
    }

    /** True when a failed collapse changed nothing: it gave up a lock wait before touching the ledger. */
    public static boolean changedNothing(SQLException e) {
        return LOCK_NOT_AVAILABLE.equals(e.getSQLState());
    }

    /**
     * Collapses the item's buckets into bucket 0; null when the item has no buckets here. On
     * failure the collapse may be queued again; unless {@link #changedNothing}, bucket 0's cached
     * row and keys are to be reloaded (it may have failed after the ledger changed, or in the commit).
     */
    /** Collapses committed so far. */
    public long collapses() {
        return collapses.get();
    }

    public Collapsed collapse(String tenant, String item) throws SQLException {
        try {
            return collapseOnce(tenant, item);
        } catch (SQLException e) {
            ItemLedger ledger = ledgers.get(tenant, item);
            if (ledger != null) {
                ledger.collapseFailed(); // try again after a later batch
            }
            if (changedNothing(e)) {
                log.info("lane {}: collapse of {}/{}#0 gave up after waiting {} ms for a bucket row; tried again"
                        + " (up to {} times a request), then after a later batch", laneIndex, tenant, item,
                        COLLAPSE_LOCK_TIMEOUT_MILLIS, COLLAPSE_ATTEMPTS);
            } else {
                log.atWarn().addKeyValue("tenant", tenant).addKeyValue("item", item)
                        .log("lane {}: collapse into bucket 0 failed: {}", laneIndex, e.toString());
            }
            throw e;
        }
    }

    private Collapsed collapseOnce(String tenant, String item) throws SQLException {
        Collapsed done = transactions.inTransaction(c -> {
            ItemState state = items.itemState(c, tenant, item);
            if (state != null && state.moving()) {
                c.rollback(); // fenced by a tenant move: its buckets stay as the move copies them
                return null;
            }
            ItemLedger ledger = ledgers.load(c, tenant, item);
            LaneStore.BucketRow row = ledger == null ? null
                    : items.collapseBuckets(c, tenant, item, COLLAPSE_LOCK_TIMEOUT_MILLIS);
            if (row == null) {
                c.rollback();
                return null;
            }
            List<String> keys = items.keysOutsideBucket0(c, tenant, item, keyIndexMax);
            // Before the commit: new Reserves go to bucket 0 (which can borrow from any bucket, so
            // this is right even if the commit fails), and bucket 0 shows its new units early.
            ledger.closeAllBut0();
            ledger.raise(0, row.available());
            return new Collapsed(row, keys);
        });
        if (done == null) {
            return null;
        }
        ItemLedger ledger = ledgers.get(tenant, item);
        for (int b = 1; b < ledger.bucketCount; b++) {
            ledger.publish(b, 0);
        }
        ledger.publish(0, done.bucket0().available());
        collapses.incrementAndGet();
        log.atInfo().addKeyValue("tenant", tenant).addKeyValue("item", item)
                .log("lane {}: collapsed into bucket 0 ({} available)", laneIndex, done.bucket0().available());
        return done;
    }
}
