package io.lastunit.shard.decide;

/**
 * The counter changes one batch makes to one bucket. Each change keeps
 * {@code available + held + sold} as it was: a Reserve moves units from available to held, a
 * Confirm from held to sold, a Release or an expiry from held back to available.
 */
public final class BucketDelta {
    long available;
    long held;
    long sold;
    /** Units taken by Reserves of this batch. */
    long taken;
    /** Units given back by Releases and expiries of this batch. */
    long credited;

    public long available() {
        return available;
    }

    public long held() {
        return held;
    }

    public long sold() {
        return sold;
    }

    public long taken() {
        return taken;
    }

    public long credited() {
        return credited;
    }

    /** True when the batch changes the bucket's counters. */
    public boolean changes() {
        return available != 0 || held != 0 || sold != 0;
    }

    void reserve(long units) {
        available -= units;
        held += units;
        taken += units;
    }

    void confirm(long units) {
        held -= units;
        sold += units;
    }

    void giveBack(long units) {
        available += units;
        held -= units;
        credited += units;
    }
}
