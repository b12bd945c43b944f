package io.lastunit.common.invariant;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.shard.v1.ItemLevel;
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

/**
 * Any interleaving of the transfer protocol's steps (DESIGN §7) over three shards, steps
 * repeated at will, leaves the item balanced at every consistent cut; one step applied wrongly
 * (a second credit) always shows as a drift of exactly its units.
 */
class CrossShardInvariantProperties {
    private static final ItemKey ITEM = new ItemKey("t", "i");
    private static final int SHARDS = 3;

    /** kind 0: step 1 of a new transfer; 1: step 2 of one; 2: step 3 of one; 3: restock at shard 0. */
    record Op(int kind, int from, int to, int qty, int pick) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 3), Arbitraries.integers().between(0, SHARDS - 1),
                Arbitraries.integers().between(0, SHARDS - 1), Arbitraries.integers().between(1, 40),
                Arbitraries.integers().between(0, 1_000)).as(Op::new).list().ofMaxSize(60);
    }

    /** The durable state of the shards, as the protocol changes it. */
    static final class Model {
        final long[] base = {100, 60, 0};
        final long[] allotment = base.clone();
        /** transfer id → OUT record: from, to, qty, done */
        final Map<String, long[]> outs = new LinkedHashMap<>();
        final Map<String, Boolean> ins = new LinkedHashMap<>();

        void apply(Op op) {
            List<String> ids = new ArrayList<>(outs.keySet());
            switch (op.kind()) {
                case 0 -> {
                    int to = op.to() == op.from() ? (op.from() + 1) % SHARDS : op.to();
                    long k = Math.min(op.qty(), allotment[op.from()]);
                    if (k > 0) {
                        allotment[op.from()] -= k;
                        outs.put("t" + outs.size(), new long[] {op.from(), to, k, 0});
                    }
                }
                case 1 -> {
                    if (!ids.isEmpty()) {
                        String id = ids.get(op.pick() % ids.size());
                        long[] o = outs.get(id);
                        if (ins.putIfAbsent(id, true) == null) { // ON CONFLICT DO NOTHING: credit once
                            allotment[(int) o[1]] += o[2];
                        }
                    }
                }
                case 2 -> {
                    if (!ids.isEmpty()) {
                        String id = ids.get(op.pick() % ids.size());
                        if (ins.containsKey(id)) { // step 3 only after step 2
                            outs.get(id)[3] = 1;
                        }
                    }
                }
                default -> {
                    base[0] += op.qty();
                    allotment[0] += op.qty();
                }
            }
        }

        List<ItemLevel> levels() {
            List<ItemLevel> l = new ArrayList<>();
            for (int s = 0; s < SHARDS; s++) {
                l.add(ItemLevel.newBuilder().setTenantId("t").setItemId("i").setRegion("r" + s).setBase(base[s])
                        .setAllotment(allotment[s]).build());
            }
            return l;
        }

        List<PendingTransfer> pending() {
            List<PendingTransfer> p = new ArrayList<>();
            outs.forEach((id, o) -> {
                if (o[3] == 0) {
                    p.add(new PendingTransfer(id, ITEM, "s" + o[0], "s" + o[1], o[2], true, ins.containsKey(id)));
                }
            });
            return p;
        }
    }

    @Property(tries = 300)
    void everyConsistentCut_balances(@ForAll("ops") List<Op> ops) {
        Model m = new Model();
        for (Op op : ops) {
            m.apply(op);
            ItemBalance b = CrossShardInvariant.balance(ITEM, m.levels(), m.pending());
            assertThat(b.drift()).as("after %s: %s", op, b.describe()).isZero();
        }
    }

    @Property(tries = 200)
    void aSecondCredit_driftsByItsUnits(@ForAll("ops") List<Op> ops) {
        Model m = new Model();
        ops.forEach(m::apply);
        String credited = m.ins.keySet().stream().findFirst().orElse(null);
        if (credited == null) {
            return;
        }
        long[] o = m.outs.get(credited);
        m.allotment[(int) o[1]] += o[2]; // a credit the IN record did not guard
        assertThat(CrossShardInvariant.balance(ITEM, m.levels(), m.pending()).drift()).isEqualTo(o[2]);
    }
}
