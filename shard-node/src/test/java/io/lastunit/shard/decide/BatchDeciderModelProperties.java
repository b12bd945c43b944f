package io.lastunit.shard.decide;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.HoldState;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The decider against a simple model: random calls on one bucket, cut into random batches,
 * decided by {@link BatchDecider} over an in-memory store that answers its {@link Needs} and
 * applies its writes, and by a model that takes the calls one at a time (per batch: due holds
 * expire, then transitions, then Reserves, each in arrival order; a key's second request with
 * other parameters in the same batch waits for the next). Every answer and the final counters
 * must agree, and the store's counters always add up.
 */
class BatchDeciderModelProperties {
    private static final Slot SLOT = new Slot("t", "i", 0);
    private static final long TTL_MS = 100;
    private static final long EXTEND_MS = 50;

    @Property(tries = 300)
    void decisionsMatchTheModel(@ForAll long seed) {
        Random rnd = new Random(seed);
        int units = 1 + rnd.nextInt(12);
        int limit = rnd.nextBoolean() ? 0 : 1 + rnd.nextInt(4);
        ItemFacts item = new ItemFacts("eu", List.of("eu"), limit, TTL_MS, EXTEND_MS, 1, ItemState.ACTIVE, new int[] {0},
                false);
        Store store = new Store(units);
        Model model = new Model(units, limit);
        List<Op> ops = ops(rnd, 20 + rnd.nextInt(120));
        long now = 1_000_000;
        ArrayDeque<Op> carry = new ArrayDeque<>();
        int next = 0;
        for (int batchNo = 0; next < ops.size() || !carry.isEmpty(); batchNo++) {
            assertThat(batchNo).as("batches").isLessThan(10_000);
            now += rnd.nextInt(4) * 40_000L; // 0..120 ms: holds of 100 ms expire between batches
            List<Op> batch = new ArrayList<>(carry);
            carry.clear();
            int size = 1 + rnd.nextInt(12);
            while (next < ops.size() && batch.size() < size) {
                batch.add(ops.get(next++));
            }
            Map<Op, String> expected = model.batch(batch, now, store);
            Map<Op, String> actual = store.batch(batch, now, item, carry);
            if (System.getenv("MODEL_DEBUG") != null) {
                System.out.println("batch " + batchNo + " now=" + now + " " + batch + "\n  model=" + expected
                        + "\n  store=" + actual + " usage=" + store.usage + " model usage=" + model.usage);
            }
            for (Op op : batch) {
                if (!carry.contains(op)) {
                    assertThat(actual.get(op)).as("seed %d, %s", seed, op).isEqualTo(expected.get(op));
                }
            }
            assertThat(carry).as("carried by the decider and the model").containsExactlyElementsOf(model.carried);
            assertThat(store.counters()).as("seed %d counters", seed).isEqualTo(model.counters());
        }
    }

    // ---- calls ----

    sealed interface Op {
    }

    record Reserve(String key, String buyer, int qty) implements Op {
        String fingerprint() {
            return key + "|" + buyer + "|" + qty;
        }
    }

    record Change(String key, Call.Kind kind, String orderRef) implements Op {
    }

    private static List<Op> ops(Random rnd, int n) {
        List<Op> ops = new ArrayList<>();
        for (int x = 0; x < n; x++) {
            String key = "k" + rnd.nextInt(n / 2 + 1);
            if (rnd.nextInt(3) > 0) {
                ops.add(new Reserve(key, "b" + rnd.nextInt(3), 1 + rnd.nextInt(rnd.nextInt(5) == 0 ? 4 : 1)));
            } else {
                Call.Kind kind = Call.Kind.values()[rnd.nextInt(3)];
                ops.add(new Change(key, kind, "o" + rnd.nextInt(2)));
            }
        }
        return ops;
    }

    // ---- the store the decider runs over ----

    static final class Store {
        long allotment;
        long available;
        long held;
        long sold;
        final Map<UUID, HoldFacts> rows = new LinkedHashMap<>();
        final Map<String, UUID> byKey = new HashMap<>();
        final Map<String, Long> usage = new HashMap<>();
        private long ids;

        Store(long units) {
            allotment = units;
            available = units;
        }

        List<Long> counters() {
            return List.of(available, held, sold);
        }

        /** The hold a Change names: the key's hold, or an id of none. */
        UUID target(String key) {
            return byKey.getOrDefault(key, new UUID(0, key.hashCode()));
        }

        Map<Op, String> batch(List<Op> batch, long now, ItemFacts item, ArrayDeque<Op> carry) {
            List<Call> calls = new ArrayList<>();
            for (Op op : batch) {
                int i = calls.size();
                if (op instanceof Reserve r) {
                    calls.add(new Call.Reserve(i, SLOT, r.key(), r.fingerprint(), "eu", r.buyer(), r.qty(), 0, null));
                } else if (op instanceof Change c) {
                    calls.add(new Call.Transition(i, SLOT, target(c.key()), "eu", c.kind(), c.orderRef()));
                }
            }
            Loaded loaded = new Loaded(now);
            for (int round = 0; ; round++) {
                assertThat(round).as("decision rounds").isLessThan(5);
                Decision d = BatchDecider.decide(calls, Map.of(SLOT, facts(item)), loaded, Set.of());
                if (d instanceof Decision.More more) {
                    provide(more.needs(), loaded, now);
                    continue;
                }
                return write((Decided) d, batch, calls, now, carry);
            }
        }

        private BucketFacts facts(ItemFacts item) {
            long due = Long.MAX_VALUE;
            for (HoldFacts h : rows.values()) {
                if (h.state() == HoldState.HELD) {
                    due = Math.min(due, h.expiresAtMicros());
                }
            }
            Set<String> keys = new HashSet<>(byKey.keySet());
            return new BucketFacts(SLOT, item, allotment, available, held, sold, 0, due, new BucketFacts.KeyIndex() {
                @Override
                public boolean knows(String k) {
                    return keys.contains(k);
                }

                @Override
                public boolean complete() {
                    return true;
                }
            });
        }

        private void provide(Needs n, Loaded loaded, long now) {
            List<HoldFacts> found = new ArrayList<>();
            for (KeyName k : n.keys()) {
                UUID id = byKey.get(k.key());
                if (id != null) {
                    found.add(rows.get(id));
                }
            }
            loaded.keys(n.keys(), found);
            Map<BuyerName, Long> used = new HashMap<>();
            for (BuyerName b : n.usage()) {
                used.put(b, usage.getOrDefault(b.buyerId(), 0L));
            }
            loaded.usage(n.usage(), used);
            List<HoldFacts> holds = new ArrayList<>();
            for (UUID id : n.holds()) {
                if (rows.containsKey(id)) {
                    holds.add(rows.get(id));
                }
            }
            loaded.holds(n.holds(), holds);
            for (Slot s : n.due()) {
                List<HoldFacts> due = new ArrayList<>();
                long nextDue = Long.MAX_VALUE;
                for (HoldFacts h : rows.values()) {
                    if (h.dueAt(now)) {
                        due.add(h);
                    } else if (h.state() == HoldState.HELD) {
                        nextDue = Math.min(nextDue, h.expiresAtMicros());
                    }
                }
                loaded.due(s, new Loaded.Due(due, nextDue));
            }
            assertThat(n.borrows()).as("one bucket never borrows").isEmpty();
        }

        private Map<Op, String> write(Decided d, List<Op> batch, List<Call> calls, long now, ArrayDeque<Op> carry) {
            for (HoldFacts h : d.expired()) {
                rows.put(h.holdId(), h.with(HoldState.EXPIRED, h.expiresAtMicros(), h.extended(), h.orderRef()));
            }
            for (Decided.Step s : d.steps()) {
                assertThat(rows.get(s.before().holdId()).state()).isEqualTo(HoldState.HELD);
                rows.put(s.after().holdId(), s.after());
            }
            for (HoldFacts h : d.usageGiven()) {
                usage.merge(h.buyerId(), -(long) h.qty(), Long::sum);
            }
            for (Map.Entry<BuyerName, Decided.UsageTake> e : d.usageTaken().entrySet()) {
                assertThat(usage.getOrDefault(e.getKey().buyerId(), 0L)).as("usage compare-and-set")
                        .isEqualTo(e.getValue().expected());
                usage.merge(e.getKey().buyerId(), e.getValue().add(), Long::sum);
            }
            Map<Op, String> answers = new HashMap<>();
            for (int i = 0; i < calls.size(); i++) {
                Outcome o = d.outcome(i);
                if (o instanceof Outcome.Reserved r) {
                    Call.Reserve c = (Call.Reserve) calls.get(i);
                    UUID id = new UUID(1, ++ids);
                    rows.put(id, new HoldFacts(id, SLOT, "eu", r.quantity(), c.buyerId(), c.key(), c.fingerprint(),
                            HoldState.HELD, now, now + r.ttlMs() * 1_000, false, null));
                    byKey.put(c.key(), id);
                }
            }
            BucketDelta delta = d.deltas().get(SLOT);
            if (delta != null) {
                available += delta.available();
                held += delta.held();
                sold += delta.sold();
            }
            assertThat(available + held + sold).isEqualTo(allotment);
            assertThat(available).isNotNegative();
            assertThat(held).isEqualTo(rows.values().stream().filter(h -> h.state() == HoldState.HELD)
                    .mapToLong(HoldFacts::qty).sum());
            for (int i = 0; i < calls.size(); i++) {
                Outcome o = d.outcome(i);
                if (o instanceof Outcome.Carry) {
                    carry.add(batch.get(i));
                    continue;
                }
                answers.put(batch.get(i), answer(o, d, calls));
            }
            return answers;
        }

        private static String answer(Outcome o, Decided d, List<Call> calls) {
            if (o instanceof Outcome.Reserved || o instanceof Outcome.Existing) {
                return "HOLD";
            } else if (o instanceof Outcome.Follow f) {
                return answer(d.outcome(f.leaderIndex()), d, calls);
            } else if (o instanceof Outcome.SoldOut) {
                return "SOLD_OUT";
            } else if (o instanceof Outcome.LimitExceeded) {
                return "LIMIT";
            } else if (o instanceof Outcome.KeyReused) {
                return "REUSED";
            } else if (o instanceof Outcome.Applied) {
                return "APPLIED";
            } else if (o instanceof Outcome.Unchanged) {
                return "OK";
            } else if (o instanceof Outcome.Refused r) {
                return "REFUSED " + r.why() + " " + r.state();
            }
            throw new AssertionError("unexpected " + o);
        }
    }

    // ---- the model: one call at a time ----

    static final class Model {
        static final class H {
            final String fp;
            final String buyer;
            final int qty;
            HoldState state = HoldState.HELD;
            long expires;
            boolean extended;
            String orderRef;

            H(String fp, String buyer, int qty, long expires) {
                this.fp = fp;
                this.buyer = buyer;
                this.qty = qty;
                this.expires = expires;
            }
        }

        long available;
        long held;
        long sold;
        final int limit;
        final Map<String, H> holds = new HashMap<>();
        final Map<String, Long> usage = new HashMap<>();
        final List<Op> carried = new ArrayList<>();

        Model(long units, int limit) {
            this.available = units;
            this.limit = limit;
        }

        List<Long> counters() {
            return List.of(available, held, sold);
        }

        Map<Op, String> batch(List<Op> batch, long now, Store store) {
            carried.clear();
            for (H h : holds.values()) {
                if (h.state == HoldState.HELD && h.expires <= now) {
                    end(h, HoldState.EXPIRED);
                }
            }
            Map<Op, String> answers = new HashMap<>();
            for (Op op : batch) {
                if (op instanceof Change c) {
                    answers.put(op, change(c, store, now));
                }
            }
            Map<String, Reserve> first = new HashMap<>();
            for (Op op : batch) {
                if (op instanceof Reserve r) {
                    Reserve leader = first.putIfAbsent(r.key(), r);
                    if (leader != null && !leader.fingerprint().equals(r.fingerprint())) {
                        carried.add(op);
                    } else if (leader != null) {
                        answers.put(op, answers.get(leader));
                    } else {
                        answers.put(op, reserve(r, now));
                    }
                }
            }
            return answers;
        }

        private void end(H h, HoldState state) {
            h.state = state;
            available += h.qty;
            held -= h.qty;
            if (limit > 0) {
                usage.merge(h.buyer, -(long) h.qty, Long::sum);
            }
        }

        private String change(Change c, Store store, long now) {
            H h = store.byKey.containsKey(c.key()) ? holds.get(c.key()) : null;
            if (h == null) {
                return "REFUSED NOT_FOUND null";
            }
            if (c.kind() == Call.Kind.CONFIRM && h.state == HoldState.SOLD) {
                return c.orderRef().equals(h.orderRef) ? "OK" : "REFUSED ORDER_REF_MISMATCH SOLD";
            }
            HoldState state = h.state == HoldState.HELD && h.expires <= now ? HoldState.EXPIRED : h.state;
            if (state != HoldState.HELD) {
                return "REFUSED NOT_HELD " + state;
            }
            switch (c.kind()) {
                case CONFIRM -> {
                    h.state = HoldState.SOLD;
                    h.orderRef = c.orderRef();
                    held -= h.qty;
                    sold += h.qty;
                }
                case RELEASE -> end(h, HoldState.RELEASED);
                case EXTEND -> {
                    if (h.extended) {
                        return "REFUSED ALREADY_EXTENDED HELD";
                    }
                    h.extended = true;
                    h.expires += EXTEND_MS * 1_000;
                }
            }
            return "APPLIED";
        }

        private String reserve(Reserve r, long now) {
            H h = holds.get(r.key());
            if (h != null) {
                return h.fp.equals(r.fingerprint()) ? "HOLD" : "REUSED";
            }
            if (available < r.qty()) {
                return "SOLD_OUT";
            }
            if (limit > 0 && usage.getOrDefault(r.buyer(), 0L) + r.qty() > limit) {
                return "LIMIT";
            }
            if (limit > 0) {
                usage.merge(r.buyer(), (long) r.qty(), Long::sum);
            }
            available -= r.qty();
            held += r.qty();
            holds.put(r.key(), new H(r.fingerprint(), r.buyer(), r.qty(), now + TTL_MS * 1_000));
            return "HOLD";
        }
    }
}
