package io.lastunit.common.topology;

import static io.lastunit.common.topology.TopologyExportsTest.cell;
import static io.lastunit.common.topology.TopologyExportsTest.move;
import static io.lastunit.common.topology.TopologyExportsTest.sample;
import static io.lastunit.common.topology.TopologyExportsTest.tenant;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.ExportedCell;
import io.lastunit.api.topology.v1.ExportedMove;
import io.lastunit.api.topology.v1.ExportedTenant;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.TopologyExport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class RestorePlanTest {
    private static final String ROOT = "/lastunit";
    private static final int BUDGET = RestorePlan.TRANSACTION_BYTES_MAX_DEFAULT;

    /** A namespace that does not exist yet. */
    private static RestorePlan.Image nothing() {
        return new RestorePlan.Image(TopologyExport.getDefaultInstance(), Map.of(), Map.of(), Set.of());
    }

    /** A namespace holding {@code doc} exactly, as a read would report it. */
    private static RestorePlan.Image holding(TopologyExport doc) {
        Map<String, Integer> v = new HashMap<>();
        TopologyPaths p = new TopologyPaths(ROOT);
        v.put(ROOT, 0);
        v.put(p.cells(), 3);
        v.put(p.tenants(), 0);
        v.put(p.moves(), 0);
        for (ExportedCell c : doc.getCellsList()) {
            v.put(p.cell(c.getCell().getName()), 0);
            if (c.getShardsCount() > 0) {
                v.put(p.shards(c.getCell().getName()), 0);
                c.getShardsList().forEach(s -> v.put(p.shard(c.getCell().getName(), s.getShardId()), 0));
            }
        }
        doc.getTenantsList().forEach(t -> v.put(p.tenant(t.getPlacement().getTenantId()), t.getEpoch()));
        doc.getMovesList().forEach(m -> v.put(p.move(m.getMove().getMoveId()), m.getVersion()));
        return new RestorePlan.Image(doc, v, Map.of(), Set.of());
    }

    private static Map<String, Integer> epochs(TopologyExport t) {
        return t.getTenantsList().stream().collect(Collectors.toMap(e -> e.getPlacement().getTenantId(),
                ExportedTenant::getEpoch));
    }

    private static ExportedMove moveOf(TopologyExport t, String id) {
        return t.getMovesList().stream().filter(m -> m.getMove().getMoveId().equals(id)).findFirst().orElseThrow();
    }

    @Test
    void intoNothing_withoutBump_oneTransaction_createsEveryZnode_atTheDocumentsVersions() {
        TopologyExport doc = sample();
        RestorePlan plan = RestorePlan.of(ROOT, nothing(), doc, 0, BUDGET);
        assertThat(plan.transactions()).hasSize(1);
        assertThat(plan.overwrites()).isFalse();
        assertThat(plan.result()).isEqualTo(TopologyExports.content(doc));
        List<RestorePlan.Op> ops = plan.transactions().get(0).ops();
        assertThat(ops.subList(0, 4)).extracting(RestorePlan.Op::path)
                .containsExactly(ROOT, ROOT + "/cells", ROOT + "/tenants", ROOT + "/moves");
        // acme at epoch 4: a create and four writes, each at the version before it, the last with the value
        List<RestorePlan.Op> acme = ops.stream().filter(o -> o.path().equals(ROOT + "/tenants/acme")).toList();
        assertThat(acme).hasSize(5);
        assertThat(acme.get(0)).isInstanceOf(RestorePlan.Create.class);
        assertThat(acme.subList(1, 5)).extracting(o -> ((RestorePlan.SetData) o).version()).containsExactly(0, 1, 2, 3);
        assertThat(((RestorePlan.SetData) acme.get(4)).data()).isEqualTo(TopologyCodec.encode(doc.getTenants(0).getPlacement()));
        // zeta at epoch 0: one create with the value
        assertThat(ops.stream().filter(o -> o.path().equals(ROOT + "/tenants/zeta")))
                .singleElement().isInstanceOf(RestorePlan.Create.class);
    }

    @Test
    void bump_raisesEveryEpochAndMoveVersion_andShiftsTheRunningMovesEpochsWithItsTenant() {
        TopologyExport doc = sample();
        RestorePlan plan = RestorePlan.of(ROOT, nothing(), doc, 3, BUDGET);
        assertThat(epochs(plan.result())).containsExactlyInAnyOrderEntriesOf(Map.of("acme", 7, "beta", 4, "zeta", 3));
        ExportedMove running = moveOf(plan.result(), "m-beta");
        assertThat(running.getVersion()).isEqualTo(6);
        assertThat(running.getMove().getPlannedEpoch()).isEqualTo(4); // beta's epoch, as at the document's 1
        assertThat(running.getMove().getFencedEpoch()).isZero(); // not fenced yet: stays unset
        ExportedMove finished = moveOf(plan.result(), "m-acme");
        assertThat(finished.getVersion()).isEqualTo(12);
        assertThat(finished.getMove()).isEqualTo(moveOf(TopologyExports.content(doc), "m-acme").getMove());
        assertThat(TopologyExports.problems(TopologyExports.seal(plan.result(), ROOT))).isEmpty();
    }

    @Test
    void overAHigherEpoch_goesPastIt_andAnIdenticalNamespaceIsANoop() {
        TopologyExport doc = sample();
        assertThat(RestorePlan.of(ROOT, holding(doc), doc, 5, BUDGET).isNoop()).isTrue();

        // Here acme is at epoch 10, ahead of the document's 4, in another cell.
        TopologyExport here = TopologyExports.content(doc).toBuilder()
                .setTenants(0, tenant("acme", "shared", 10, "")).build();
        RestorePlan plan = RestorePlan.of(ROOT, holding(here), doc, 0, BUDGET);
        assertThat(plan.overwrites()).isTrue();
        assertThat(plan.differences()).containsExactly(
                "tenant acme: here in shared ACTIVE at epoch 10; document in big ACTIVE at epoch 4");
        assertThat(epochs(plan.result())).containsEntry("acme", 11);
        assertThat(plan.transactions()).singleElement().extracting(t -> t.ops().size()).isEqualTo(1);
        RestorePlan.SetData write = (RestorePlan.SetData) plan.transactions().get(0).ops().get(0);
        assertThat(write.version()).isEqualTo(10);
    }

    @Test
    void whatTheDocumentDoesNotName_isKept_andAReplacedCellIsDeletedThenCreatedInTheSameTransaction() {
        TopologyExport doc = sample();
        TopologyExport here = TopologyExport.newBuilder()
                .addCells(cell("big", "local", "big-1", "big-2")) // differs: one shard more
                .addCells(cell("other", "local", "o-1"))
                .addTenants(tenant("old", "other", 6, ""))
                .addMoves(move("m-old", "old", "big", "other", MoveStep.CLEANED, 8, 2, 3)).build();
        RestorePlan plan = RestorePlan.of(ROOT, holding(here), doc, 1, BUDGET);
        assertThat(plan.kept()).containsExactly("cell other regions [local], shards [o-1=local=10.0.0.1:7443]",
                "tenant old in other ACTIVE at epoch 6", "move m-old CLEANED at version 8");
        assertThat(plan.result().getCellsList()).extracting(c -> c.getCell().getName())
                .containsExactly("big", "other", "shared");
        List<String> writes = plan.transactions().get(0).ops().stream()
                .map(o -> o.getClass().getSimpleName() + " " + o.path()).toList();
        assertThat(writes).containsSubsequence("Delete /lastunit/cells/big/shards/big-1",
                "Delete /lastunit/cells/big/shards/big-2", "Delete /lastunit/cells/big/shards",
                "Delete /lastunit/cells/big", "SetData /lastunit/cells", "Create /lastunit/cells/big",
                "Create /lastunit/cells/big/shards", "Create /lastunit/cells/big/shards/big-1");
        assertThat(writes).noneMatch(w -> w.contains("/cells/other") || w.contains("/tenants/old")
                || w.contains("/moves/m-old"));
    }

    @Test
    void aKeptCellSharingAShardIdWithTheDocument_isRefused() {
        TopologyExport here = TopologyExport.newBuilder().addCells(cell("other", "local", "big-1")).build();
        assertThatThrownBy(() -> RestorePlan.of(ROOT, holding(here), sample(), 1, BUDGET))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the cells kept here and the document's share shard ids: shard big-1 would be in cells"
                        + " big and other");
    }

    /** Many tenants with high epochs: more than one transaction of the bound. */
    private static TopologyExport large(int tenants, int epoch) {
        TopologyExport.Builder b = TopologyExport.newBuilder().addCells(cell("shared", "local", "s-1"))
                .addCells(cell("big", "local", "big-1", "big-2"));
        for (int i = 0; i < tenants; i++) {
            b.addTenants(tenant(String.format("tenant-%05d", i), i % 2 == 0 ? "big" : "shared", epoch, ""));
        }
        return TopologyExports.seal(b.build(), ROOT);
    }

    @Test
    void tooLargeForOneTransaction_cellsGoFirstAndComeBackLast_eachTransactionWithinTheBound() {
        TopologyExport doc = large(400, 20);
        RestorePlan.Image here = holding(TopologyExport.newBuilder().addCells(cell("shared", "local", "s-1")).build());
        int budget = 64 * 1024;
        RestorePlan plan = RestorePlan.of(ROOT, here, doc, 1, budget);
        List<RestorePlan.Transaction> txns = plan.transactions();
        assertThat(txns.size()).isGreaterThan(3);
        assertThat(txns).allSatisfy(t -> assertThat(t.bytes()).isLessThanOrEqualTo(budget));
        assertThat(txns.get(0).ops()).extracting(o -> o.getClass().getSimpleName() + " " + o.path()).containsExactly(
                "Delete /lastunit/cells/shared/shards/s-1", "Delete /lastunit/cells/shared/shards",
                "Delete /lastunit/cells/shared", "SetData /lastunit/cells");
        for (RestorePlan.Transaction t : txns.subList(1, txns.size() - 1)) {
            assertThat(t.ops()).allMatch(o -> o.path().startsWith(ROOT + "/tenants/"));
        }
        RestorePlan.Transaction last = txns.get(txns.size() - 1);
        assertThat(last.ops()).allMatch(o -> o.path().startsWith(ROOT + "/cells"));
        assertThat(((RestorePlan.SetData) last.ops().get(0)).version()).isEqualTo(4); // 3, and 1 for the first
        // every tenant's writes stay in one transaction
        Map<String, Integer> txnOf = new HashMap<>();
        for (int i = 0; i < txns.size(); i++) {
            for (RestorePlan.Op o : txns.get(i).ops()) {
                Integer before = txnOf.putIfAbsent(o.path(), i);
                if (o.path().contains("/tenants/")) {
                    assertThat(before == null || before == i).as(o.path()).isTrue();
                }
            }
        }
        assertThat(plan.changes()).first().asString().startsWith("in " + txns.size() + " transactions");
    }

    @Test
    void aSingleZnodeLargerThanTheBound_isRefused_withTheBoundExplained() {
        TopologyExport doc = large(1, RestorePlan.EPOCH_BUMP_MAX);
        List<TopologyExport> many = new ArrayList<>();
        many.add(doc);
        assertThatThrownBy(() -> RestorePlan.of(ROOT, nothing(), many.get(0), RestorePlan.EPOCH_BUMP_MAX,
                RestorePlan.TRANSACTION_BYTES_MIN))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("/lastunit/tenants/tenant-00000 alone (2001 writes")
                .hasMessageContaining("raise jute.maxbuffer on every ZooKeeper server and this client");
    }

    @Test
    void estimates_coverWhatZooKeeperCounts() {
        // A setData of a 100-byte value at a 30-byte path: ZooKeeper's request record is 4+30 + 4+100 + 4
        // bytes behind a 9-byte op header; its reply is the header and a 68-byte Stat.
        String path = "/lastunit/tenants/" + "t".repeat(12);
        RestorePlan.SetData s = new RestorePlan.SetData(path, new byte[100], 3);
        assertThat(s.requestBytes()).isGreaterThanOrEqualTo(9 + 4 + 30 + 4 + 100 + 4);
        assertThat(s.replyBytes()).isGreaterThanOrEqualTo(9 + 68);
        RestorePlan.Create c = new RestorePlan.Create(path, new byte[100]);
        assertThat(c.requestBytes()).isGreaterThanOrEqualTo(9 + 4 + 30 + 4 + 100 + 27 + 4);
    }

    @Test
    void outOfRangeArguments_areRefused() {
        assertThatThrownBy(() -> RestorePlan.of(ROOT, nothing(), sample(), -1, BUDGET))
                .hasMessage("epochBump=-1 is outside [0, 1000]");
        assertThatThrownBy(() -> RestorePlan.of(ROOT, nothing(), sample(), 1, 1_000))
                .hasMessage("transactionBytesMax=1000 is outside [16384, 67108864]");
    }
}
