package io.lastunit.shard.store;

/**
 * Whether the lanes may send writes to the database now. Closed while the shard's database could
 * not acknowledge a commit (no synchronous standby connected where one is required): a batch the
 * lane takes then is refused at once with UNAVAILABLE / STANDBY_MISSING, nothing written, instead
 * of waiting in a commit that ends at the socket timeout with its outcome unknown. Batches already
 * in their commit wait are not touched: nothing cancels a commit waiting for the standby.
 *
 * <p>Thread-safe: written by the watch that decides it, read by every lane once per batch.
 */
public final class WriteGate {
    private volatile String closedBecause;

    /** Writes may go to the database. */
    public void open() {
        closedBecause = null;
    }

    /** Writes are refused from the next batch on, the caller told {@code why}. */
    public void close(String why) {
        if (why == null || why.isBlank()) {
            throw new IllegalArgumentException("a closed write gate needs its reason");
        }
        closedBecause = why;
    }

    /** Why writes are refused now, or null while they may go. */
    public String closedBecause() {
        return closedBecause;
    }
}
