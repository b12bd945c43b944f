package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.Versioned;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code lastunit admin tenants show TENANT}: the tenant's cell, state and epoch, and that cell's shards. */
@Command(name = "show", mixinStandardHelpOptions = true,
        description = "Show a tenant's cell, state and epoch, and the shards of that cell per region.")
public final class TenantsShowCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    TenantsCommand tenants;

    @Parameters(index = "0", paramLabel = "TENANT", description = "The tenant id.")
    String tenant;

    @Override
    public Integer call() {
        if (!ShardSpec.isName(tenant)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "TENANT '" + tenant + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (ZooKeeperSession zk = tenants.admin().connect()) {
            Topology t = zk.snapshot();
            // Read with its version straight from the store: the snapshot may lag a write just made.
            Optional<Versioned<TenantPlacement>> p = zk.call(() -> zk.store().placement(tenant));
            String cell = p.map(v -> v.value().getCell()).orElse(Topology.SHARED_CELL);
            out.println("tenant  " + tenant);
            out.println("cell    " + cell + (p.isEmpty() ? " (no placement: the default cell)" : ""));
            out.println("state   " + p.map(v -> v.value().getState().name()
                    + (v.value().getMoveId().isEmpty() ? "" : " (move " + v.value().getMoveId() + ")")).orElse("ACTIVE"));
            out.println("epoch   " + p.map(v -> String.valueOf(v.version())).orElse("-1 (no placement)"));
            Optional<Cell> c = t.cell(cell);
            if (c.isEmpty()) {
                out.println("cell " + cell + " does not exist under " + zk.namespace() + ": the tenant cannot be served");
                out.flush();
                return ExitCodes.FAILED;
            }
            out.println();
            Table table = new Table("region", "shard", "address", "live");
            for (String region : c.get().getRegionsList()) {
                for (ShardInfo s : t.shards(cell, region)) {
                    table.row(region, s.getShardId(), s.getAddress(), t.isLive(s.getShardId()) ? "yes" : "no");
                }
            }
            if (table.size() == 0) {
                out.println("cell " + cell + " has no shards yet");
            } else {
                out.println("shards of cell " + cell + " (an item lives on one shard per region, by rendezvous hash):");
                table.print(out, "  ");
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
