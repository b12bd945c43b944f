package io.lastunit.common.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ExportedCell;
import io.lastunit.api.topology.v1.ExportedMove;
import io.lastunit.api.topology.v1.ExportedTenant;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.api.topology.v1.TopologyExport;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class TopologyExportsTest {

    static ExportedCell cell(String name, String region, String... shardIds) {
        ExportedCell.Builder b = ExportedCell.newBuilder()
                .setCell(Cell.newBuilder().setName(name).addRegions(region).setCreatedAtMs(1_700_000_000_000L));
        int port = 7443;
        for (String id : shardIds) {
            b.addShards(ShardInfo.newBuilder().setShardId(id).setCell(name).setRegion(region)
                    .setAddress("10.0.0." + (port - 7442) + ":" + port++));
        }
        return b.build();
    }

    static ExportedTenant tenant(String id, String cell, int epoch, String moveId) {
        return ExportedTenant.newBuilder().setEpoch(epoch).setPlacement(TenantPlacement.newBuilder().setTenantId(id)
                .setCell(cell).setState(TenantState.ACTIVE).setMoveId(moveId)).build();
    }

    static ExportedMove move(String id, String tenant, String from, String to, MoveStep step, int version,
            int plannedEpoch, int fencedEpoch) {
        return ExportedMove.newBuilder().setVersion(version).setMove(Move.newBuilder().setMoveId(id)
                .setTenantId(tenant).setFromCell(from).setToCell(to).setStep(step).setPlannedEpoch(plannedEpoch)
                .setFencedEpoch(fencedEpoch).setMaxPauseMs(2_000)).build();
    }

    /** Two cells, three tenants (one in a running move), a running and a finished move; listed out of order. */
    static TopologyExport sample() {
        return TopologyExports.seal(TopologyExport.newBuilder()
                .addCells(cell("shared", "local", "s-2", "s-1"))
                .addCells(cell("big", "local", "big-1"))
                .addTenants(tenant("zeta", "shared", 0, ""))
                .addTenants(tenant("acme", "big", 4, ""))
                .addTenants(tenant("beta", "shared", 1, "m-beta"))
                .addMoves(move("m-beta", "beta", "shared", "big", MoveStep.COPYING, 3, 1, 0))
                .addMoves(move("m-acme", "acme", "shared", "big", MoveStep.CLEANED, 9, 1, 2))
                .build(), "/lastunit");
    }

    @Test
    void canonicalJson_isSorted_andParsesBackToTheSameDocument() {
        TopologyExport doc = sample();
        String json = TopologyExports.toJson(doc);
        assertThat(json.indexOf("\"big\"")).isLessThan(json.indexOf("\"shared\""));
        assertThat(json.indexOf("\"s-1\"")).isLessThan(json.indexOf("\"s-2\""));
        assertThat(json.indexOf("\"acme\"")).isLessThan(json.indexOf("\"zeta\""));
        assertThat(json).contains("\"epoch\": 0").contains("\"format_version\": 1").endsWith("}\n");
        TopologyExport back = TopologyExports.parse(json);
        assertThat(back).isEqualTo(doc);
        assertThat(TopologyExports.toJson(back)).isEqualTo(json);
        assertThat(TopologyExports.problems(back)).isEmpty();
    }

    @Test
    void digest_coversTheContent_notTheOrderOfLists() {
        TopologyExport doc = sample();
        List<ExportedTenant> tenants = new java.util.ArrayList<>(doc.getTenantsList());
        java.util.Collections.reverse(tenants);
        TopologyExport reordered = doc.toBuilder().clearTenants().addAllTenants(tenants).build();
        assertThat(TopologyExports.digest(reordered)).isEqualTo(doc.getDigest()).startsWith("sha256:").hasSize(71);
        TopologyExport edited = doc.toBuilder().setTenants(0, doc.getTenants(0).toBuilder().setEpoch(5)).build();
        assertThat(TopologyExports.digest(edited)).isNotEqualTo(doc.getDigest());
        assertThat(TopologyExports.problems(edited)).singleElement().asString()
                .startsWith("digest: \"" + doc.getDigest() + "\" does not match the content (" + TopologyExports.digest(edited));
    }

    @Test
    void parse_namesTheFieldThatIsWrong() {
        String json = TopologyExports.toJson(sample());
        assertRefused(json.replace("\"epoch\": 4", "\"epoch\": \"four\""), "tenants[0].epoch: \"four\": ");
        assertRefused(json.replace("\"move_id\": \"m-beta\",\n      \"tenant_id\"", "\"moveid\": \"m-beta\",\n      \"tenant_id\""),
                "moves[1].move.moveid: no such field in Move (its fields: move_id, ");
        assertRefused(json.replace("\"format_version\": 1", "\"format_version\": 2"),
                "format_version: 2; this lastunit reads version 1");
        assertRefused(json.replace("\"lastunit-topology\"", "\"something-else\""),
                "format: \"something-else\", expected \"lastunit-topology\"");
        assertRefused(json.substring(0, json.length() / 2), "not JSON: ");
        assertRefused("[1, 2]", "the document is not a JSON object");
    }

    private static void assertRefused(String json, String message) {
        assertThatThrownBy(() -> TopologyExports.parse(json)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void problems_nameEveryBrokenRule_byField() {
        assertProblem(d -> d.setTenants(0, d.getTenants(0).toBuilder().setPlacement(
                d.getTenants(0).getPlacement().toBuilder().setCell("nowhere"))),
                "tenants[0].placement.cell: \"nowhere\" is not a cell of the document");
        assertProblem(d -> d.setCells(1, d.getCells(1).toBuilder().setShards(0,
                d.getCells(1).getShards(0).toBuilder().setShardId("big-1"))),
                "cells[1].shards[0].shard_id: shard big-1 is also in cell big (shard ids are unique on the platform)");
        assertProblem(d -> d.setCells(1, d.getCells(1).toBuilder().setShards(0,
                d.getCells(1).getShards(0).toBuilder().setRegion("mars"))),
                "cells[1].shards[0].region: \"mars\" is not a region of cell shared [local]");
        assertProblem(d -> d.setCells(0, d.getCells(0).toBuilder().clearShards()),
                "cells[0].shards: cell big has none; only cell shared may be without shards");
        assertProblem(d -> d.setTenants(1, d.getTenants(1).toBuilder().setEpoch(-1)),
                "tenants[1].epoch: -1 is negative");
        assertProblem(d -> d.setTenants(1, d.getTenants(1).toBuilder().setPlacement(
                d.getTenants(1).getPlacement().toBuilder().setMoveId("m-acme"))),
                "tenants[1].placement.move_id: move m-acme moves tenant acme, not beta");
        assertProblem(d -> d.setTenants(0, d.getTenants(0).toBuilder().setPlacement(
                d.getTenants(0).getPlacement().toBuilder().setState(TenantState.MOVING))),
                "tenants[0].placement.move_id: empty, but a MOVING tenant names its move");
        assertProblem(d -> d.setMoves(0, d.getMoves(0).toBuilder().setMove(
                d.getMoves(0).getMove().toBuilder().setStep(MoveStep.MOVE_STEP_UNSPECIFIED))),
                "moves[0].move.step: MOVE_STEP_UNSPECIFIED is not a step of a move");
        assertProblem(d -> d.addTenants(d.getTenants(2)), "tenants[3].placement.tenant_id: tenant zeta appears twice");
        assertProblem(d -> d.setCells(0, d.getCells(0).toBuilder().setShards(0,
                d.getCells(0).getShards(0).toBuilder().setAddress("has space:1"))),
                "cells[0].shards[0].address: \"has space:1\" is not host:port");
    }

    /** A sample with one change, resealed, has exactly the named problem. */
    private static void assertProblem(UnaryOperator<TopologyExport.Builder> change, String problem) {
        TopologyExport doc = TopologyExports.canonical(sample());
        TopologyExport changed = change.apply(doc.toBuilder()).build();
        TopologyExport resealed = changed.toBuilder().setDigest(TopologyExports.digest(changed)).build();
        List<String> problems = TopologyExports.problems(resealed);
        assertThat(problems).as(problem).singleElement().asString().startsWith(problem);
    }
}
