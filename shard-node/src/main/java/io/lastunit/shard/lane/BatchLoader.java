package io.lastunit.shard.lane;

import io.lastunit.shard.decide.BuyerName;
import io.lastunit.shard.decide.KeyName;
import io.lastunit.shard.decide.Loaded;
import io.lastunit.shard.decide.Needs;
import io.lastunit.shard.decide.Slot;
import io.lastunit.shard.store.HoldRow;
import io.lastunit.shard.store.KeyRef;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.UsageKey;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Loads what a decision asked for ({@link Needs}, less its borrows) into the attempt's
 * {@link Loaded}, inside the attempt's transaction: one statement per kind of row. Before hold
 * rows or due holds it reads the transaction's {@code now()}, so the decider judges expiry by
 * the same clock as the statements that write it. Stateless.
 */
final class BatchLoader {
    private final LaneStore store;
    private final int sweepBatchMax;

    BatchLoader(LaneStore store, int sweepBatchMax) {
        this.store = store;
        this.sweepBatchMax = sweepBatchMax;
    }

    void load(Needs n, LazyConnection conn, Loaded into, boolean nowRead) throws SQLException {
        Connection c = conn.get();
        if (!nowRead && (!n.holds().isEmpty() || !n.due().isEmpty())) {
            into.nowMicros(store.dbNowMicros(c));
        }
        if (!n.keys().isEmpty()) {
            List<KeyRef> refs = new ArrayList<>(n.keys().size());
            for (KeyName k : n.keys()) {
                refs.add(Facts.keyRef(k));
            }
            into.keys(n.keys(), Facts.holds(store.readHoldsByKey(c, refs)));
        }
        if (!n.usage().isEmpty()) {
            into.usage(n.usage(), usage(c, n));
        }
        if (!n.holds().isEmpty()) {
            into.holds(n.holds(), Facts.holds(store.readHolds(c, n.holds().toArray(UUID[]::new))));
        }
        for (Slot s : n.due()) {
            List<HoldRow> due = store.dueHolds(c, s.tenantId(), s.itemId(), s.bucketNo(), sweepBatchMax);
            long next = due.size() >= sweepBatchMax ? Long.MIN_VALUE
                    : store.nextDue(c, s.tenantId(), s.itemId(), s.bucketNo());
            into.due(s, new Loaded.Due(Facts.holds(due), next));
        }
    }

    private Map<BuyerName, Long> usage(Connection c, Needs n) throws SQLException {
        List<UsageKey> keys = new ArrayList<>(n.usage().size());
        for (BuyerName b : n.usage()) {
            keys.add(new UsageKey(b.tenantId(), b.itemId(), b.buyerId()));
        }
        Map<BuyerName, Long> used = new HashMap<>();
        store.readUsage(c, keys).forEach((k, q) -> used.put(new BuyerName(k.tenantId(), k.itemId(), k.buyerId()), q));
        return used;
    }
}
