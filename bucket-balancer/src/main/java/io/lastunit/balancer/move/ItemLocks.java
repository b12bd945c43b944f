package io.lastunit.balancer.move;

import io.lastunit.common.invariant.ItemKey;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Serialises the decisions about one item: a pull waits for the pull or loop step in progress on
 * the same item, then re-reads and decides again. Striped: {@value #STRIPES} fair locks, an item
 * hashed onto one, so memory is bounded whatever the number of items (two items sharing a stripe
 * only wait for each other). Thread-safe.
 */
public final class ItemLocks {
    public static final int STRIPES = 1024;

    private final ReentrantLock[] locks = new ReentrantLock[STRIPES];

    public ItemLocks() {
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new ReentrantLock(true);
        }
    }

    public ReentrantLock of(ItemKey item) {
        return locks[Math.floorMod(item.hashCode(), STRIPES)];
    }
}
