package io.lastunit.shard.lane;

import io.lastunit.common.keys.Fingerprints;
import io.lastunit.common.keys.LongSet;
import io.lastunit.shard.escrow.ItemLedger;
import java.util.function.ToLongFunction;

/**
 * A lane's cached copy of one bucket row, plus what the lane knows about the bucket's holds:
 * the idempotency keys placed in it (so a retry is recognised and SOLD_OUT is decided with
 * no database round trip) and a lower bound of the earliest expiry among its HELD holds (so
 * the lane sweeps before it answers SOLD_OUT).
 *
 * <p>Confined to its lane's thread; not thread-safe. The database stays the arbiter: the
 * counters are a cache that the conditional bucket update checks on every batch. The key set
 * is bounded by {@code keyIndexMax}; past it {@link #keysComplete} turns false and a negative
 * lookup must be confirmed against the database.
 *
 * <p>The key set holds 64-bit {@link Fingerprints}, not strings: eight to sixteen bytes per key
 * in one array instead of about 110 bytes in three objects, so a million keys cost 16 MB and
 * give the garbage collector nothing to copy. "Absent" is exact; "known" is a hint that the
 * lane confirms by reading the hold row, and a key the table does not have is then decided
 * as new (in the same batch: the decider sees the key loaded and absent).
 */
final class BucketState {
    /** How keys are fingerprinted. Tests replace it to force collisions; nothing else may. */
    static volatile ToLongFunction<String> fingerprint = Fingerprints::of;

    final BucketKey key;
    ItemConfig item;
    long allotment;
    long available;
    long held;
    long sold;
    /** Lower bound of expires_at (epoch micros, database clock) of the bucket's HELD holds. */
    long earliestDueMicros = Long.MAX_VALUE;
    /**
     * The row's lent total (schema V6) the counters came from; -1 when the statement that returned
     * them did not read it (then {@link #unseenLent} counts nothing, the old behaviour: a stale
     * value may be too high, and the conditional update refuses it).
     */
    private long lentAtRow = -1;
    /** A redo found the counters stale: reload them (not the keys) before the next use. */
    boolean stale;
    private final LongSet keys = new LongSet();
    private final int keyIndexMax;
    private boolean keysComplete = true;

    BucketState(BucketKey key, ItemConfig item, int keyIndexMax) {
        this.key = key;
        this.item = item;
        this.keyIndexMax = keyIndexMax;
    }

    /** The counters of a row the database returned, with its lent total (-1: not read). */
    void setCounters(long allotment, long available, long held, long sold, long lent) {
        this.allotment = allotment;
        this.available = available;
        this.held = held;
        this.sold = sold;
        this.lentAtRow = lent;
        assertBalanced();
    }

    /**
     * Units that other lanes' committed borrows took out of this bucket after the row the
     * counters came from: the ledger's lent total (raised by each borrower after its commit)
     * beyond the row's. Never more than what left: a borrow counts here only once committed and
     * once returned by its own statement, and a row read after it already carries it. Totals are
     * the row's own, not counts since some moment, so a ledger rebuilt after the row (its totals
     * back at 0) counts nothing until a borrow raises it past the row's. Zero when the row's total
     * is unknown or there is no ledger.
     */
    long unseenLent(ItemLedger ledger) {
        if (lentAtRow < 0 || ledger == null) {
            return 0;
        }
        return Math.max(0, ledger.lent(key.bucketNo()) - lentAtRow);
    }

    /** Invariant of DESIGN §1, checked whenever the counters change (both sides of a commit). */
    void assertBalanced() {
        if (available < 0 || held < 0 || sold < 0 || available + held + sold != allotment) {
            throw new IllegalStateException("bucket " + key + " out of balance: allotment=" + allotment
                    + ", available=" + available + ", held=" + held + ", sold=" + sold);
        }
    }

    void addKey(String idempotencyKey) {
        if (keys.size() >= keyIndexMax) {
            keysComplete = false;
            return;
        }
        keys.add(fingerprint.applyAsLong(idempotencyKey));
    }

    boolean knowsKey(String idempotencyKey) {
        return keys.contains(fingerprint.applyAsLong(idempotencyKey));
    }

    /** True when every idempotency key placed in this bucket is in the key set. */
    boolean keysComplete() {
        return keysComplete;
    }

    void markKeysIncomplete() {
        keysComplete = false;
    }

    int keyCount() {
        return keys.size();
    }
}
