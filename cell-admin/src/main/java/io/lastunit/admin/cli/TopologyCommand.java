package io.lastunit.admin.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code lastunit admin topology}: back the topology up to a document and restore it from one. */
@Command(name = "topology", mixinStandardHelpOptions = true,
        subcommands = {TopologyExportCommand.class, TopologyImportCommand.class},
        description = "Back up the topology (cells, shards, tenants with their epochs, moves) to a JSON document,"
                + " and restore it into ZooKeeper.")
public final class TopologyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return LastunitCli.requireSubcommand(spec);
    }

    AdminCommand admin() {
        return (AdminCommand) spec.parent().userObject();
    }
}
