package io.lastunit.admin.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code lastunit admin cells}: list and create cells. */
@Command(name = "cells", mixinStandardHelpOptions = true,
        subcommands = {CellsListCommand.class, CellsCreateCommand.class},
        description = "List and create cells (groups of shards with databases of their own).")
public final class CellsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return LastunitCli.requireSubcommand(spec);
    }
}
