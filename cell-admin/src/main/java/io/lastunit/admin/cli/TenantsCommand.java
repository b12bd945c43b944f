package io.lastunit.admin.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code lastunit admin tenants}: place a tenant in a cell, move it with its stock, show where it lives. */
@Command(name = "tenants", mixinStandardHelpOptions = true,
        subcommands = {TenantsAssignCommand.class, TenantsMoveCommand.class, TenantsShowCommand.class},
        description = "Place tenants in cells, move them between cells with their stock, and show where they live.")
public final class TenantsCommand implements Callable<Integer> {
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
