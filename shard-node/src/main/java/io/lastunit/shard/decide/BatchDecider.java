package io.lastunit.shard.decide;

import io.lastunit.api.inventory.v1.HoldState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The rules of a lane's batch, as a pure function: calls, the buckets they touch and what was
 * loaded in → one {@link Outcome} per call and the writes, or the {@link Needs} to load first.
 * No I/O, no clock (the database's time comes in {@link Loaded#nowMicros}), no shared state: the
 * same inputs give the same decision, so the rules are tested as tables with no database.
 *
 * <p>In order, as if the calls had arrived one after another: first every touched bucket whose
 * earliest expiry has passed (or that a Sweep names) gives its due holds back, so an expired
 * hold never makes a false SOLD_OUT; then Confirms, Releases and Extends, each judged against the
 * row the one before it left; then Reserves — a key's repeat in the batch follows its first use,
 * a known key gets its first use's answer, a key of another open bucket is rerouted, a dry
 * bucket of several asks to borrow, SOLD_OUT when no units are left, LIMIT_EXCEEDED past the
 * per-buyer cap. An item that a tenant move fences ({@link ItemState#moving}) is left as it is:
 * its holds do not expire here, and every Reserve, claim, Confirm, Release and Extend on it is
 * {@link Outcome.NotActive}. Before it returns, it asserts every changed bucket's projected
 * counters: {@code available + held + sold = allotment}, none below zero.
 */
public final class BatchDecider {
    private BatchDecider() {
    }

    /**
     * Decides {@code calls} (in arrival order, indexed 0..n-1).
     *
     * @param buckets    the touched buckets the lane has (a call whose bucket is absent: {@link Outcome.NoBucket})
     * @param loaded     what the lane loaded for this attempt so far
     * @param lookUp     keys to look up even where the bucket's index does not know them (the
     *                   database found them in use)
     */
    public static Decision decide(List<Call> calls, Map<Slot, BucketFacts> buckets, Loaded loaded,
                                  Set<KeyName> lookUp) {
        return new Run(calls, buckets, loaded, lookUp).decide();
    }

    /** One decision's working state. */
    private static final class Run {
        final List<Call> calls;
        final Map<Slot, BucketFacts> buckets;
        final Loaded in;
        final Set<KeyName> lookUp;
        final long now;
        final Outcome[] outcomes;
        final Needs needs = Needs.empty();
        final Map<Slot, BucketDelta> deltas = new LinkedHashMap<>();
        /** Rows as this batch leaves them so far (expired, transitioned). */
        final Map<UUID, HoldFacts> rows = new HashMap<>();
        final Map<UUID, Integer> stepsPerHold = new HashMap<>();
        final List<HoldFacts> expired = new ArrayList<>();
        final List<Decided.Step> steps = new ArrayList<>();
        final Map<BuyerName, Long> usageTaken = new LinkedHashMap<>();
        final List<HoldFacts> usageGiven = new ArrayList<>();
        /** Units each buyer's ended holds give back in this batch (before its Reserves are judged). */
        final Map<BuyerName, Long> givenBack = new HashMap<>();
        final Map<Slot, Long> nextDue = new LinkedHashMap<>();
        final Map<Slot, long[]> demandBySlot = new LinkedHashMap<>();

        Run(List<Call> calls, Map<Slot, BucketFacts> buckets, Loaded in, Set<KeyName> lookUp) {
            this.calls = calls;
            this.buckets = buckets;
            this.in = in;
            this.lookUp = lookUp;
            this.now = in.nowMicros;
            this.outcomes = new Outcome[calls.size()];
        }

        Decision decide() {
            expire();
            for (Call c : calls) {
                if (c instanceof Call.Transition t) {
                    transition(t);
                }
            }
            Map<KeyName, Call.Reserve> leaders = new HashMap<>();
            for (Call c : calls) {
                if (c instanceof Call.Reserve r) {
                    reserve(r, leaders);
                }
            }
            if (!needs.isEmpty()) {
                for (Map.Entry<Slot, BucketDelta> e : deltas.entrySet()) {
                    needs.taken().put(e.getKey(), e.getValue().taken);
                    needs.remaining().put(e.getKey(), remaining(buckets.get(e.getKey()), e.getValue()));
                }
                return new Decision.More(needs);
            }
            assertProjectedBalance();
            Map<BuyerName, Decided.UsageTake> takes = new LinkedHashMap<>();
            for (Map.Entry<BuyerName, Long> e : usageTaken.entrySet()) {
                BuyerName b = e.getKey();
                takes.put(b, new Decided.UsageTake(in.usageOf(b) - givenBack.getOrDefault(b, 0L), e.getValue()));
            }
            Map<ItemName, long[]> demand = new LinkedHashMap<>();
            demandBySlot.forEach((slot, n) -> {
                long[] item = demand.computeIfAbsent(new ItemName(slot.tenantId(), slot.itemId()), x -> new long[2]);
                item[0] += n[0];
                item[1] += n[1];
            });
            return new Decided(outcomes, deltas, expired, steps, takes, usageGiven, nextDue, demand);
        }

        BucketDelta delta(Slot s) {
            return deltas.computeIfAbsent(s, x -> new BucketDelta());
        }

        // ---- expiry ----

        private void expire() {
            Set<Slot> asked = new LinkedHashSet<>();
            Set<Slot> touched = new LinkedHashSet<>();
            for (Call c : calls) {
                touched.add(c.slot());
                if (c instanceof Call.Sweep) {
                    asked.add(c.slot());
                }
            }
            Map<Slot, Integer> count = new HashMap<>();
            for (Slot s : touched) {
                BucketFacts b = buckets.get(s);
                Loaded.Due due = in.due.get(s);
                if (b == null || b.item().moving()) {
                    continue; // a moving item's holds expire where it serves, by their expires_at
                }
                if (due != null) {
                    count.put(s, expireDue(b, due)); // loaded because it was due: the database judged which
                } else if (asked.contains(s) || b.earliestDueMicros() <= now) {
                    needs.due().add(s);
                }
            }
            for (Call c : calls) {
                if (c instanceof Call.Sweep sw) {
                    outcomes[sw.index()] = buckets.containsKey(sw.slot())
                            ? new Outcome.Swept(count.getOrDefault(sw.slot(), 0)) : new Outcome.NoBucket();
                }
            }
        }

        private int expireDue(BucketFacts b, Loaded.Due due) {
            int n = 0;
            for (HoldFacts h : due.holds()) {
                if (!h.slot().equals(b.slot()) || !h.dueAt(now)) {
                    throw new IllegalStateException("hold " + h.holdId() + " loaded as due in " + b.slot()
                            + " is " + h.state() + " of " + h.slot() + ", expiring at " + h.expiresAtMicros()
                            + " (now " + now + ")");
                }
                delta(b.slot()).giveBack(h.qty());
                rows.put(h.holdId(), h.with(HoldState.EXPIRED, h.expiresAtMicros(), h.extended(), h.orderRef()));
                expired.add(h);
                if (b.item().limited()) {
                    giveUsage(h);
                }
                n++;
            }
            nextDue.put(b.slot(), due.nextDueMicros());
            return n;
        }

        private void giveUsage(HoldFacts ended) {
            usageGiven.add(ended);
            givenBack.merge(ended.buyer(), (long) ended.qty(), Long::sum);
        }

        // ---- confirm, release, extend ----

        private void transition(Call.Transition t) {
            BucketFacts b = buckets.get(t.slot());
            if (b == null) {
                outcomes[t.index()] = new Outcome.NoBucket();
                return;
            }
            if (b.item().moving()) {
                outcomes[t.index()] = new Outcome.NotActive(b.item().state());
                return;
            }
            HoldFacts row = rows.get(t.holdId());
            if (row == null) {
                if (!in.holdsLoaded.contains(t.holdId())) {
                    needs.holds().add(t.holdId());
                    return;
                }
                row = in.holds.get(t.holdId());
            }
            Outcome refused = HoldRules.judge(t, row, now);
            outcomes[t.index()] = refused != null ? refused : apply(t, row, b);
        }

        private Outcome apply(Call.Transition t, HoldFacts row, BucketFacts b) {
            BucketDelta d = delta(t.slot());
            HoldFacts after = switch (t.kind()) {
                case CONFIRM -> {
                    d.confirm(row.qty());
                    yield row.with(HoldState.SOLD, row.expiresAtMicros(), row.extended(), t.orderRef());
                }
                case RELEASE -> {
                    d.giveBack(row.qty());
                    if (b.item().limited()) {
                        giveUsage(row);
                    }
                    yield row.with(HoldState.RELEASED, row.expiresAtMicros(), row.extended(), row.orderRef());
                }
                case EXTEND -> row.with(HoldState.HELD, row.expiresAtMicros() + b.item().extendByMs() * 1_000L, true,
                        row.orderRef());
            };
            int round = stepsPerHold.merge(t.holdId(), 1, Integer::sum) - 1;
            steps.add(new Decided.Step(t, row, after, round));
            rows.put(t.holdId(), after);
            return new Outcome.Applied(t.kind(), after);
        }

        // ---- reserve ----

        private void reserve(Call.Reserve r, Map<KeyName, Call.Reserve> leaders) {
            BucketFacts b = buckets.get(r.slot());
            if (b == null) {
                outcomes[r.index()] = new Outcome.NoBucket();
                return;
            }
            if (b.item().moving()) {
                // Before the key: a retry's hold may have changed where the item serves now.
                outcomes[r.index()] = new Outcome.NotActive(b.item().state());
                return;
            }
            KeyName k = r.keyName();
            Call.Reserve leader = leaders.putIfAbsent(k, r);
            if (leader != null) {
                boolean same = leader.fingerprint().equals(r.fingerprint()) && leader.claim() == r.claim();
                outcomes[r.index()] = same ? new Outcome.Follow(leader.index()) : new Outcome.Carry();
                return;
            }
            if (b.keys().knows(r.key()) || lookUp.contains(k) || in.keysLoaded.contains(k)) {
                if (!in.keysLoaded.contains(k)) {
                    needs.keys().add(k);
                    return;
                }
                HoldFacts first = in.keyRows.get(k);
                if (first != null) {
                    outcomes[r.index()] = KeyRules.repeat(r, first);
                    return;
                }
                // the index named a key the table does not have (a fingerprint collision): a new key
            }
            outcomes[r.index()] = place(r, b, k);
        }

        /** A Reserve with a key new to the item; null while something it needs is not loaded yet. */
        private Outcome place(Call.Reserve r, BucketFacts b, KeyName k) {
            ItemFacts item = b.item();
            int target = item.bucketFor(r.key());
            if (target != r.slot().bucketNo()) {
                return new Outcome.Reroute(target);
            }
            if (!item.active()) {
                return new Outcome.NotActive(item.state());
            }
            if (r.claim()) {
                Outcome refused = KeyRules.refuseClaim(r, item);
                return refused != null ? refused : new Outcome.Recorded(HoldState.CLAIMED);
            }
            long[] wanted = demandBySlot.computeIfAbsent(r.slot(), x -> new long[2]);
            wanted[0]++;
            if (item.regionCollapsed() && !item.isHome(r.region())) {
                return new Outcome.Recorded(HoldState.FORWARDED);
            }
            BucketDelta d = delta(r.slot());
            long remaining = remaining(b, d);
            if (remaining < r.quantity() && item.bucketCount() > 1) {
                BorrowResult borrowed = in.borrows.get(r.slot());
                if (borrowed == null) {
                    needs.borrows().merge(r.slot(), r.quantity() - Math.max(0, remaining), Long::sum);
                    d.reserve(r.quantity()); // tentatively: later Reserves of the bucket add their own need
                    return null;
                }
                if (borrowed == BorrowResult.WAIT_FOR_SWEEP || borrowed == BorrowResult.CLOSED) {
                    return new Outcome.Carry();
                }
            }
            if (remaining < r.quantity()) {
                if (!b.keys().complete() && !in.keysLoaded.contains(k)) {
                    needs.keys().add(k); // the index cannot vouch that this is not a retry
                    return null;
                }
                wanted[1]++;
                return new Outcome.SoldOut(item.multiRegion() && !item.regionCollapsed());
            }
            if (item.limited()) {
                BuyerName buyer = new BuyerName(r.slot().tenantId(), r.slot().itemId(), r.buyerId());
                if (!in.usage.containsKey(buyer)) {
                    needs.usage().add(buyer);
                    d.reserve(r.quantity());
                    return null;
                }
                long used = in.usageOf(buyer) - givenBack.getOrDefault(buyer, 0L) + usageTaken.getOrDefault(buyer, 0L);
                if (used + r.quantity() > item.perBuyerLimit()) {
                    return new Outcome.LimitExceeded();
                }
                usageTaken.merge(buyer, (long) r.quantity(), Long::sum);
            }
            d.reserve(r.quantity());
            return new Outcome.Reserved(r.quantity(), r.holdTtlMs() != 0 ? r.holdTtlMs() : item.holdTtlMs());
        }

        /**
         * What the bucket has left for this batch: its cached units, less what other lanes' committed
         * borrows took since, plus what this batch gave back, less what it took.
         */
        static long remaining(BucketFacts b, BucketDelta d) {
            return b.available() - b.unseenLent() + d.credited - d.taken;
        }

        private void assertProjectedBalance() {
            for (Map.Entry<Slot, BucketDelta> e : deltas.entrySet()) {
                BucketFacts b = buckets.get(e.getKey());
                BucketDelta d = e.getValue();
                long available = b.available() + d.available;
                long held = b.held() + d.held;
                long sold = b.sold() + d.sold;
                if (available - b.unseenLent() < 0 || held < 0 || sold < 0 || available + held + sold != b.allotment()) {
                    throw new IllegalStateException("bucket " + e.getKey() + " would be out of balance after the batch:"
                            + " allotment=" + b.allotment() + ", available=" + available + " (of which lent unseen "
                            + b.unseenLent() + "), held=" + held + ", sold=" + sold);
                }
            }
        }
    }
}
