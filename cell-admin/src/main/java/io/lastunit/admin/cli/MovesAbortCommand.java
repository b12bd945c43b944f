package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.common.Failure;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin moves abort ID [--reason TEXT]}: asks a move to roll back. Before its flip
 * it does: when a mover runs it, that mover rolls it back (this waits up to 10 s to see it
 * ABORTING); when none does, this process rolls it back itself. From FLIPPED on it is refused
 * (MOVE_PAST_COMMIT_POINT, exit 2): the move rolls forward.
 */
@Command(name = "abort", mixinStandardHelpOptions = true,
        description = {"Roll a tenant move back (before its flip; after it, the move rolls forward).",
                "Exit: 0 rolled back or rolling back, 1 still running after the wait, 2 refused."})
public final class MovesAbortCommand implements Callable<Integer> {
    static final Duration WAIT = Duration.ofSeconds(10);

    @Spec
    CommandSpec spec;

    @ParentCommand
    MovesCommand moves;

    @Parameters(index = "0", paramLabel = "ID", description = "The move id.")
    String moveId;

    @Option(names = "--reason", paramLabel = "TEXT", description = "Why, for the record (at most 256 characters).")
    String reason = "";

    @Override
    public Integer call() throws InterruptedException {
        MovesCommand.requireMoveId(spec, moveId);
        if (reason.length() > io.lastunit.admin.move.Moves.REASON_LENGTH_MAX) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--reason is longer than "
                    + io.lastunit.admin.move.Moves.REASON_LENGTH_MAX + " characters");
        }
        PrintWriter out = spec.commandLine().getOut();
        AdminCommand admin = moves.admin();
        try (ZooKeeperSession zk = admin.connect(); MoveCli cli = new MoveCli(zk, admin.shardTls())) {
            Move m;
            try {
                m = cli.moves().requestAbort(moveId, reason.isEmpty() ? "aborted by " + MoveCli.owner() : reason);
                if (m.getStep() == MoveStep.ABORTED) {
                    out.println("move " + moveId + " is ABORTED: " + m.getReason());
                    out.flush();
                    return ExitCodes.OK;
                }
                if (cli.moves().holder(moveId).isEmpty()) {
                    out.println("move " + moveId + ": abort requested; no mover runs it, rolling it back here");
                    out.flush();
                    return MovesResumeCommand.runHere(cli, moveId, out);
                }
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (m.getStep() != MoveStep.ABORTING && m.getStep() != MoveStep.ABORTED
                        && System.nanoTime() - deadline < 0) {
                    Thread.sleep(50);
                    m = cli.moves().get(moveId);
                }
            } catch (Failure f) {
                throw MoveCli.refused(f);
            }
            out.println("move " + moveId + " is " + m.getStep() + (m.getReason().isEmpty() ? "" : ": " + m.getReason()));
            out.flush();
            return m.getStep() == MoveStep.ABORTING || m.getStep() == MoveStep.ABORTED ? ExitCodes.OK : ExitCodes.FAILED;
        }
    }
}
