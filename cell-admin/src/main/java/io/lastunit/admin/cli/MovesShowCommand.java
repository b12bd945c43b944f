package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.Move;
import io.lastunit.common.Failure;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code lastunit admin moves show ID}: one move as recorded, and who runs it. */
@Command(name = "show", mixinStandardHelpOptions = true, description = "Show one tenant move as recorded.")
public final class MovesShowCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    MovesCommand moves;

    @Parameters(index = "0", paramLabel = "ID", description = "The move id.")
    String moveId;

    @Override
    public Integer call() {
        MovesCommand.requireMoveId(spec, moveId);
        PrintWriter out = spec.commandLine().getOut();
        AdminCommand admin = moves.admin();
        try (ZooKeeperSession zk = admin.connect(); MoveCli cli = new MoveCli(zk, admin.shardTls())) {
            try {
                Move m = cli.moves().get(moveId);
                MoveCli.show(out, m);
                out.println("run by      " + cli.moves().holder(moveId).orElse("nobody now"));
            } catch (Failure f) {
                throw MoveCli.refused(f);
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
