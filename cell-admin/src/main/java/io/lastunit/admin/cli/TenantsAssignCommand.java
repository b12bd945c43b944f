package io.lastunit.admin.cli;

import io.lastunit.api.shard.v1.CountItemsResponse;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.api.topology.v1.TenantPlacement;
import io.lastunit.api.topology.v1.TenantState;
import io.lastunit.common.topology.Topology;
import io.lastunit.common.topology.Versioned;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin tenants assign TENANT CELL}: places a tenant that has no items yet in a
 * cell. Every shard of every cell is asked (CountItems) first; a tenant with items anywhere, or a
 * shard that cannot be asked, is refused (exit 2), because its stock would stay behind — moving a
 * tenant with stock is a move (DESIGN §8), not an assignment. The write is a compare-and-set on the
 * epoch read before the shards were asked.
 */
@Command(name = "assign", mixinStandardHelpOptions = true,
        description = {"Place a tenant that has no items yet in a cell.",
                "Refused (exit 2) if any shard reports items of the tenant, or cannot be asked."})
public final class TenantsAssignCommand implements Callable<Integer> {
    static final Duration COUNT_TIMEOUT = Duration.ofSeconds(10);

    @Spec
    CommandSpec spec;

    @ParentCommand
    TenantsCommand tenants;

    @Parameters(index = "0", paramLabel = "TENANT", description = "The tenant id.")
    String tenant;

    @Parameters(index = "1", paramLabel = "CELL", description = "The cell to place it in.")
    String cell;

    @Override
    public Integer call() throws InterruptedException {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        try (ZooKeeperSession zk = tenants.admin().connect(); ShardProbe probe = tenants.admin().probe()) {
            List<Cell> cells = zk.call(() -> zk.store().cells());
            if (cells.stream().noneMatch(c -> c.getName().equals(cell))) {
                throw CliError.usage("unknown cell " + cell + "; the cells are "
                        + cells.stream().map(Cell::getName).toList() + " ('admin cells list' shows them)");
            }
            if (zk.call(() -> zk.store().shards(cell)).isEmpty()) {
                throw CliError.usage("cell " + cell + " has no shards yet; tenant " + tenant + " not placed");
            }
            // The epoch first: if anything changes after the shards were asked, the CAS fails.
            Optional<Versioned<TenantPlacement>> placement = zk.call(() -> zk.store().placement(tenant));
            int epoch = placement.map(Versioned::version).orElse(-1);
            String current = placement.map(p -> p.value().getCell()).orElse(Topology.SHARED_CELL);
            if (placement.isPresent() && (placement.get().value().getState() == TenantState.MOVING
                    || !placement.get().value().getMoveId().isEmpty())) {
                throw CliError.usage("tenant " + tenant + " is being moved (move " + placement.get().value().getMoveId()
                        + ", " + placement.get().value().getState() + ", epoch " + epoch + "); not assigned");
            }
            if (current.equals(cell)) {
                out.println("tenant " + tenant + " is already in cell " + cell + " (epoch " + epoch
                        + (placement.isEmpty() ? ", no placement: the default cell" : "") + "); nothing to do");
                out.flush();
                return ExitCodes.OK;
            }
            List<ShardInfo> everyShard = new ArrayList<>();
            for (Cell c : cells) {
                everyShard.addAll(zk.call(() -> zk.store().shards(c.getName())));
            }
            List<String> withItems = new ArrayList<>();
            List<String> unasked = new ArrayList<>();
            for (ShardProbe.Answer<CountItemsResponse> a : probe.countItems(everyShard, tenant, COUNT_TIMEOUT)) {
                String where = a.shard().getCell() + "/" + a.shard().getShardId();
                if (!a.ok()) {
                    unasked.add(where + " (" + a.shard().getAddress() + "): " + a.error());
                } else if (a.value().getItems() > 0) {
                    withItems.add(where + " (" + a.value().getItems() + " item" + (a.value().getItems() == 1 ? "" : "s") + ")");
                }
            }
            if (!withItems.isEmpty()) {
                throw CliError.usage("tenant " + tenant + " already has items on " + String.join(", ", withItems)
                        + "; only a tenant with no items can be assigned (its stock would stay behind). Not assigned.");
            }
            if (!unasked.isEmpty()) {
                throw CliError.usage("cannot tell whether tenant " + tenant + " has items: " + String.join("; ", unasked)
                        + ". Not assigned.");
            }
            int newEpoch = zk.call(() -> zk.store().assignTenant(tenant, cell, epoch));
            out.printf("tenant %s assigned to cell %s (was %s; epoch %d -> %d); %d shard%s checked, none had items%n",
                    tenant, cell, current, epoch, newEpoch, everyShard.size(), everyShard.size() == 1 ? "" : "s");
            out.flush();
            return ExitCodes.OK;
        }
    }

    void validate() {
        List<String> problems = new ArrayList<>();
        if (!ShardSpec.isName(tenant)) {
            problems.add("TENANT '" + tenant + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        if (!ShardSpec.isName(cell)) {
            problems.add("CELL '" + cell + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        if (!problems.isEmpty()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), String.join("; ", problems));
        }
    }
}
