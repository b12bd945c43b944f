package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.Limits;
import io.lastunit.common.invariant.CrossShardChecker;
import io.lastunit.common.invariant.CrossShardReport;
import io.lastunit.common.invariant.DriftTracker;
import io.lastunit.common.invariant.ItemBalance;
import io.lastunit.common.topology.Topology;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin check}: the invariant check (CheckInvariants) on every shard of every
 * cell, asked directly on the addresses in the topology, then the item invariant across shards
 * (DESIGN §1: Σ allotment + transfers in flight = total), taken {@code --confirmations} times
 * {@code --pause-ms} apart: a cut across databases is not atomic, so an item counts as drifting
 * only when it drifts in every one of them. Exit 0 when every shard answered with no drift, 1 on
 * any drift, 3 when no drift was found but some shard could not be asked (the check is
 * incomplete; the lines say which).
 */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = {"Check every invariant on every shard of every cell.",
                "Exit code: 0 no drift, 1 a drift, 3 a shard could not be reached (and no drift elsewhere)."})
public final class CheckCommand implements Callable<Integer> {
    static final int ITEM_ID_LENGTH_MAX = 128;

    @Spec
    CommandSpec spec;

    @ParentCommand
    AdminCommand admin;

    @Option(names = "--tenant", paramLabel = "TENANT", description = "Check only this tenant's stock.")
    String tenant = "";

    @Option(names = "--item", paramLabel = "ITEM", description = "Check only this item (needs --tenant).")
    String item = "";

    @Option(names = "--timeout", paramLabel = "SECONDS",
            description = "How long each shard may take (default ${DEFAULT-VALUE}; a full check reads every hold).")
    int timeoutSeconds = 60;

    @Option(names = "--confirmations", paramLabel = "N",
            description = "Cross-shard checks an item must drift in, in a row, to count as drifting (default ${DEFAULT-VALUE}).")
    int confirmations = 2;

    @Option(names = "--pause-ms", paramLabel = "MS",
            description = "Pause between two cross-shard checks (default ${DEFAULT-VALUE}).")
    long pauseMs = 1_000;

    @Override
    public Integer call() throws InterruptedException {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        try (ZooKeeperSession zk = admin.connect(); ShardProbe probe = admin.probe()) {
            Topology t = zk.snapshot();
            List<ShardInfo> shards = new ArrayList<>();
            for (Cell c : t.cells()) {
                shards.addAll(t.shards(c.getName()));
            }
            if (shards.isEmpty()) {
                out.println("no shards under " + zk.namespace() + " at " + zk.connect() + ": nothing to check");
                out.flush();
                return ExitCodes.OK;
            }
            InvariantSweep sweep = InvariantSweep.run(probe, shards, tenant, item, Duration.ofSeconds(timeoutSeconds));
            sweep.print(out, "");
            out.println();
            String scope = tenant.isEmpty() ? "" : " (tenant " + tenant + (item.isEmpty() ? "" : ", item " + item) + ")";
            int unreachable = sweep.unreachable().size();
            CrossShardResult cross = crossShard(t, probe, out);
            if (cross.drifts() > 0) {
                out.printf("check: DRIFT - %d item%s drift across shards in %d checks in a row%s%n", cross.drifts(),
                        cross.drifts() == 1 ? "" : "s", confirmations, scope);
                out.flush();
                return ExitCodes.FAILED;
            }
            if (sweep.driftCount() > 0) {
                out.printf("check: DRIFT - %d drift%s%s on %d shard%s%s%n", sweep.driftCount(),
                        sweep.driftCount() == 1 ? "" : "s", scope, sweep.shards(), sweep.shards() == 1 ? "" : "s",
                        unreachable == 0 ? "" : "; " + unreachable + " unreachable");
                out.flush();
                return ExitCodes.FAILED;
            }
            if (unreachable > 0 || cross.incomplete()) {
                out.printf("check: INCOMPLETE - %d of %d shards unreachable%s; no drift on the others%n", unreachable,
                        sweep.shards(), scope);
                out.flush();
                return ExitCodes.UNREACHABLE;
            }
            out.printf("check: OK - %d shard%s, %,d items, %,d buckets, %,d holds, %,d items balanced across shards%s%n",
                    sweep.shards(), sweep.shards() == 1 ? "" : "s", sweep.items(), sweep.buckets(), sweep.holds(),
                    cross.items(), scope);
            out.flush();
            return ExitCodes.OK;
        }
    }

    private record CrossShardResult(int drifts, boolean incomplete, int items) {
    }

    /** The cross-shard item invariant, {@code confirmations} times; prints persistent drifts and problems. */
    private CrossShardResult crossShard(Topology t, ShardProbe probe, PrintWriter out) throws InterruptedException {
        CrossShardChecker checker = new CrossShardChecker(probe::channel, Duration.ofSeconds(timeoutSeconds));
        DriftTracker tracker = new DriftTracker(confirmations);
        List<DriftTracker.PersistentDrift> persistent = List.of();
        CrossShardReport last = null;
        for (int i = 0; i < confirmations; i++) {
            if (i > 0) {
                Thread.sleep(pauseMs);
            }
            last = checker.check(t);
            List<ItemBalance> scoped = last.balances().stream().filter(b -> (tenant.isEmpty()
                    || b.item().tenant().equals(tenant)) && (item.isEmpty() || b.item().item().equals(item))).toList();
            persistent = tracker.observe(scoped);
            if (scoped.stream().allMatch(ItemBalance::ok) && last.problems().isEmpty()) {
                break; // balanced now: no drift can persist through every check
            }
        }
        for (DriftTracker.PersistentDrift d : persistent) {
            out.println("cross-shard drift: " + d.balance().describe() + " (in " + d.checks() + " checks in a row)");
        }
        for (String p : last.problems()) {
            out.println("cross-shard check incomplete: " + p);
        }
        return new CrossShardResult(persistent.size(), !last.problems().isEmpty(), last.balances().size());
    }

    void validate() {
        if (confirmations < 1 || confirmations > DriftTracker.CONSECUTIVE_MAX) {
            throw new ParameterException(spec.commandLine(), "--confirmations " + confirmations + " is outside [1, "
                    + DriftTracker.CONSECUTIVE_MAX + "]");
        }
        if (pauseMs < 0 || pauseMs > 60_000) {
            throw new ParameterException(spec.commandLine(), "--pause-ms " + pauseMs + " is outside [0, 60000]");
        }
        if (!tenant.isEmpty() && !ShardSpec.isName(tenant)) {
            throw new ParameterException(spec.commandLine(),
                    "--tenant '" + tenant + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        if (!item.isEmpty() && tenant.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--item needs --tenant (items are per tenant)");
        }
        if (!item.isEmpty() && !Limits.isId(item, ITEM_ID_LENGTH_MAX)) {
            throw new ParameterException(spec.commandLine(),
                    "--item '" + item + "' is not 1.." + ITEM_ID_LENGTH_MAX + " printable ASCII characters without spaces");
        }
        if (timeoutSeconds < 1 || timeoutSeconds > 3_600) {
            throw new ParameterException(spec.commandLine(), "--timeout " + timeoutSeconds + " is outside [1, 3600] seconds");
        }
    }
}
