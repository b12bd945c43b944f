package io.lastunit.shard.lane;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;

/**
 * Operations a lane puts into its next batch, because they must be judged against another one's
 * committed outcome: a second use of a key with other parameters, a Reserve that waits for a
 * sibling's sweep, a call on a hold that another writer holds. Bounded per operation: one carried
 * more than {@code redoMax + 1} times fails with STORE_UNAVAILABLE instead of circling forever.
 * Also remembers the Reserves whose key the bucket's fingerprint set knew but the holds table did
 * not have. Lane-confined.
 */
final class CarryOver {
    private final int laneIndex;
    private final int redoMax;
    private final Duration retryAfter;
    private final ArrayDeque<Op> carry = new ArrayDeque<>();
    /** How often each carried operation has been carried; entries leave when the op completes. */
    private final IdentityHashMap<Op, Integer> carried = new IdentityHashMap<>();
    CarryOver(int laneIndex, int redoMax, Duration retryAfter) {
        this.laneIndex = laneIndex;
        this.redoMax = redoMax;
        this.retryAfter = retryAfter;
    }

    /** Puts an operation into the next batch, or fails it when it was carried too often. */
    void carryOver(Op op) {
        int n = carried.merge(op, 1, Integer::sum);
        if (n > redoMax + 1) {
            carried.remove(op);
            op.future().completeExceptionally(Failure.retryable(Reason.STORE_UNAVAILABLE, "lane " + laneIndex
                    + " could not settle this request after " + (n - 1) + " batches; retry with the same key",
                    retryAfter));
            return;
        }
        carry.add(op);
    }

    /** Moves carried operations into {@code batch} until it holds {@code max}. */
    void drainTo(List<Op> batch, int max) {
        while (!carry.isEmpty() && batch.size() < max) {
            batch.add(carry.poll());
        }
    }

    /** After a batch: forgets the operations that were completed. */
    void forgetCompleted() {
        if (!carried.isEmpty()) {
            carried.keySet().removeIf(op -> op.future().isDone());
        }
    }

    /** The lane stops: every carried operation, to be failed, and nothing remembered. */
    List<Op> takeAll() {
        List<Op> left = List.copyOf(carry);
        carry.clear();
        carried.clear();
        return left;
    }
}
