package io.lastunit.shard.health;

import io.lastunit.shard.lane.LaneEngine;

/**
 * The lanes' readiness condition: holds unless some lane has work in hand (queued, or the batch it is
 * in) and has not taken a batch since the last look. Looked at by one thread (the readiness watch), which measures how long it
 * keeps failing: a lane in one long commit fails it until the commit ends, a stuck lane for good.
 */
public final class LaneProgress {
    private final LaneEngine engine;
    private final long[] seen;

    public LaneProgress(LaneEngine engine) {
        this.engine = engine;
        this.seen = new long[engine.laneCount()];
        for (int i = 0; i < seen.length; i++) {
            seen[i] = engine.batchesOf(i);
        }
    }

    /** Whether every lane with queued work took a batch since the last call. */
    public boolean moving() {
        boolean moving = true;
        for (int i = 0; i < seen.length; i++) {
            long now = engine.batchesOf(i);
            if (now == seen[i] && (engine.queueDepth(i) > 0 || engine.busy(i))) {
                moving = false;
            }
            seen[i] = now;
        }
        return moving;
    }
}
