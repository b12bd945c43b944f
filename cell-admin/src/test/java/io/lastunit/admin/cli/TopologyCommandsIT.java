package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ExportedCell;
import io.lastunit.api.topology.v1.ExportedTenant;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.api.topology.v1.TopologyExport;
import io.lastunit.common.topology.Curators;
import io.lastunit.common.topology.RestorePlan;
import io.lastunit.common.topology.TopologyBackup;
import io.lastunit.common.topology.TopologyExports;
import io.lastunit.common.topology.TopologyStore;
import io.lastunit.testkit.TestTimeouts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code admin topology export} and {@code import} against a real ZooKeeper: a backup survives a
 * wipe byte for byte, the default import raises every fencing version so writers that read before
 * it are refused, bad documents and non-empty namespaces are refused with nothing written, a mover's
 * lease blocks the import, and an import larger than one transaction is cut into several.
 */
class TopologyCommandsIT {
    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingServer server;
    private static CuratorFramework client;

    @TempDir
    Path dir;
    private String root;
    private TopologyStore store;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1"), true);
        client = Curators.newClient(server.getConnectString(), Duration.ofSeconds(15));
        client.start();
        assertThat(client.blockUntilConnected((int) TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(),
                TimeUnit.MILLISECONDS)).isTrue();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void newRoot() {
        root = "/topology-it-" + ROOTS.incrementAndGet();
        store = new TopologyStore(client, root, InstantSource.fixed(java.time.Instant.ofEpochMilli(1_764_000_000_000L)));
    }

    private static ShardInfo shard(String id, String cell, int port) {
        return ShardInfo.newBuilder().setShardId(id).setCell(cell).setRegion("local").setAddress("127.0.0.1:" + port)
                .build();
    }

    private static Move planned(String id, String tenant, int plannedEpoch) {
        return Move.newBuilder().setMoveId(id).setTenantId(tenant).setFromCell("shared").setToCell("big")
                .setStep(MoveStep.PLANNED).setMaxPauseMs(2_000).setCreatedAtMs(1).setUpdatedAtMs(1)
                .setPlannedEpoch(plannedEpoch).setOwner("test").build();
    }

    /**
     * Cells shared (2 shards) and big (1); acme in big at epoch 2; beta in shared with move m1
     * copying it (m1 at version 1); a finished move m0; and the ephemeral znodes a running
     * platform has: a live shard and a balancer's latch.
     */
    private void platformTopology() throws Exception {
        store.createCell("shared", List.of("local"), List.of(shard("s-1", "shared", 7001), shard("s-2", "shared", 7002)));
        store.createCell("big", List.of("local"), List.of(shard("big-1", "big", 7003)));
        store.assignTenant("acme", "big", -1);
        store.assignTenant("acme", "shared", 0);
        store.assignTenant("acme", "big", 1);
        store.startMove(planned("m1", "beta", 0), -1);
        store.updateMove(planned("m1", "beta", 0).toBuilder().setStep(MoveStep.COPYING).build(), 0);
        store.startMove(planned("m0", "gamma", 0), -1);
        Move done = planned("m0", "gamma", 0).toBuilder().setStep(MoveStep.ABORTED).setFinishedAtMs(2).build();
        store.updateMove(done, 0);
        store.setTenantState("gamma", TenantState.ACTIVE, "", 0);
        client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(root + "/live/s-1", "{\"shard_id\":\"s-1\",\"address\":\"127.0.0.1:7001\"}".getBytes());
        client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(root + "/balancer/leader/latch-", "127.0.0.1:7100".getBytes());
    }

    /** What ZooKeeper loses: every durable znode of the topology (the ephemeral ones stay, as after a restart). */
    private void wipe() throws Exception {
        for (String folder : List.of("cells", "tenants", "moves")) {
            if (client.checkExists().forPath(root + "/" + folder) != null) {
                client.delete().deletingChildrenIfNeeded().forPath(root + "/" + folder);
            }
        }
    }

    private CliRun admin(String... args) {
        String[] all = new String[args.length + 5];
        all[0] = "admin";
        all[1] = "--zookeeper";
        all[2] = server.getConnectString();
        all[3] = "--namespace";
        all[4] = root;
        System.arraycopy(args, 0, all, 5, args.length);
        return CliRun.of(all);
    }

    private Path export(String name) {
        Path file = dir.resolve(name);
        CliRun r = admin("topology", "export", "--out", file.toString());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("digest sha256:");
        return file;
    }

    private String exportText() {
        CliRun r = admin("topology", "export");
        assertThat(r.exitCode()).as(r.err()).isZero();
        return r.out();
    }

    @Test
    void exportWipeImportExport_withoutBump_givesTheSameBytes_andLeavesTheEphemeralsOut() throws Exception {
        platformTopology();
        Path before = export("before.json");
        String json = Files.readString(before);
        assertThat(json).contains("\"tenant_id\": \"acme\"").contains("\"epoch\": 2")
                .doesNotContain("live").doesNotContain("latch").doesNotContain("7100");
        assertThat(admin("topology", "export", "--out", dir.resolve("x.json").toString()).out())
                .contains("not exported (ephemeral): 1 live shard registration(s), 0 move lease(s)");

        wipe();
        CliRun imported = admin("topology", "import", "--in", before.toString(), "--epoch-bump", "0");
        assertThat(imported.exitCode()).as(imported.err()).isZero();
        assertThat(imported.out()).contains("1 transaction(s)").contains("transaction 1 of 1:");

        Path after = export("after.json");
        assertThat(Files.readAllBytes(after)).isEqualTo(Files.readAllBytes(before));
        assertThat(store.epoch("acme")).isEqualTo(2);
        assertThat(store.move("m1").orElseThrow().version()).isEqualTo(1);

        CliRun again = admin("topology", "import", "--in", before.toString());
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).contains("already holds").contains("nothing to write");
        assertThat(exportText()).isEqualTo(Files.readString(before));

        // After ZooKeeper was restored from a snapshot of its own: the same topology, epochs raised.
        CliRun raised = admin("topology", "import", "--in", before.toString(), "--force", "--epoch-bump", "5");
        assertThat(raised.exitCode()).as(raised.err()).isZero();
        assertThat(store.epoch("acme")).isEqualTo(7);
        assertThat(store.move("m1").orElseThrow().version()).isEqualTo(6);
        assertThat(store.move("m1").orElseThrow().value().getPlannedEpoch()).isEqualTo(5); // beta 0 -> 5
    }

    @Test
    void importWithTheDefaultBump_raisesEveryFencingVersion_soWritersThatReadBeforeAreRefused() throws Exception {
        platformTopology();
        Path backup = export("backup.json");
        int acmeBefore = store.epoch("acme");
        Move m1 = store.move("m1").orElseThrow().value();
        wipe();

        CliRun r = admin("topology", "import", "--in", backup.toString());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("epochs and move versions at max(here, document) + 1")
                .contains("the epochs moved on: export again");

        assertThat(store.epoch("acme")).isEqualTo(acmeBefore + 1);
        assertThat(store.epoch("beta")).isEqualTo(1);
        assertThat(store.move("m1").orElseThrow().version()).isEqualTo(2);
        // m1 is running and beta names it: its planned epoch moved with beta's, so its mover finds beta where it was
        assertThat(store.move("m1").orElseThrow().value().getPlannedEpoch()).isEqualTo(1);
        // the finished move keeps its epochs, only its version rises
        assertThat(store.move("m0").orElseThrow().value().getPlannedEpoch()).isZero();
        // writers holding the versions read before the loss are fenced off
        assertThatThrownBy(() -> store.assignTenant("acme", "shared", acmeBefore))
                .isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(() -> store.updateMove(m1.toBuilder().setStep(MoveStep.CATCHING_UP).build(), 1))
                .isInstanceOf(ConcurrentModificationException.class);
        TopologyExport now = TopologyExports.parse(exportText());
        assertThat(TopologyExports.problems(now)).isEmpty();

        // The same backup again: the namespace now holds another topology (later epochs) and is not overwritten.
        String held = exportText();
        CliRun refused = admin("topology", "import", "--in", backup.toString());
        assertThat(refused.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(refused.err()).startsWith("error: refused, nothing written: " + root + " at ")
                .contains("holds a different topology").contains("tenant acme: here in big ACTIVE at epoch 3;"
                        + " document in big ACTIVE at epoch 2").contains("--force writes the document over it");
        assertThat(exportText()).isEqualTo(held);

        CliRun forced = admin("topology", "import", "--in", backup.toString(), "--force");
        assertThat(forced.exitCode()).as(forced.err()).isZero();
        assertThat(store.epoch("acme")).isEqualTo(acmeBefore + 2); // max(here 3, document 2) + 1
    }

    @Test
    void aCorruptOrInvalidDocument_isRefusedNamingTheField_andNothingIsWritten() throws Exception {
        platformTopology();
        String good = Files.readString(export("good.json"));
        Map<String, UnaryOperator<String>> corruptions = Map.of(
                "digest: ", s -> s.replace("\"epoch\": 2", "\"epoch\": 7"),
                "tenants[0].placement.cell: \"nowhere\" is not a cell of the document",
                s -> reseal(s.replaceFirst("\"cell\": \"big\",\n      \"state\"", "\"cell\": \"nowhere\",\n      \"state\"")),
                "format_version: 9", s -> s.replace("\"format_version\": 1", "\"format_version\": 9"),
                "cells[0].shards[0].sharde_id: no such field in ShardInfo",
                s -> s.replaceFirst("\"shard_id\"", "\"sharde_id\""),
                "not JSON: ", s -> s.substring(0, s.length() - 5),
                "cells[1].shards[1].shard_id: shard s-1 is also in cell shared",
                s -> reseal(s.replace("\"shard_id\": \"s-2\"", "\"shard_id\": \"s-1\"")));
        String held = exportText();
        String emptyRoot = root + "-empty";
        for (Map.Entry<String, UnaryOperator<String>> c : corruptions.entrySet()) {
            Path bad = dir.resolve("bad.json");
            Files.writeString(bad, c.getValue().apply(good));
            for (String[] extra : List.of(new String[] {}, new String[] {"--force"})) {
                CliRun r = admin(concat(new String[] {"topology", "import", "--in", bad.toString()}, extra));
                assertThat(r.exitCode()).as(c.getKey() + ": " + r.err()).isEqualTo(ExitCodes.USAGE);
                assertThat(r.err()).as(c.getKey()).startsWith("error: " + bad + " is refused, nothing written: ")
                        .contains(c.getKey());
            }
            CliRun intoNothing = CliRun.of("admin", "--zookeeper", server.getConnectString(), "--namespace", emptyRoot,
                    "topology", "import", "--in", bad.toString());
            assertThat(intoNothing.exitCode()).isEqualTo(ExitCodes.USAGE);
        }
        assertThat(exportText()).isEqualTo(held);
        assertThat(client.checkExists().forPath(emptyRoot)).isNull();
    }

    /** The document with its digest recomputed, as an operator who edits it on purpose would. */
    private static String reseal(String json) {
        TopologyExport doc = TopologyExports.parse(json);
        return TopologyExports.toJson(doc.toBuilder().setDigest(TopologyExports.digest(doc)).build());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = new String[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void dryRun_printsThePlan_andWritesNothing_andAMoversLeaseBlocksTheImport() throws Exception {
        platformTopology();
        Path backup = export("backup.json");
        String otherRoot = root;
        root = root + "-restore";
        CliRun dry = admin("topology", "import", "--in", backup.toString(), "--dry-run");
        assertThat(dry.exitCode()).as(dry.err()).isZero();
        assertThat(dry.out()).contains("cell big: create, 1 shard(s)").contains("tenant acme: in big ACTIVE at epoch 3"
                + " (new; document epoch 2)").endsWith("dry run: nothing written\n");
        assertThat(client.checkExists().forPath(root)).isNull();
        java.io.InputStream stdin = System.in;
        try {
            System.setIn(new java.io.ByteArrayInputStream(Files.readAllBytes(backup)));
            CliRun piped = admin("topology", "import", "--in", "-", "--dry-run");
            assertThat(piped.exitCode()).as(piped.err()).isZero();
            assertThat(piped.out()).isEqualTo(dry.out().replace(backup.toString(), "-"));
        } finally {
            System.setIn(stdin);
        }

        root = otherRoot;
        client.create().withMode(CreateMode.EPHEMERAL).forPath(root + "/moves/m1/lease", "mover-7".getBytes());
        String held = exportText();
        CliRun r = admin("topology", "import", "--in", backup.toString(), "--force");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("error: refused, nothing written: movers hold moves under " + root
                + " m1 (mover-7); stop every mover");
        assertThat(exportText()).isEqualTo(held);
    }

    @Test
    void anImportLargerThanOneTransaction_isWrittenInSeveral_andComesOutTheSame() throws Exception {
        platformTopology();
        for (int i = 0; i < 150; i++) {
            String t = String.format("t-%03d", i);
            store.assignTenant(t, i % 2 == 0 ? "big" : "shared", -1);
            store.assignTenant(t, "big", 0);
            store.assignTenant(t, "big", 1); // epoch 2
        }
        Path before = export("before.json");
        wipe();
        CliRun r = admin("topology", "import", "--in", before.toString(), "--epoch-bump", "0",
                "--transaction-bytes-max", String.valueOf(RestorePlan.TRANSACTION_BYTES_MIN));
        assertThat(r.exitCode()).as(r.err()).isZero();
        int txns = Integer.parseInt(r.out().replaceAll("(?s).*: (\\d+) transaction\\(s\\).*", "$1"));
        assertThat(txns).isGreaterThan(3);
        assertThat(r.out()).contains("transaction " + txns + " of " + txns + ":")
                .contains("no cell exists from the first to the last");
        assertThat(Files.readAllBytes(export("after.json"))).isEqualTo(Files.readAllBytes(before));
    }

    /** A document of one cell and {@code n} tenants at epoch 30, each of 31 writes. */
    private static TopologyExport tenantsAtEpoch30(String root, int n) {
        TopologyExport.Builder b = TopologyExport.newBuilder().addCells(ExportedCell.newBuilder()
                .setCell(Cell.newBuilder().setName("shared").addRegions("local")).addShards(shard("s-1", "shared", 7001)));
        for (int i = 0; i < n; i++) {
            b.addTenants(ExportedTenant.newBuilder().setEpoch(30).setPlacement(TenantPlacement.newBuilder()
                    .setTenantId(String.format("tenant-%06d", i)).setCell("shared").setState(TenantState.ACTIVE)));
        }
        return TopologyExports.seal(b.build(), root);
    }

    /** The most tenants at epoch 30 whose import fits one transaction of {@code bytes}. */
    private static int tenantsFitting(String root, int bytes) {
        int lo = 1;
        int hi = 1_000;
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            RestorePlan p = RestorePlan.of(root, NOTHING, tenantsAtEpoch30(root, mid), 0, RestorePlan.TRANSACTION_BYTES_LIMIT);
            if (p.transactions().get(0).bytes() <= bytes) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    private static final RestorePlan.Image NOTHING =
            new RestorePlan.Image(TopologyExport.getDefaultInstance(), Map.of(), Map.of(), Set.of());

    @Test
    void theEstimate_keepsATransactionUnderWhatADefaultServerAccepts_andTheBoundIsReal() throws Exception {
        int bound = RestorePlan.TRANSACTION_BYTES_MAX_DEFAULT;
        String fits = root + "-fits";
        TopologyExport doc = tenantsAtEpoch30(fits, tenantsFitting(fits, bound));
        RestorePlan plan = RestorePlan.of(fits, NOTHING, doc, 0, bound);
        assertThat(plan.transactions()).singleElement()
                .satisfies(t -> assertThat(t.bytes()).isBetween(bound - 5_000, bound));
        new TopologyBackup(client, fits).apply(plan, line -> { });
        root = fits;
        assertThat(exportText()).isEqualTo(TopologyExports.toJson(doc));

        // A third more than ZooKeeper's default jute.maxbuffer in one transaction: the server drops it.
        String tooBig = root + "-too-big";
        TopologyExport big = tenantsAtEpoch30(tooBig, tenantsFitting(tooBig, 1_400_000));
        RestorePlan one = RestorePlan.of(tooBig, NOTHING, big, 0, 2_000_000);
        assertThat(one.transactions()).hasSize(1);
        try (CuratorFramework impatient = Curators.newClient(server.getConnectString(), Duration.ofSeconds(15),
                Duration.ofSeconds(5), new org.apache.curator.retry.RetryOneTime(100))) {
            impatient.start();
            assertThat(impatient.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> new TopologyBackup(impatient, tooBig).apply(one, line -> { }))
                    .isInstanceOf(io.lastunit.common.Failure.class)
                    .hasMessageContaining("CONNECTIONLOSS");
        }
        assertThat(client.checkExists().forPath(tooBig)).isNull();
    }
}
