package io.lastunit.admin.cli;

import io.lastunit.admin.move.Mover;
import io.lastunit.common.Failure;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin moves resume ID}: runs a move in this process from where it was recorded
 * (a crashed or halted mover's), holding its lease, with a line per step; exits by its outcome.
 */
@Command(name = "resume", mixinStandardHelpOptions = true,
        description = {"Run a tenant move here from where it was recorded, until it ends.",
                "Exit: 0 moved, 1 rolled back or halted, 2 another mover runs it, 3 cut off from ZooKeeper."})
public final class MovesResumeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    MovesCommand moves;

    @Parameters(index = "0", paramLabel = "ID", description = "The move id.")
    String moveId;

    @Override
    public Integer call() throws InterruptedException {
        MovesCommand.requireMoveId(spec, moveId);
        PrintWriter out = spec.commandLine().getOut();
        AdminCommand admin = moves.admin();
        try (ZooKeeperSession zk = admin.connect(); MoveCli cli = new MoveCli(zk, admin.shardTls())) {
            return runHere(cli, moveId, out);
        }
    }

    /** Runs the move here with a progress line per step, prints its outcome, and returns its exit code. */
    static int runHere(MoveCli cli, String moveId, PrintWriter out) throws InterruptedException {
        Mover.Outcome o;
        try {
            o = cli.moves().run(moveId, MoveCli.progress(out));
        } catch (Failure f) {
            throw MoveCli.refused(f);
        }
        out.println("move " + moveId + ": " + o.result() + " (" + o.detail() + ")");
        if (o.result() == Mover.Result.HALTED || o.result() == Mover.Result.STOPPED) {
            out.println("resume it with: admin moves resume " + moveId);
        }
        out.flush();
        return MoveCli.exitCode(o);
    }
}
