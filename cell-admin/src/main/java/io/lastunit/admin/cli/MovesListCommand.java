package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.Move;
import io.lastunit.common.Failure;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code lastunit admin moves list [--tenant T]}: every move, running ones first, then newest first. */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = "List the tenant moves, running ones first, then newest first.")
public final class MovesListCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    MovesCommand moves;

    @Option(names = "--tenant", paramLabel = "TENANT", description = "Only this tenant's moves.")
    String tenant = "";

    @Override
    public Integer call() {
        if (!tenant.isEmpty() && !ShardSpec.isName(tenant)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--tenant '" + tenant + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        PrintWriter out = spec.commandLine().getOut();
        AdminCommand admin = moves.admin();
        try (ZooKeeperSession zk = admin.connect(); MoveCli cli = new MoveCli(zk, admin.shardTls())) {
            List<Move> list;
            try {
                list = cli.moves().list(tenant);
            } catch (Failure f) {
                throw MoveCli.refused(f);
            }
            if (list.isEmpty()) {
                out.println("no moves" + (tenant.isEmpty() ? "" : " of tenant " + tenant) + " under " + zk.namespace());
                out.flush();
                return ExitCodes.OK;
            }
            Table t = new Table("move", "tenant", "from", "to", "step", "#pause ms", "#rows copied", "updated");
            for (Move m : list) {
                t.row(m.getMoveId(), m.getTenantId(), m.getFromCell(), m.getToCell(), m.getStep()
                        + (m.getAbortRequested() && m.getStep().getNumber() < 8 ? " (abort requested)" : ""),
                        m.getPauseMs() == 0 ? "-" : m.getPauseMs(), MoveCli.rows(m.getCopied()),
                        MoveCli.time(m.getUpdatedAtMs()));
            }
            t.print(out, "");
            out.flush();
            return ExitCodes.OK;
        }
    }
}
