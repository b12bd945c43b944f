package io.lastunit.shard.escrow;

import java.util.HashMap;
import java.util.Map;

/**
 * The units one batch of a lane holds against other lanes' borrows, in the buckets of items
 * with several buckets ({@link ItemLedger#promise}), across all the attempts at the batch. Each
 * accepted Reserve raises its bucket's registration at once ({@link #want}); when an attempt has
 * decided its Reserves, registrations above what it accepted drop to that
 * ({@link #attemptDecided}); when the batch ends, committed or not, all are released
 * ({@link #releaseAll}). So a redo keeps holding the units its Reserves are about to take again,
 * with no moment in between where a borrow could take them, and never holds them twice.
 * Lane-confined.
 */
public final class Promises {
    /** One bucket of one ledger; a ledger is one per item and compared by identity. */
    private record Slot(ItemLedger ledger, int bucketNo) {
    }

    private static final class Entry {
        final ItemLedger ledger;
        final int bucketNo;
        /** Units added to the ledger for this bucket and not yet released. */
        long registered;
        /** Units the current attempt accepted so far. */
        long wanted;

        Entry(ItemLedger ledger, int bucketNo) {
            this.ledger = ledger;
            this.bucketNo = bucketNo;
        }
    }

    private final Map<Slot, Entry> entries = new HashMap<>();

    /** The current attempt accepted a Reserve of {@code units} in bucket {@code bucketNo} of {@code ledger}. */
    public void want(ItemLedger ledger, int bucketNo, long units) {
        Entry e = entries.computeIfAbsent(new Slot(ledger, bucketNo), x -> new Entry(ledger, bucketNo));
        e.wanted += units;
        if (e.wanted > e.registered) {
            e.ledger.promise(e.bucketNo, e.wanted - e.registered);
            e.registered = e.wanted;
        }
    }

    /** A new attempt begins: it has accepted nothing yet (what the last one registered stays). */
    public void beginAttempt() {
        for (Entry e : entries.values()) {
            e.wanted = 0;
        }
    }

    /** The attempt decided every Reserve: hold no more than it accepted. */
    public void attemptDecided() {
        for (Entry e : entries.values()) {
            if (e.registered > e.wanted) {
                e.ledger.promise(e.bucketNo, e.wanted - e.registered);
                e.registered = e.wanted;
            }
        }
    }

    /** The batch ended (after its commit, if it committed): release everything. */
    public void releaseAll() {
        for (Entry e : entries.values()) {
            if (e.registered != 0) {
                e.ledger.promise(e.bucketNo, -e.registered);
                e.registered = 0;
            }
        }
        entries.clear();
    }

    /** Units held for bucket {@code bucketNo} of {@code ledger} (tests). */
    long registered(ItemLedger ledger, int bucketNo) {
        Entry e = entries.get(new Slot(ledger, bucketNo));
        return e == null ? 0 : e.registered;
    }
}
