package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Option parsing and validation of every command: bad input is exit code 2 with one clear line, no I/O. */
class LastunitCliTest {

    private static void assertUsageError(CliRun r, String... fragments) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("error: ").doesNotContain("Exception").doesNotContain("\tat ");
        for (String f : fragments) {
            assertThat(r.err()).contains(f);
        }
    }

    @Test
    void help_listsEveryCommand_theLauncherDispatchedOnesToo_exit0() throws Exception {
        CliRun r = CliRun.of("--help");
        assertThat(r.exitCode()).isZero();
        List<String> commands = new ArrayList<>(List.of("up", "demo", "admin"));
        commands.addAll(launcherCommands());
        assertThat(commands).contains("serve", "router", "balancer", "bench");
        for (String c : commands) {
            assertThat(r.out()).as(c).containsPattern("(?m)^ +" + c + " ");
        }
        assertThat(r.out()).contains("Exit codes", "130", "143", "docs/operations.md");
    }

    /** The commands the launcher script sends to another jar: its {@code case} arms. */
    private static List<String> launcherCommands() throws Exception {
        Path script = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().getParent().resolve("lastunit");
        List<String> arms = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^  ([a-z]+)\\)$").matcher(Files.readString(script));
        while (m.find()) {
            arms.add(m.group(1));
        }
        return arms;
    }

    @ParameterizedTest
    @CsvSource({"up,--unsafe-no-fsync", "demo,--unsafe-no-fsync", "admin,--zookeeper"})
    void commandHelp_printsUsage_exit0_withoutStartingAnything(String command, String option) {
        for (String flag : List.of("--help", "-h")) {
            CliRun r = CliRun.of(command, flag);
            assertThat(r.exitCode()).isZero();
            assertThat(r.out()).startsWith("Usage: lastunit " + command).contains(option);
            assertThat(r.err()).isEmpty();
        }
    }

    @Test
    void unsafeNoFsync_withAJdbcUrl_isRefused() {
        assertUsageError(CliRun.of("up", "--unsafe-no-fsync", "--jdbc-url", "jdbc:postgresql://127.0.0.1:5432/postgres"),
                "--unsafe-no-fsync is for the embedded PostgreSQL");
        assertUsageError(CliRun.of("demo", "--unsafe-no-fsync", "--jdbc-url", "jdbc:postgresql://127.0.0.1:5432/postgres"),
                "--unsafe-no-fsync is for the embedded PostgreSQL");
    }

    @Test
    void noCommand_isAUsageError() {
        assertUsageError(CliRun.of(), "a command is required", "lastunit --help");
    }

    @Test
    void unknownCommand_suggestsAnother() {
        CliRun r = CliRun.of("deom");
        assertThat(r.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("deom").contains("Did you mean: lastunit demo?");
    }

    @Test
    void adminAndItsGroups_needACommand() {
        assertUsageError(CliRun.of("admin"), "needs a command: cells, tenants, moves, check, topology, serve");
        assertUsageError(CliRun.of("admin", "cells"), "needs a command: list, create");
        assertUsageError(CliRun.of("admin", "tenants"), "needs a command: assign, move, show");
        assertUsageError(CliRun.of("admin", "moves"), "needs a command: list, show, abort, resume");
        assertUsageError(CliRun.of("admin", "topology"), "needs a command: export, import");
    }

    @Test
    void topologyImport_badOptions_areRefusedBeforeConnecting() {
        // port 1: nothing listens there, and nothing is asked of it
        String[] zk = {"admin", "--zookeeper", "127.0.0.1:1", "topology", "import"};
        assertUsageError(CliRun.of(zk), "Missing required option: '--in=FILE'");
        assertUsageError(CliRun.of(append(zk, "--in", "x.json", "--epoch-bump", "-1")), "--epoch-bump -1 is outside 0..1000");
        assertUsageError(CliRun.of(append(zk, "--in", "x.json", "--transaction-bytes-max", "100")),
                "--transaction-bytes-max 100 is outside 16384..67108864");
        assertUsageError(CliRun.of(append(zk, "--in", "no-such-file.json")), "--in no-such-file.json: no such file");
    }

    @Test
    void zookeeperTls_filesGoTogether_andMustBeReadable_beforeConnecting() {
        String[] zk = {"admin", "--zookeeper", "127.0.0.1:1"};
        assertUsageError(CliRun.of(append(zk, "--zookeeper-tls-cert", "c.pem", "cells", "list")),
                "missing: --zookeeper-tls-key, --zookeeper-tls-ca");
        assertUsageError(CliRun.of(append(zk, "--zookeeper-tls-cert", "no-c.pem", "--zookeeper-tls-key", "no-k.pem",
                "--zookeeper-tls-ca", "no-ca.pem", "cells", "list")), "--zookeeper-tls-*: ", "cannot read no-c.pem");
    }

    private static String[] append(String[] a, String... b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "nohost                | is not HOST:PORT",
            "127.0.0.1:0           | is not HOST:PORT",
            "127.0.0.1:2181,b      | 'b' is not HOST:PORT",
            "'a b:2181'            | is not a connect string"})
    void admin_badZooKeeper_isRefusedBeforeConnecting(String zk, String message) {
        assertUsageError(CliRun.of("admin", "--zookeeper", zk, "cells", "list"), message);
    }

    @ParameterizedTest
    @CsvSource({"lastunit", "/lastunit/", "/", "/a//b", "'/a b'"})
    void admin_badNamespace_isRefusedBeforeConnecting(String ns) {
        assertUsageError(CliRun.of("admin", "--namespace", ns, "check"), "--namespace");
    }

    @Test
    void cellsCreate_badShardSpec_namesTheValue() {
        assertUsageError(CliRun.of("admin", "cells", "create", "big", "--region", "eu", "--shard", "big-1=eu"),
                "--shard", "'big-1=eu' is not ID=REGION=HOST:PORT");
        assertUsageError(CliRun.of("admin", "cells", "create", "big", "--region", "eu", "--shard", "big-1=eu=h:99999"),
                "port 99999 is outside [1, 65535]");
    }

    @Test
    void cellsCreate_requiresRegionAndShard() {
        assertUsageError(CliRun.of("admin", "cells", "create", "big", "--shard", "b1=eu=h:1"), "--region");
        assertUsageError(CliRun.of("admin", "cells", "create", "big", "--region", "eu"), "--shard");
        assertUsageError(CliRun.of("admin", "cells", "create", "--region", "eu", "--shard", "b1=eu=h:1"), "NAME");
    }

    @Test
    void cellsCreate_inconsistentShards_everyProblemNamed() {
        CliRun r = CliRun.of("admin", "cells", "create", "big", "--region", "eu", "--region", "us",
                "--shard", "b1=eu=h:1", "--shard", "b1=ap=h:2", "--shard", "b3=eu=h:1");
        assertUsageError(r, "--shard id b1 is given twice", "region 'ap', which is not a --region",
                "--region us has no --shard", "address h:1 is given twice");
    }

    @Test
    void cellsCreate_badCellNameOrRegion() {
        assertUsageError(CliRun.of("admin", "cells", "create", "a/b", "--region", "eu", "--shard", "b1=eu=h:1"),
                "cell name 'a/b'");
        assertUsageError(CliRun.of("admin", "cells", "create", "big", "--region", "eu", "--region", "eu",
                "--shard", "b1=eu=h:1"), "--region eu is given twice");
    }

    @Test
    void tenants_badNames_areRefusedBeforeConnecting() {
        assertUsageError(CliRun.of("admin", "tenants", "assign", "a/b", "big"), "TENANT 'a/b'");
        assertUsageError(CliRun.of("admin", "tenants", "assign", "acme", "x".repeat(65)), "CELL");
        assertUsageError(CliRun.of("admin", "tenants", "assign", "acme"), "CELL");
        assertUsageError(CliRun.of("admin", "tenants", "show", "a b"), "TENANT 'a b'");
    }

    @Test
    void check_itemNeedsTenant_andTimeoutIsBounded() {
        assertUsageError(CliRun.of("admin", "check", "--item", "sku-1"), "--item needs --tenant");
        assertUsageError(CliRun.of("admin", "check", "--timeout", "0"), "--timeout 0 is outside [1, 3600]");
        assertUsageError(CliRun.of("admin", "check", "--tenant", "a/b"), "--tenant 'a/b'");
        assertUsageError(CliRun.of("admin", "check", "--timeout", "soon"), "--timeout");
    }

    @Test
    void demo_badNumbers_everyProblemNamed() {
        assertUsageError(CliRun.of("demo", "--units", "-1", "--buyers", "0", "--concurrency", "0"),
                "--units -1 is negative", "--buyers 0 must be at least 1", "--concurrency 0 is outside [1, 10000]");
        assertUsageError(CliRun.of("demo", "--items", "2", "--tenants", "3"), "--items 2 is fewer than --tenants 3");
        assertUsageError(CliRun.of("demo", "--tenants", "0"), "--tenants 0 is outside [1, 100]");
        assertUsageError(CliRun.of("demo", "--units", "3000000000", "--items", "1", "--tenants", "1"),
                "more than 1000000000 per item");
        assertUsageError(CliRun.of("demo", "--buyers", "many"), "--buyers", "many");
    }

    @Test
    void demoAndUp_refuseANonPostgresJdbcUrl() {
        assertUsageError(CliRun.of("demo", "--jdbc-url", "jdbc:mysql://h/db"), "--jdbc-url", "not a PostgreSQL JDBC URL");
        assertUsageError(CliRun.of("up", "--jdbc-url", "postgres://h/db"), "--jdbc-url");
    }

    @Test
    void up_badOptions_everyProblemNamed() {
        assertUsageError(CliRun.of("up", "--shards", "0", "--router-port", "70000", "--zookeeper-port", "-1"),
                "--shards 0 is outside [1, 32]", "--router-port 70000 is outside [0, 65535]",
                "--zookeeper-port -1 is outside [0, 65535]");
        assertUsageError(CliRun.of("up", "--dedicated-shards", "3"), "--dedicated-shards needs --dedicated-cell");
        assertUsageError(CliRun.of("up", "--dedicated-cell", "shared"), "cannot be 'shared'");
        assertUsageError(CliRun.of("up", "--region", "eu", "--region", "eu"), "repeats a region");
        assertUsageError(CliRun.of("up", "--shards", "20", "--dedicated-cell", "big", "--dedicated-shards", "20"),
                "40 shard nodes in all");
        assertUsageError(CliRun.of("up", "--zookeeper-port", "7400"), "both 7400");
        assertUsageError(CliRun.of("up", "--prometheus-port", "9091"), "--prometheus-port needs --prometheus");
        assertUsageError(CliRun.of("up", "--prometheus", "--prometheus-port", "70000"),
                "--prometheus-port 70000 is outside [0, 65535]");
        assertUsageError(CliRun.of("up", "--prometheus", "--prometheus-port", "7400"),
                "--prometheus-port 7400 is also the router's or ZooKeeper's port");
    }
}
