package io.lastunit.bench.load;

import java.util.List;

/**
 * The invariant check at the end of a run, as reported.
 *
 * @param status   OK, DRIFT (some shard found a drift), UNCHECKED (some shard or ZooKeeper could not be
 *                 asked, no drift found) or SKIPPED (a --target without --zookeeper)
 * @param detail   the drifts or the unreachable shards in one line; "" for OK and SKIPPED
 * @param problems one line per drift or unreachable shard
 */
record Invariant(Status status, String detail, int shards, long items, long holds, int drifts,
        List<String> problems) {

    enum Status {
        OK, DRIFT, UNCHECKED, SKIPPED
    }

    static Invariant skipped() {
        return new Invariant(Status.SKIPPED, "", 0, 0, 0, 0, List.of());
    }

    static Invariant unchecked(String why) {
        return new Invariant(Status.UNCHECKED, why, 0, 0, 0, 0, List.of(why));
    }

    /** The script line: {@code invariant=OK}, {@code invariant=DRIFT <drifts>}, ... */
    String line() {
        return "invariant=" + status + (detail.isEmpty() ? "" : " " + detail);
    }
}
