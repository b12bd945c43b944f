package io.lastunit.shard.escrow;

import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.Transactions;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A dry bucket borrowing from its siblings (docs/escrow-buckets.md, "Borrowing"): each borrow a
 * short transaction of its own on a connection of its own ({@link LaneStore#borrowInto}),
 * committed before the borrowing batch goes on. One per lane; its methods run on the lane's
 * thread, its counters are read from any thread.
 *
 * <p>Hazard: a borrow commits whatever becomes of the batch that asked for it. The borrowing
 * batch's cache must take both rows in ({@link Borrowing#moved}), and a borrow that failed leaves
 * both buckets' counters unknown ({@link Borrowing#outcomeUnknown}).
 */
public final class Borrower {
    /** What a borrow for one Reserve came to. */
    public enum Outcome {
        /** The bucket now has the units the Reserve lacked. */
        BORROWED,
        /** No sibling had them: the Reserve is decided on what the bucket has. */
        NOTHING,
        /** A sibling has due holds; its lane was asked to sweep and the Reserve waits one batch. */
        WAIT_FOR_SWEEP,
        /** The bucket closed under the batch (a collapse committed): the Reserve goes to bucket 0 next batch. */
        CLOSED
    }

    /** The borrowing batch's side of its borrows. */
    public interface Borrowing {
        /** {@link #leftAfterBatch} of a sibling in which the batch decided no Reserve. */
        long UNTOUCHED = Long.MAX_VALUE;

        /** Units sibling {@code bucketNo} has left after this batch's own Reserves, or {@link #UNTOUCHED}. */
        long leftAfterBatch(int bucketNo);

        /** A borrow committed: the lane's cache takes both rows in. */
        void moved(LaneStore.Borrowed moved);

        /** A borrow failed, outcome unknown: the bucket's counters are reloaded before their next use. */
        void outcomeUnknown(int bucketNo);
    }

    /** Asks the lane of a bucket to sweep its due holds. */
    @FunctionalInterface
    public interface SweepRequests {
        void sweep(String tenant, String item, int bucketNo);
    }

    /**
     * How long a borrow waits for a row lock (PostgreSQL's {@code lock_timeout}, set in the
     * borrow's own transaction). A borrow locks two rows in bucket order and commits at once, and
     * the rows it waits for are held by another lane's batch only from its final update to its
     * commit, or by another borrow, collapse or transfer, all in bucket order: no cycle, and a wait
     * of a commit or two. The bound is for a commit the disk stalls; a borrow that waits longer
     * fails with SQL state 55P03, and its batch is decided again.
     */
    public static final long BORROW_LOCK_TIMEOUT_MILLIS = 100;

    private final Transactions transactions;
    private final LaneStore store;
    private final LongSupplier dbNowMicros;
    private final SweepRequests sweeps;
    /** Borrows committed for this lane's buckets, and the units they moved in. */
    private final AtomicLong borrows = new AtomicLong();
    private final AtomicLong borrowedUnits = new AtomicLong();

    public Borrower(Transactions transactions, LaneStore store, LongSupplier dbNowMicros, SweepRequests sweeps) {
        this.transactions = transactions;
        this.store = store;
        this.dbNowMicros = dbNowMicros;
        this.sweeps = sweeps;
    }

    public long borrows() {
        return borrows.get();
    }

    public long borrowedUnits() {
        return borrowedUnits.get();
    }

    /**
     * Borrows {@code need} units into bucket {@code into} of {@code ledger}'s item from its richest
     * siblings: from each what is still missing, or half of what it can spare if that is more
     * ({@link BorrowSizing}); on to the next richest while one has too little. When a sibling showed
     * units it no longer has, the rows themselves are read before giving up. With no sibling showing
     * stock but one holding expired holds, that bucket's lane is asked to sweep.
     */
    public Outcome borrow(ItemLedger ledger, int into, long need, Borrowing batch) throws SQLException {
        Tally t = new Tally();
        fromPublished(ledger, into, need, batch, t);
        if (!t.closed && t.got < need && t.staleSeen) {
            fromRows(ledger, into, need, batch, t);
        }
        if (t.closed) {
            return Outcome.CLOSED;
        }
        if (t.got >= need) {
            return Outcome.BORROWED;
        }
        int due = ledger.siblingDue(into, dbNowMicros.getAsLong());
        if (due >= 0) {
            sweeps.sweep(ledger.tenantId, ledger.itemId, due);
            return Outcome.WAIT_FOR_SWEEP;
        }
        return Outcome.NOTHING;
    }

    /** What the borrows for one Reserve have come to so far. */
    private static final class Tally {
        long got;
        /** A sibling showed units it no longer had: the published view is behind. */
        boolean staleSeen;
        /** The borrowing bucket turned out closed. */
        boolean closed;
    }

    /** Tries the siblings in order of their published levels. */
    private void fromPublished(ItemLedger ledger, int into, long need, Borrowing batch, Tally t) throws SQLException {
        Set<Integer> tried = new HashSet<>();
        for (int attempt = 0; attempt < ledger.bucketCount && t.got < need; attempt++) {
            int s = richestUntried(ledger, into, tried);
            if (s < 0) {
                return;
            }
            tried.add(s);
            long left = batch.leftAfterBatch(s);
            boolean promised = left != Borrowing.UNTOUCHED; // this batch decided Reserves of the sibling too
            long shown = promised ? Math.min(ledger.available(s), left) : ledger.available(s);
            if (shown <= 0) {
                continue;
            }
            // Never more than a sibling of this lane has left after this batch's own Reserves.
            LaneStore.Borrowed lent = borrowFrom(ledger, into, s, need - t.got, promised ? shown : Long.MAX_VALUE,
                    batch);
            if (lent == LaneStore.Borrowed.CLOSED) {
                t.closed = true;
                return;
            }
            if (lent == null) {
                t.staleSeen = true;
                continue;
            }
            t.got += lent.units();
        }
    }

    /**
     * The published levels were behind (a collapse or another lane's borrow just moved units):
     * borrows what is missing from the siblings the rows show units in.
     */
    private void fromRows(ItemLedger ledger, int into, long need, Borrowing batch, Tally t) throws SQLException {
        for (long[] row : availableByBucket(ledger)) {
            int s = (int) row[0];
            if (t.got >= need || s == into || row[1] <= 0) {
                continue;
            }
            long cap = need - t.got; // only what is missing here: the published levels are behind
            long left = batch.leftAfterBatch(s);
            if (left != Borrowing.UNTOUCHED) {
                cap = Math.min(cap, left);
                if (cap <= 0) {
                    continue;
                }
            }
            LaneStore.Borrowed lent = borrowFrom(ledger, into, s, need - t.got, cap, batch);
            if (lent == LaneStore.Borrowed.CLOSED) {
                t.closed = true;
                return;
            }
            if (lent != null) {
                t.got += lent.units();
            }
        }
    }

    /**
     * One borrow from sibling {@code from}, as a transaction of its own, committed here. The
     * lender's published level and the item's lent total for it are set at once; the borrowing
     * batch takes both rows into its cache and publishes the borrower's level when it ends. What the
     * lender's lane has promised stays in the row ({@link Promises}). If the borrow fails, both
     * buckets are reloaded before their next use, since a failed commit leaves its outcome unknown.
     *
     * <p>Committing the borrow before the batch is what keeps borrowers from blocking each other:
     * inside the batch's transaction the sibling's row stayed locked until the batch committed,
     * and two lanes borrowing from each other's buckets could wait on each other in a cycle.
     */
    private LaneStore.Borrowed borrowFrom(ItemLedger ledger, int into, int from, long need, long cap, Borrowing batch)
            throws SQLException {
        BorrowSizing sizing = new BorrowSizing(need, cap);
        LaneStore.Borrowed moved;
        try {
            moved = transactions.inTransaction(c -> {
                LaneStore.boundLockWaits(c, BORROW_LOCK_TIMEOUT_MILLIS);
                LaneStore.Borrowed m = store.borrowInto(c, ledger.tenantId, ledger.itemId, into, from,
                        available -> sizing.units(available, ledger.promised(from)));
                if (m == null || m == LaneStore.Borrowed.CLOSED) {
                    c.rollback(); // nothing moved
                }
                return m;
            });
        } catch (SQLException | RuntimeException e) {
            batch.outcomeUnknown(into);
            batch.outcomeUnknown(from);
            throw e;
        }
        if (moved == null || moved == LaneStore.Borrowed.CLOSED) {
            return moved;
        }
        borrows.incrementAndGet();
        borrowedUnits.addAndGet(moved.units());
        ledger.lentUpTo(from, moved.lender().lent()); // the lender's lane now counts these units gone
        ledger.publish(from, moved.lender().available());
        batch.moved(moved);
        return moved;
    }

    /** Every bucket of the item with its committed available units, read on a connection of its own. */
    private List<long[]> availableByBucket(ItemLedger ledger) throws SQLException {
        return transactions.inTransaction(c -> store.availableByBucket(c, ledger.tenantId, ledger.itemId));
    }

    private static int richestUntried(ItemLedger ledger, int except, Set<Integer> tried) {
        int best = -1;
        long most = 0;
        for (int x = 0; x < ledger.bucketCount; x++) {
            long a = ledger.available(x);
            if (x != except && !tried.contains(x) && a > most) {
                most = a;
                best = x;
            }
        }
        return best;
    }
}
