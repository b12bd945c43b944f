package io.lastunit.shard.lane;

import io.lastunit.shard.decide.BucketFacts;
import io.lastunit.shard.decide.Call;
import io.lastunit.shard.decide.HoldFacts;
import io.lastunit.shard.decide.ItemFacts;
import io.lastunit.shard.decide.KeyName;
import io.lastunit.shard.decide.Slot;
import io.lastunit.shard.escrow.ItemLedger;
import io.lastunit.shard.store.HoldRow;
import io.lastunit.shard.store.KeyRef;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The lane's state as the decider's values, and back: operations as {@link Call}s, cached
 * buckets with their item's ledger as {@link BucketFacts}, hold rows as {@link HoldFacts}.
 * Stateless.
 */
final class Facts {
    private Facts() {
    }

    static Slot slot(BucketKey k) {
        return new Slot(k.tenantId(), k.itemId(), k.bucketNo());
    }

    static BucketKey key(Slot s) {
        return new BucketKey(s.tenantId(), s.itemId(), s.bucketNo());
    }

    static KeyRef keyRef(KeyName k) {
        return new KeyRef(k.tenantId(), k.itemId(), k.key());
    }

    static KeyName keyName(KeyRef k) {
        return new KeyName(k.tenantId(), k.itemId(), k.key());
    }

    /** The batch's operations as calls, index for index (only Reserve, hold actions and Sweep reach a batch). */
    static List<Call> calls(List<Op> ops) {
        List<Call> calls = new ArrayList<>(ops.size());
        BucketKey last = null;
        Slot s = null;
        for (Op op : ops) {
            int i = calls.size();
            if (!op.bucket().equals(last)) { // one Slot per run of a bucket: the decider's maps compare it cheaply
                last = op.bucket();
                s = slot(last);
            }
            if (op instanceof Op.Reserve r) {
                var q = r.request();
                calls.add(new Call.Reserve(i, s, q.getIdempotencyKey(), r.fingerprint(), q.getRegion(), q.getBuyerId(),
                        q.getQuantity(), r.holdTtlMsRequested(), r.claimHome()));
            } else if (op instanceof Op.HoldAction a) {
                calls.add(new Call.Transition(i, s, a.holdId().uuid(), a.holdId().region(), kind(a.kind()),
                        a.orderRef()));
            } else if (op instanceof Op.Sweep) {
                calls.add(new Call.Sweep(i, s));
            } else {
                throw new IllegalArgumentException("not a batch operation: " + op);
            }
        }
        return calls;
    }

    static Call.Kind kind(Op.HoldAction.Kind k) {
        return switch (k) {
            case CONFIRM -> Call.Kind.CONFIRM;
            case RELEASE -> Call.Kind.RELEASE;
            case EXTEND -> Call.Kind.EXTEND;
        };
    }

    /** A cached bucket with its item's escrow state ({@code ledger} null: the item has none here). */
    static BucketFacts bucket(BucketState b, ItemLedger ledger) {
        ItemConfig c = b.item;
        ItemFacts item = ledger == null
                ? new ItemFacts(c.homeRegion(), List.of(c.homeRegion()), c.perBuyerLimit(), c.holdTtlMs(),
                        c.extendByMs(), 1, c.state(), new int[] {b.key.bucketNo()}, false)
                : new ItemFacts(c.homeRegion(), ledger.regions, c.perBuyerLimit(), c.holdTtlMs(), c.extendByMs(),
                        ledger.bucketCount, c.state(), ledger.open(), ledger.regionCollapsed());
        return new BucketFacts(slot(b.key), item, b.allotment, b.available, b.held, b.sold, b.unseenLent(ledger),
                b.earliestDueMicros, new BucketFacts.KeyIndex() {
                    @Override
                    public boolean knows(String idempotencyKey) {
                        return b.knowsKey(idempotencyKey);
                    }

                    @Override
                    public boolean complete() {
                        return b.keysComplete();
                    }
                });
    }

    static HoldFacts hold(HoldRow h) {
        return new HoldFacts(h.holdId(), new Slot(h.tenantId(), h.itemId(), h.bucketNo()), h.region(), h.qty(),
                h.buyerId(), h.idempotencyKey(), h.fingerprint(), h.state(), micros(h.createdAt()),
                micros(h.expiresAt()),
                h.extended(), h.orderRef());
    }

    static List<HoldFacts> holds(List<HoldRow> rows) {
        List<HoldFacts> out = new ArrayList<>(rows.size());
        for (HoldRow h : rows) {
            out.add(hold(h));
        }
        return out;
    }

    static long micros(Instant i) {
        return i.getEpochSecond() * 1_000_000L + i.getNano() / 1_000;
    }
}
