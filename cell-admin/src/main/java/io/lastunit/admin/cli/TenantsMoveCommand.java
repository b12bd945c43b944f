package io.lastunit.admin.cli;

import io.lastunit.admin.move.MoveStarter;
import io.lastunit.admin.move.Mover;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.common.Failure;
import java.io.PrintWriter;
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
 * {@code lastunit admin tenants move --tenant T --to-cell C [--max-pause 2s] [--wait]}: moves a
 * tenant with its stock into another cell while it sells (DESIGN §8). The move is checked and
 * recorded first (refused with its reason, nothing changed, exit 2: an unknown tenant or cell, the
 * tenant there already, a cell without the tenant's regions, a move of the tenant running). With
 * {@code --wait} this process then runs it, holding its lease, with a line per step, and exits by
 * its outcome (0 moved, 1 rolled back or halted, 3 cut off from ZooKeeper). Without, the move is
 * left for a mover: an admin server ({@code admin serve}, {@code up}) resumes it, or
 * {@code admin moves resume ID}.
 */
@Command(name = "move", mixinStandardHelpOptions = true,
        description = {"Move a tenant and its stock into another cell while it sells.",
                "The tenant is paused (answered UNAVAILABLE / TENANT_MOVING) only between the fence and the flip,",
                "at most --max-pause; a move that would pause it longer rolls back.",
                "Exit: 0 moved (or, without --wait, planned), 1 rolled back or halted, 2 refused, 3 unreachable."})
public final class TenantsMoveCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    TenantsCommand tenants;

    @Option(names = "--tenant", required = true, paramLabel = "TENANT", description = "The tenant to move.")
    String tenant;

    @Option(names = "--to-cell", required = true, paramLabel = "CELL", description = "The cell to move it into.")
    String toCell;

    @Option(names = "--max-pause", paramLabel = "DURATION",
            description = "Longest the tenant may be paused, 100ms..60s (default ${DEFAULT-VALUE}).")
    String maxPause = "2s";

    @Option(names = "--move-id", paramLabel = "ID", description = "The move's id (default: a new one).")
    String moveId = "";

    @Option(names = "--wait", description = "Run the move here until it ends, with a line per step.")
    boolean waitForEnd;

    @Override
    public Integer call() throws InterruptedException {
        long maxPauseMs = validate();
        PrintWriter out = spec.commandLine().getOut();
        AdminCommand admin = tenants.admin();
        try (ZooKeeperSession zk = admin.connect(); MoveCli cli = new MoveCli(zk, admin.shardTls())) {
            Move m;
            try {
                m = cli.moves().plan(tenant, toCell, maxPauseMs, moveId);
            } catch (Failure f) {
                throw MoveCli.refused(f);
            }
            out.printf("move %s: tenant %s from %s to %s, pause budget %d ms (%s)%n", m.getMoveId(), m.getTenantId(),
                    m.getFromCell(), m.getToCell(), m.getMaxPauseMs(), m.getStep());
            out.flush();
            if (!waitForEnd) {
                out.println("an admin server ('admin serve', 'up') runs it within seconds; or run it here: "
                        + "admin moves resume " + m.getMoveId() + "; follow it: admin moves show " + m.getMoveId());
                out.flush();
                return ExitCodes.OK;
            }
            return MovesResumeCommand.runHere(cli, m.getMoveId(), out);
        }
    }

    /** @return the pause budget in ms */
    long validate() {
        List<String> problems = new ArrayList<>();
        if (!ShardSpec.isName(tenant)) {
            problems.add("--tenant '" + tenant + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        if (!ShardSpec.isName(toCell)) {
            problems.add("--to-cell '" + toCell + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        if (!moveId.isEmpty() && !ShardSpec.isName(moveId)) {
            problems.add("--move-id '" + moveId + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        long ms = 0;
        try {
            ms = MoveCli.parseMillis(maxPause);
            if (ms < MoveStarter.MAX_PAUSE_MIN.toMillis() || ms > MoveStarter.MAX_PAUSE_MAX.toMillis()) {
                problems.add("--max-pause " + maxPause + " is outside [100ms, 60s]");
            }
        } catch (IllegalArgumentException e) {
            problems.add("--max-pause " + e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", problems));
        }
        return ms;
    }
}
