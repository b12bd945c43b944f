package io.lastunit.shard.decide;

import io.lastunit.api.inventory.v1.HoldState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** Builds a decider's inputs for one table row: items, buckets, calls, what was loaded. */
final class Table {
    static final String T = "t1";
    static final String I = "i1";
    static final long NOW = 1_000_000_000_000L;

    final Map<Slot, BucketFacts> buckets = new LinkedHashMap<>();
    final List<Call> calls = new ArrayList<>();
    final Loaded loaded = new Loaded(NOW);
    final Set<KeyName> lookUp = new HashSet<>();

    static ItemFacts item(int bucketCount) {
        return item(bucketCount, 0);
    }

    static ItemFacts item(int bucketCount, int perBuyerLimit) {
        int[] open = new int[bucketCount];
        for (int b = 0; b < bucketCount; b++) {
            open[b] = b;
        }
        return new ItemFacts("eu", List.of("eu"), perBuyerLimit, 60_000, 30_000, bucketCount, ItemState.ACTIVE, open,
                false);
    }

    static ItemFacts regions(ItemFacts i, List<String> regions, boolean collapsed) {
        return new ItemFacts(i.homeRegion(), regions, i.perBuyerLimit(), i.holdTtlMs(), i.extendByMs(), i.bucketCount(),
                i.state(), i.open(), collapsed);
    }

    static ItemFacts open(ItemFacts i, int... open) {
        return new ItemFacts(i.homeRegion(), i.regions(), i.perBuyerLimit(), i.holdTtlMs(), i.extendByMs(),
                i.bucketCount(), i.state(), open, i.regionCollapsed());
    }

    static ItemFacts state(ItemFacts i, ItemState state) {
        return new ItemFacts(i.homeRegion(), i.regions(), i.perBuyerLimit(), i.holdTtlMs(), i.extendByMs(),
                i.bucketCount(), state, i.open(), i.regionCollapsed());
    }

    static Slot slot(int bucketNo) {
        return new Slot(T, I, bucketNo);
    }

    /** A key that the item's open buckets send to {@code bucketNo}. */
    static String keyFor(ItemFacts item, int bucketNo, String prefix) {
        for (int n = 0; n < 100_000; n++) {
            if (item.bucketFor(prefix + n) == bucketNo) {
                return prefix + n;
            }
        }
        throw new AssertionError("no key for bucket " + bucketNo);
    }

    Table bucket(int bucketNo, ItemFacts item, long available, long held, long sold, String... keys) {
        return bucket(bucketNo, item, available, held, sold, Long.MAX_VALUE, true, keys);
    }

    Table bucket(int bucketNo, ItemFacts item, long available, long held, long sold, long earliestDue,
                 boolean keysComplete, String... keys) {
        Set<String> known = Set.of(keys);
        BucketFacts.KeyIndex index = new BucketFacts.KeyIndex() {
            @Override
            public boolean knows(String k) {
                return known.contains(k);
            }

            @Override
            public boolean complete() {
                return keysComplete;
            }
        };
        buckets.put(slot(bucketNo), new BucketFacts(slot(bucketNo), item, available + held + sold, available, held,
                sold, 0, earliestDue, index));
        return this;
    }

    Table reserve(int bucketNo, String key, int qty) {
        return reserve(bucketNo, key, "buyer", qty, "fp-" + key + "-" + qty);
    }

    Table reserve(int bucketNo, String key, String buyer, int qty, String fp) {
        calls.add(new Call.Reserve(calls.size(), slot(bucketNo), key, fp, "eu", buyer, qty, 0, null));
        return this;
    }

    Table reserveIn(int bucketNo, String key, String region, int qty) {
        calls.add(new Call.Reserve(calls.size(), slot(bucketNo), key, "fp-" + key + "-" + region, region, "buyer", qty,
                0, null));
        return this;
    }

    Table claim(int bucketNo, String key, String region, String home) {
        calls.add(new Call.Reserve(calls.size(), slot(bucketNo), key, "fp-" + key + "-" + region, region, "buyer", 1, 0,
                home));
        return this;
    }

    Table transition(HoldFacts hold, Call.Kind kind, String orderRef) {
        calls.add(new Call.Transition(calls.size(), hold.slot(), hold.holdId(), hold.region(), kind, orderRef));
        return this;
    }

    Table sweep(int bucketNo) {
        calls.add(new Call.Sweep(calls.size(), slot(bucketNo)));
        return this;
    }

    static HoldFacts hold(int bucketNo, int qty, String key, long expiresAt) {
        return new HoldFacts(UUID.nameUUIDFromBytes((key + bucketNo).getBytes()), slot(bucketNo), "eu", qty, "buyer",
                key, "fp-" + key + "-" + qty, HoldState.HELD, expiresAt - 60_000_000L, expiresAt, false, null);
    }

    static HoldFacts row(HoldFacts h, HoldState state, String orderRef) {
        return new HoldFacts(h.holdId(), h.slot(), h.region(), h.qty(), h.buyerId(), h.idempotencyKey(),
                h.fingerprint(), state, h.createdAtMicros(), h.expiresAtMicros(), h.extended(), orderRef);
    }

    Table loadedHolds(HoldFacts... rows) {
        Set<UUID> ids = new HashSet<>();
        for (HoldFacts h : rows) {
            ids.add(h.holdId());
        }
        loaded.holds(ids, List.of(rows));
        return this;
    }

    Table loadedKeys(Set<KeyName> asked, HoldFacts... rows) {
        loaded.keys(asked, List.of(rows));
        return this;
    }

    Decision decide() {
        return BatchDecider.decide(calls, buckets, loaded, lookUp);
    }

    Decided decided() {
        Decision d = decide();
        if (!(d instanceof Decided done)) {
            throw new AssertionError("expected a decision, got " + d);
        }
        return done;
    }

    Needs needs() {
        Decision d = decide();
        if (!(d instanceof Decision.More more)) {
            throw new AssertionError("expected needs, got a decision");
        }
        return more.needs();
    }
}
