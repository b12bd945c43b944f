package io.lastunit.shard.lane;

import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.escrow.CachedRows;
import io.lastunit.shard.escrow.ItemLedger;
import io.lastunit.shard.escrow.ItemLedgers;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A lane's cached buckets: each bucket row with its item's settings, its idempotency keys and a
 * lower bound of its earliest expiry, loaded on a miss and its counters reloaded when a redo
 * marked them stale. Loading a bucket also measures the database clock ({@link DbClock}) and
 * makes sure the item's ledger is known.
 *
 * <p>Lane-confined; not thread-safe ({@link #bucketLoads} is read from any thread). Hazard: the
 * counters are a cache, so any write whose outcome is unknown must drop the bucket
 * ({@link #forget}); the conditional bucket update catches a view that is merely stale.
 */
final class BucketCache implements CachedRows {
    private final Map<BucketKey, BucketState> buckets = new HashMap<>();
    private final LaneStore store;
    private final ItemStore items;
    private final ItemLedgers ledgers;
    private final DbClock clock;
    private final int keyIndexMax;
    /**
     * How many buckets {@link #doubt} remembers; past it the oldest is forgotten, and a key of
     * that bucket whose write was in doubt could be answered SOLD_OUT from the cache again.
     */
    static final int DOUBTED_MAX = 1 << 20;
    /** Buckets a write of unknown outcome touched (and their item's bucket 0), oldest first. */
    private final Set<BucketKey> doubted = Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<BucketKey, Boolean> eldest) {
            return size() > DOUBTED_MAX;
        }
    });
    /** Buckets loaded whole into the cache: the row and the bucket's idempotency keys. */
    final AtomicLong bucketLoads = new AtomicLong();

    BucketCache(LaneStore store, ItemStore items, ItemLedgers ledgers, DbClock clock, int keyIndexMax) {
        this.store = store;
        this.items = items;
        this.ledgers = ledgers;
        this.clock = clock;
        this.keyIndexMax = keyIndexMax;
    }

    /** The cached bucket, or null; never loads. */
    BucketState get(BucketKey key) {
        return buckets.get(key);
    }

    /**
     * The cached bucket, loading it (with its item, keys and earliest expiry) on a miss and
     * refreshing its counters when a redo marked it stale; null if absent. Also makes sure the
     * engine knows the item's ledger.
     */
    BucketState load(LazyConnection lazy, BucketKey key) throws SQLException {
        BucketState b = buckets.get(key);
        if (b != null && !b.stale) {
            return b;
        }
        Connection c = lazy.get();
        LaneStore.LoadedBucket loaded = store.loadBucket(c, key.tenantId(), key.itemId(), key.bucketNo());
        if (loaded == null) {
            buckets.remove(key);
            return null;
        }
        clock.measured(loaded.dbNowMicros());
        ItemConfig item = new ItemConfig(key.tenantId(), key.itemId(), loaded.homeRegion(), loaded.total(),
                loaded.perBuyerLimit(), loaded.holdTtlMs(), loaded.extendByMs(), loaded.bucketCount(),
                ItemState.of(loaded.state()));
        if (b != null) {
            b.item = item;
            setCounters(b, loaded);
            b.stale = false;
            ledgers.load(c, key.tenantId(), key.itemId());
            return b;
        }
        b = new BucketState(key, item, keyIndexMax);
        bucketLoads.incrementAndGet();
        setCounters(b, loaded);
        ItemLedger ledger = ledgers.load(c, key.tenantId(), key.itemId());
        if (item.state().moving()) {
            // Fenced by a tenant move: every call is answered without its key, and the move drops this
            // bucket from the cache when the item serves again. Its keys (the item's whole history) are
            // not read; should the bucket be used unfenced before that, an incomplete key set makes each
            // key be looked up.
            b.markKeysIncomplete();
            buckets.put(key, b);
            return b;
        }
        addKeys(b, store.bucketKeys(c, key.tenantId(), key.itemId(), key.bucketNo(), keyIndexMax));
        if (key.bucketNo() == 0 && ledger != null && ledger.open().length == 1 && ledger.bucketCount > 1) {
            // Collapsed: bucket 0 answers for keys placed in the closed buckets too.
            addKeys(b, items.keysOutsideBucket0(c, key.tenantId(), key.itemId(), keyIndexMax));
        }
        if (doubted.contains(key)) {
            b.markKeysIncomplete();
        }
        buckets.put(key, b);
        return b;
    }

    /**
     * A write of unknown outcome touched the bucket: its keys may have holds that no load has seen
     * yet — the commit may land on the server after the lane gave up on it and reloaded the bucket
     * (a blackholed connection delivers it later). From now on the bucket's key set is never
     * trusted to say a key is new: a Reserve it would answer SOLD_OUT is looked up by key first,
     * so a retry finds its hold. The same for the item's bucket 0, which answers for every bucket
     * after a collapse.
     */
    void doubt(BucketKey key) {
        for (BucketKey k : new BucketKey[] {key, new BucketKey(key.tenantId(), key.itemId(), 0)}) {
            doubted.add(k);
            BucketState b = buckets.get(k);
            if (b != null) {
                b.markKeysIncomplete();
            }
        }
    }

    private static void setCounters(BucketState b, LaneStore.LoadedBucket loaded) {
        LaneStore.BucketRow row = loaded.bucket();
        b.setCounters(row.allotment(), row.available(), row.held(), row.sold(), row.lent());
        b.earliestDueMicros = loaded.earliestDueMicros();
    }

    /** Adds keys to the bucket's key set; more than {@code keyIndexMax} of them mark it incomplete. */
    void addKeys(BucketState b, List<String> keys) {
        for (String k : keys) {
            b.addKey(k);
        }
        if (keys.size() > keyIndexMax) {
            b.markKeysIncomplete();
        }
    }

    /** The counters (not the keys) are reloaded before the bucket's next use. */
    void markStale(BucketKey key) {
        BucketState b = buckets.get(key);
        if (b != null) {
            b.stale = true;
        }
    }

    /** The bucket is dropped, keys and all, and loaded again on its next use. */
    void remove(BucketKey key) {
        buckets.remove(key);
    }

    /** Every cached bucket of the tenant's items is dropped, keys and all (a tenant move changed their rows). */
    void forgetTenant(String tenant) {
        buckets.keySet().removeIf(k -> k.tenantId().equals(tenant));
    }

    @Override
    public void committed(LaneStore.BucketRow row) {
        BucketState cached = buckets.get(new BucketKey(row.tenantId(), row.itemId(), row.bucketNo()));
        if (cached != null) {
            cached.setCounters(row.allotment(), row.available(), row.held(), row.sold(), row.lent());
        }
    }

    @Override
    public void forget(String tenant, String item, int bucketNo) {
        remove(new BucketKey(tenant, item, bucketNo));
    }
}
