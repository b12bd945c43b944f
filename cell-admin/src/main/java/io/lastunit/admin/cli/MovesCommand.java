package io.lastunit.admin.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code lastunit admin moves}: list, show, abort and resume tenant moves. */
@Command(name = "moves", mixinStandardHelpOptions = true,
        subcommands = {MovesListCommand.class, MovesShowCommand.class, MovesAbortCommand.class,
                MovesResumeCommand.class},
        description = "List, show, abort and resume tenant moves ('admin tenants move' starts one).")
public final class MovesCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return LastunitCli.requireSubcommand(spec);
    }

    AdminCommand admin() {
        return (AdminCommand) spec.parent().userObject();
    }

    /** Refuses a bad move id before connecting. */
    static void requireMoveId(CommandSpec spec, String moveId) {
        if (!ShardSpec.isName(moveId)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "ID '" + moveId + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
    }
}
