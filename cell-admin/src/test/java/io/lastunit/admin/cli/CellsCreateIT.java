package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code admin cells create} against a real ZooKeeper (curator-test {@link TestingServer}): a cell
 * that exists is refused, and with {@code --exists-ok} it is success when it exists exactly as asked
 * (what the Kubernetes bootstrap Job runs on every rollout) and still refused, changing nothing,
 * when it exists otherwise.
 */
class CellsCreateIT {
    private static final AtomicInteger ROOTS = new AtomicInteger();
    private static TestingServer zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        zookeeper = new TestingServer(spec, true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    private static CliRun admin(String namespace, String... args) {
        String[] all = new String[args.length + 5];
        all[0] = "admin";
        all[1] = "--zookeeper";
        all[2] = zookeeper.getConnectString();
        all[3] = "--namespace";
        all[4] = namespace;
        System.arraycopy(args, 0, all, 5, args.length);
        return CliRun.of(all);
    }

    private static String newNamespace() {
        return "/cells-it" + ROOTS.incrementAndGet();
    }

    private static final String[] SHARED = {"cells", "create", "shared", "--region", "eu",
            "--shard", "s-0=eu=lastunit-shard-0.lastunit-shard:7443",
            "--shard", "s-1=eu=lastunit-shard-1.lastunit-shard:7443"};

    private static String[] with(String[] base, String... more) {
        String[] all = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    @Test
    void createTwice_withoutExistsOk_isRefused() {
        String ns = newNamespace();
        assertThat(admin(ns, SHARED).exitCode()).isEqualTo(ExitCodes.OK);

        CliRun again = admin(ns, SHARED);

        assertThat(again.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(again.err()).contains("cell shared exists");
    }

    @Test
    void existsOk_createsACellThatDoesNotExist_thenSucceedsWithoutWritingWhenRunAgain() {
        String ns = newNamespace();

        CliRun first = admin(ns, with(SHARED, "--exists-ok"));
        CliRun second = admin(ns, with(SHARED, "--exists-ok"));

        assertThat(first.exitCode()).as(first.err()).isEqualTo(ExitCodes.OK);
        assertThat(first.out()).contains("created cell shared");
        assertThat(second.exitCode()).as(second.err()).isEqualTo(ExitCodes.OK);
        assertThat(second.out()).contains("cell shared exists with these regions and shards: nothing changed");
        CliRun list = admin(ns, "cells", "list");
        assertThat(list.out()).contains("s-0", "s-1", "lastunit-shard-1.lastunit-shard:7443");
    }

    @Test
    void existsOk_aCellWithOtherShards_isRefusedNamingTheDifference_andNothingChanges() {
        String ns = newNamespace();
        assertThat(admin(ns, SHARED).exitCode()).isEqualTo(ExitCodes.OK);
        String before = admin(ns, "cells", "list").out();

        CliRun other = admin(ns, "cells", "create", "shared", "--region", "eu",
                "--shard", "s-0=eu=lastunit-shard-0.lastunit-shard:7443",
                "--shard", "s-1=eu=lastunit-shard-1.lastunit-shard:7443",
                "--shard", "s-2=eu=lastunit-shard-2.lastunit-shard:7443", "--exists-ok");
        CliRun moved = admin(ns, "cells", "create", "shared", "--region", "eu",
                "--shard", "s-0=eu=lastunit-shard-0.lastunit-shard:7443",
                "--shard", "s-1=eu=elsewhere:7443", "--exists-ok");

        assertThat(other.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(other.err()).contains("cell shared exists with shards", "s-2=eu=lastunit-shard-2.lastunit-shard:7443",
                "a cell's shards never change");
        assertThat(moved.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(moved.err()).contains("s-1=eu=lastunit-shard-1.lastunit-shard:7443", "s-1=eu=elsewhere:7443");
        assertThat(admin(ns, "cells", "list").out()).isEqualTo(before);
    }
}
