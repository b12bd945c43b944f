package io.lastunit.common.invariant;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.shard.v1.ItemLevel;
import io.lastunit.api.shard.v1.ListLevelsResponse;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The matcher against a model of three shards running the transfer protocol (DESIGN §7), each
 * shard read at its own moment of the history with its own clock: whatever the moments (within
 * half a window of each other), the clocks' offsets and the records' ages against the window,
 * a correct history always balances,
 * and a rogue credit (on a shard the OUT did not name, or without any OUT) always drifts by
 * exactly its units when the snapshot of its shard saw it.
 */
class TransferMatcherProperties {
    private static final ItemKey ITEM = new ItemKey("t", "i");
    private static final int SHARDS = 3;
    private static final long WINDOW = 60;

    /**
     * kind 0: step 1 of a new transfer; 1: step 2 of one; 2: step 3 of one; 3: restock at
     * shard 0; 4: a long pause; 5: a rogue credit on the shard that is neither source nor
     * target; 6: a rogue credit of a transfer that has no OUT record. {@code dt} is the time
     * since the previous step.
     */
    record Op(int kind, int from, int to, int qty, int pick, int dt) {
    }

    private static Arbitrary<List<Op>> ops(int kinds) {
        return Combinators.combine(Arbitraries.integers().between(0, kinds - 1),
                Arbitraries.integers().between(0, SHARDS - 1), Arbitraries.integers().between(0, SHARDS - 1),
                Arbitraries.integers().between(1, 40), Arbitraries.integers().between(0, 1_000),
                Arbitraries.integers().between(1, 30)).as(Op::new).list().ofMaxSize(60);
    }

    @Provide
    Arbitrary<List<Op>> correct() {
        return ops(5);
    }

    @Provide
    Arbitrary<List<Op>> withRogues() {
        return ops(7);
    }

    /** One record as a shard holds it. */
    record Rec(String id, TransferDirection direction, int peer, long qty, boolean done, long createdAt,
            long doneAt) {
        Transfer proto() {
            return Transfer.newBuilder().setTransferId(id).setDirection(direction).setTenantId(ITEM.tenant())
                    .setItemId(ITEM.item()).setPeerShardId("s" + peer).setQuantity(qty)
                    .setState(done ? TransferState.DONE : TransferState.PENDING).setCreatedAtMs(createdAt).build();
        }
    }

    /** The durable state of every shard at one moment. */
    static final class State {
        final long[] base = {100, 60, 0};
        final long[] allotment = base.clone();
        final List<Map<String, Rec>> records = List.of(new LinkedHashMap<>(), new LinkedHashMap<>(),
                new LinkedHashMap<>());
        /** Units of the rogue credits, by shard. */
        final long[] rogue = new long[SHARDS];

        State copy() {
            State c = new State();
            System.arraycopy(base, 0, c.base, 0, SHARDS);
            System.arraycopy(allotment, 0, c.allotment, 0, SHARDS);
            System.arraycopy(rogue, 0, c.rogue, 0, SHARDS);
            for (int s = 0; s < SHARDS; s++) {
                c.records.get(s).putAll(records.get(s));
            }
            return c;
        }
    }

    /** A history: the state after each step, and the global time of each step. */
    static final class History {
        final List<State> states = new ArrayList<>();
        final List<Long> times = new ArrayList<>();
        final long[] offset;
        int transfers;

        History(List<Op> ops, long[] offset) {
            this.offset = offset;
            State s = new State();
            long now = 0;
            states.add(s.copy());
            times.add(now);
            for (Op op : ops) {
                now += op.dt() + (op.kind() == 4 ? 500 : 0);
                apply(s, op, now);
                states.add(s.copy());
                times.add(now);
            }
        }

        private void apply(State s, Op op, long now) {
            List<Rec> outs = new ArrayList<>();
            for (int shard = 0; shard < SHARDS; shard++) {
                for (Rec r : s.records.get(shard).values()) {
                    if (r.direction() == TransferDirection.OUT) {
                        outs.add(r);
                    }
                }
            }
            switch (op.kind()) {
                case 0 -> {
                    int to = op.to() == op.from() ? (op.from() + 1) % SHARDS : op.to();
                    long k = Math.min(op.qty(), s.allotment[op.from()]);
                    if (k > 0) {
                        s.allotment[op.from()] -= k;
                        String id = "t" + transfers++;
                        s.records.get(op.from()).put(id + "/OUT",
                                new Rec(id, TransferDirection.OUT, to, k, false, now + offset[op.from()], 0));
                    }
                }
                case 1 -> {
                    if (!outs.isEmpty()) {
                        Rec o = outs.get(op.pick() % outs.size());
                        int source = sourceOf(s, o.id());
                        if (s.records.get(o.peer()).putIfAbsent(o.id() + "/IN", new Rec(o.id(), TransferDirection.IN,
                                source, o.qty(), true, now + offset[o.peer()], now + offset[o.peer()])) == null) {
                            s.allotment[o.peer()] += o.qty();
                        }
                    }
                }
                case 2 -> {
                    if (!outs.isEmpty()) {
                        Rec o = outs.get(op.pick() % outs.size());
                        if (s.records.get(o.peer()).containsKey(o.id() + "/IN") && !o.done()) {
                            int source = sourceOf(s, o.id());
                            s.records.get(source).put(o.id() + "/OUT", new Rec(o.id(), o.direction(), o.peer(),
                                    o.qty(), true, o.createdAt(), now + offset[source]));
                        }
                    }
                }
                case 3 -> {
                    s.base[0] += op.qty();
                    s.allotment[0] += op.qty();
                }
                case 5 -> {
                    if (!outs.isEmpty()) {
                        Rec o = outs.get(op.pick() % outs.size());
                        int source = sourceOf(s, o.id());
                        int third = 3 - source - o.peer();
                        if (s.records.get(third).putIfAbsent(o.id() + "/IN", new Rec(o.id(), TransferDirection.IN,
                                source, o.qty(), true, now + offset[third], now + offset[third])) == null) {
                            s.allotment[third] += o.qty();
                            s.rogue[third] += o.qty();
                        }
                    }
                }
                case 6 -> {
                    String id = "ghost" + transfers++;
                    int at = op.to() == op.from() ? (op.from() + 1) % SHARDS : op.to();
                    s.records.get(at).put(id + "/IN",
                            new Rec(id, TransferDirection.IN, op.from(), op.qty(), true, now + offset[at],
                                    now + offset[at]));
                    s.allotment[at] += op.qty();
                    s.rogue[at] += op.qty();
                }
                default -> {
                    // kind 4: only time passes
                }
            }
        }

        private static int sourceOf(State s, String id) {
            for (int shard = 0; shard < SHARDS; shard++) {
                if (s.records.get(shard).containsKey(id + "/OUT")) {
                    return shard;
                }
            }
            throw new IllegalStateException("no OUT record of " + id);
        }

        /**
         * Shard {@code shard}'s ListLevels snapshot taken just after step {@code at}: its levels,
         * its PENDING records and those created or completed in the window, by its own clock.
         */
        ListLevelsResponse snapshot(int shard, int at) {
            State s = states.get(at);
            long now = times.get(at) + 1 + offset[shard];
            long since = now - WINDOW;
            ListLevelsResponse.Builder b = ListLevelsResponse.newBuilder().setShardId("s" + shard)
                    .setTransfersSinceMs(since)
                    .addItems(ItemLevel.newBuilder().setTenantId(ITEM.tenant()).setItemId(ITEM.item())
                            .setBase(s.base[shard]).setAllotment(s.allotment[shard]));
            for (Rec r : s.records.get(shard).values()) {
                if (!r.done() || r.createdAt() >= since || r.doneAt() >= since) {
                    b.addTransfers(r.proto());
                }
            }
            return b.build();
        }

        /** ListTransfers by id against the shard as it is at the end, after every snapshot. */
        List<Transfer> lookup(String shardId, List<String> ids) {
            State last = states.get(states.size() - 1);
            List<Transfer> out = new ArrayList<>();
            for (Rec r : last.records.get(Integer.parseInt(shardId.substring(1))).values()) {
                if (ids.contains(r.id())) {
                    out.add(r.proto());
                }
            }
            return out;
        }
    }

    private static ItemBalance check(History h, int[] at) throws InterruptedException {
        List<ListLevelsResponse> snapshots = new ArrayList<>();
        for (int s = 0; s < SHARDS; s++) {
            snapshots.add(h.snapshot(s, at[s]));
        }
        TransferMatcher.Result r = TransferMatcher.match(snapshots, t -> true, h::lookup);
        assertThat(r.problems()).isEmpty();
        assertThat(r.balances()).hasSize(1);
        return r.balances().get(0);
    }

    /**
     * Three moments of the history (after which step each shard is read) less than half a window
     * apart, as {@link CrossShardChecker} requires: the first picked by {@code a}, the others by
     * {@code b} and {@code c} among the steps close enough to it.
     */
    private static int[] moments(History h, int a, int b, int c) {
        int first = a % h.states.size();
        List<Integer> near = new ArrayList<>();
        for (int i = 0; i < h.states.size(); i++) {
            if (Math.abs(h.times.get(i) - h.times.get(first)) < WINDOW / 2) {
                near.add(i);
            }
        }
        return new int[] {first, near.get(b % near.size()), near.get(c % near.size())};
    }

    @Property(tries = 5000)
    void shardsReadAtAnyMoments_balance(@ForAll("correct") List<Op> ops, @ForAll @IntRange(max = 1_000) int a,
            @ForAll @IntRange(max = 1_000) int b, @ForAll @IntRange(max = 1_000) int c,
            @ForAll @Size(3) List<@IntRange(min = -100_000, max = 100_000) Integer> offsets)
            throws InterruptedException {
        History h = new History(ops, offsets.stream().mapToLong(o -> 1_000_000L + o).toArray());
        int[] at = moments(h, a, b, c);
        ItemBalance balance = check(h, at);
        assertThat(balance.drift()).as("snapshots after steps %s: %s", java.util.Arrays.toString(at),
                balance.describe()).isZero();
    }

    @Property(tries = 5000)
    void aRogueCredit_driftsByItsUnits_whenItsShardsSnapshotSawIt(@ForAll("withRogues") List<Op> ops,
            @ForAll @IntRange(max = 1_000) int a, @ForAll @IntRange(max = 1_000) int b,
            @ForAll @IntRange(max = 1_000) int c,
            @ForAll @Size(3) List<@IntRange(min = -100_000, max = 100_000) Integer> offsets)
            throws InterruptedException {
        History h = new History(ops, offsets.stream().mapToLong(o -> 1_000_000L + o).toArray());
        int[] at = moments(h, a, b, c);
        long rogue = 0;
        for (int s = 0; s < SHARDS; s++) {
            rogue += h.states.get(at[s]).rogue[s];
        }
        ItemBalance balance = check(h, at);
        assertThat(balance.drift()).as("snapshots after steps %s: %s", java.util.Arrays.toString(at),
                balance.describe()).isEqualTo(rogue);
    }
}
