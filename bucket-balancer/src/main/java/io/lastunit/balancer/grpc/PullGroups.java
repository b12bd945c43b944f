package io.lastunit.balancer.grpc;

import io.lastunit.api.balancer.v1.PullResponse;
import io.lastunit.balancer.move.ItemMover;
import io.lastunit.common.invariant.ItemKey;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Concurrent pulls of one item into one region, answered by one run of the mover. At the end of
 * a regional sale every router sends a Pull for each Reserve its dry region's shard refused, and
 * the pulls of an item run one at a time under the item's lock: hundreds of them queued, each
 * reading every shard of the item, and the last ones ran out of time (ITEM_BUSY) and were
 * retried by the clients. Now a pull that finds a group of the same item and region still
 * waiting for the item joins it and gets the group's answer.
 *
 * <p>A group is open while it waits for the item's lock. It closes when its run holds the lock,
 * before it reads the item, so every member asked before the read its answer is based on: an
 * answer is never older than a member's own request. The run pulls the largest quantity asked;
 * an answer of "moved" sends each member's Reserve again (which pulls again if the region is
 * still dry), and "collapsed" or "nothing moved" holds for every member alike. A group takes at
 * most {@link #MEMBERS_MAX} members; the next pull then opens a new group.
 *
 * <p>Thread-safe (one monitor; members only attach to the group's future).
 */
final class PullGroups {
    /** Most callers one run answers. */
    static final int MEMBERS_MAX = 10_000;

    record Key(ItemKey item, String region) {
    }

    /** One run's callers: its answer, and what it runs with (guarded by the groups' monitor). */
    final class Group implements ItemMover.PullCallers {
        final Key key;
        final CompletableFuture<PullResponse> answer = new CompletableFuture<>();
        private long quantity;
        private long deadlineNanos;
        private int members = 1;
        private boolean closed;

        private Group(Key key, long quantity, long deadlineNanos) {
            this.key = key;
            this.quantity = quantity;
            this.deadlineNanos = deadlineNanos;
        }

        @Override
        public long deadlineNanos() {
            synchronized (PullGroups.this) {
                return deadlineNanos;
            }
        }

        @Override
        public long close() {
            synchronized (PullGroups.this) {
                closed = true;
                open.remove(key, this);
                return quantity;
            }
        }

        int members() {
            synchronized (PullGroups.this) {
                return members;
            }
        }
    }

    /** A caller's group, and whether this caller opened it (and so must start its run). */
    record Join(Group group, boolean opened) {
    }

    private final Map<Key, Group> open = new HashMap<>();

    /** Joins the open group of {@code item} and {@code region}, or opens one. */
    synchronized Join join(ItemKey item, String region, long quantity, long deadlineNanos) {
        Key key = new Key(item, region);
        Group g = open.get(key);
        if (g != null && !g.closed && g.members < MEMBERS_MAX) {
            g.members++;
            g.quantity = Math.max(g.quantity, quantity);
            if (deadlineNanos - g.deadlineNanos > 0) {
                g.deadlineNanos = deadlineNanos;
            }
            return new Join(g, false);
        }
        g = new Group(key, quantity, deadlineNanos);
        open.put(key, g);
        return new Join(g, true);
    }

    /** Groups still taking members (for tests). */
    synchronized int openGroups() {
        return open.size();
    }
}
