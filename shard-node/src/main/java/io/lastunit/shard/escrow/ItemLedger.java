package io.lastunit.shard.escrow;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The shared per-item ledger of one item's buckets on this shard, which every lane and the
 * engine read: which buckets are open (where new Reserves go), each bucket's committed available
 * units and earliest HELD expiry as published by the lane that last committed a change to it,
 * the units lent out of each bucket and promised by each bucket's lane, whether a collapse is
 * done or queued, and whether the item collapsed to its home region.
 *
 * <p>Thread-safe: written by lanes after their commits, read by the engine (routing) and by
 * other lanes (a dry bucket looking for a sibling to borrow from). Published values are hints:
 * the database stays the arbiter, so a stale value costs a redo or a borrow that finds less
 * than hoped, never an oversell. Increases are raised before the commit that makes them and
 * exact values are published after it, so units are never hidden from another lane: a stale
 * value is only ever too high, and a borrow that finds less than a value promised reads the rows.
 */
public final class ItemLedger {
    public final String tenantId;
    public final String itemId;
    public final int bucketCount;
    public final String homeRegion;
    /** Regions the item is sold in (one for a single-region item). */
    public final List<String> regions;
    private volatile int[] open;
    private final AtomicLongArray available;
    private final AtomicLongArray dueMicros;
    /**
     * Each bucket's total of units lent to siblings (the row's {@code lent}, schema V6) as the
     * borrows that committed have returned it: only ever raised, after a commit. A lane whose
     * cached row carries a smaller total knows that much has left the bucket since its row.
     */
    private final AtomicLongArray lent;
    /**
     * Units each bucket's lane has promised to Reserves of a batch it has not finished (decided,
     * not yet committed or given up): a borrow leaves them in the bucket, so it does not take what
     * the lane's final update is about to take. Only kept for items of several buckets.
     */
    private final AtomicLongArray promised;
    /** Collapsed into one bucket, or a collapse is queued: request it once. */
    private final AtomicBoolean collapsing = new AtomicBoolean();
    /** The item shipped its stock home (DESIGN §6): new Reserves here are forwarded. */
    private volatile boolean regionCollapsed;
    /** Reserves decided for the item (every outcome) and SOLD_OUT answers: demand for the balancer. */
    private final LongAdder reserves = new LongAdder();
    private final LongAdder soldOuts = new LongAdder();

    public ItemLedger(String tenantId, String itemId, int bucketCount, String homeRegion, List<String> regions,
              int[] open, boolean regionCollapsed) {
        this.tenantId = tenantId;
        this.itemId = itemId;
        this.bucketCount = bucketCount;
        this.homeRegion = homeRegion;
        this.regions = List.copyOf(regions);
        this.open = open.clone();
        this.available = new AtomicLongArray(bucketCount);
        this.dueMicros = new AtomicLongArray(bucketCount);
        this.lent = new AtomicLongArray(bucketCount);
        this.promised = new AtomicLongArray(bucketCount);
        for (int b = 0; b < bucketCount; b++) {
            dueMicros.set(b, Long.MAX_VALUE);
        }
        this.regionCollapsed = regionCollapsed;
        if (open.length <= 1) {
            collapsing.set(true);
        }
    }

    /** The bucket a new Reserve with this idempotency key goes to: stable while the open set is. */
    public int bucketFor(String idempotencyKey) {
        return io.lastunit.shard.decide.BucketChoice.bucketFor(open, idempotencyKey);
    }

    public int[] open() {
        return open;
    }

    /** The collapse is about to commit: new Reserves go to bucket 0 from now on. */
    public void closeAllBut0() {
        open = new int[] {0};
        collapsing.set(true);
    }

    /** True for the one caller that gets to queue the item's collapse. */
    public boolean claimCollapse() {
        return collapsing.compareAndSet(false, true);
    }

    /** The queued collapse did not commit: a later batch may queue it again. */
    public void collapseFailed() {
        collapsing.set(false);
    }

    public boolean regionCollapsed() {
        return regionCollapsed;
    }

    /** The item shipped its stock home: new Reserves here are forwarded from now on. */
    public void markRegionCollapsed() {
        regionCollapsed = true;
    }

    /** Adds a batch's Reserves decided for the item and SOLD_OUTs answered, after its commit. */
    public void countDemand(long decided, long soldOut) {
        reserves.add(decided);
        soldOuts.add(soldOut);
    }

    /** Demand since this node learnt the item: {reserves, soldOuts}. */
    public long[] demand() {
        return new long[] {reserves.sum(), soldOuts.sum()};
    }

    public boolean multiRegion() {
        return regions.size() > 1;
    }

    public boolean isHome(String region) {
        return homeRegion.equals(region);
    }

    public void publish(int bucketNo, long availableUnits) {
        if (bucketNo >= 0 && bucketNo < bucketCount) {
            available.set(bucketNo, availableUnits);
        }
    }

    /**
     * Raises a bucket's published units to at least {@code availableUnits}, before the commit
     * that adds them: other lanes may then see units a moment early (a borrow that finds less
     * and falls back to reading the rows), never a moment late (a SOLD_OUT while they exist).
     */
    public void raise(int bucketNo, long availableUnits) {
        if (bucketNo >= 0 && bucketNo < bucketCount) {
            available.accumulateAndGet(bucketNo, availableUnits, Math::max);
        }
    }

    /** After a borrow from {@code bucketNo} committed: the lender row's lent total it returned. */
    public void lentUpTo(int bucketNo, long lentTotal) {
        if (bucketNo >= 0 && bucketNo < bucketCount) {
            lent.accumulateAndGet(bucketNo, lentTotal, Math::max);
        }
    }

    /** The highest lent total of the bucket that a committed borrow has returned (0 if none here). */
    public long lent(int bucketNo) {
        return bucketNo >= 0 && bucketNo < bucketCount ? lent.get(bucketNo) : 0;
    }

    /** The bucket's lane promised {@code units} more (negative: the batch ended). */
    public void promise(int bucketNo, long units) {
        if (bucketNo >= 0 && bucketNo < bucketCount) {
            promised.addAndGet(bucketNo, units);
        }
    }

    /** Units of the bucket promised to Reserves of an unfinished batch of its lane. */
    public long promised(int bucketNo) {
        return bucketNo >= 0 && bucketNo < bucketCount ? Math.max(0, promised.get(bucketNo)) : 0;
    }

    public void publishDue(int bucketNo, long micros) {
        if (bucketNo >= 0 && bucketNo < bucketCount) {
            dueMicros.set(bucketNo, micros);
        }
    }

    public long available(int bucketNo) {
        return available.get(bucketNo);
    }

    /** Committed available units over every bucket, as last published. */
    public long availableSum() {
        long s = 0;
        for (int b = 0; b < bucketCount; b++) {
            s += available.get(b);
        }
        return s;
    }

    /** A sibling with holds due for expiry at {@code nowMicros}, or -1. */
    public int siblingDue(int except, long nowMicros) {
        for (int b = 0; b < bucketCount; b++) {
            if (b != except && dueMicros.get(b) <= nowMicros) {
                return b;
            }
        }
        return -1;
    }
}
