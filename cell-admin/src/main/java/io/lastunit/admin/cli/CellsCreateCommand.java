package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.ShardInfo;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit admin cells create NAME --region R --shard ID=REGION=HOST:PORT ...}: a new cell
 * with its fixed set of shards, written in one ZooKeeper transaction. The shard nodes are started
 * separately ({@code ./lastunit serve} with the same id, region and port). With {@code --exists-ok}
 * a cell that already exists with exactly these regions and shards is success and nothing is
 * written, so a deployment's bootstrap may run it on every rollout; a cell that exists with other
 * regions or shards is still refused, naming the difference (cells never change their shards).
 */
@Command(name = "create", mixinStandardHelpOptions = true,
        description = {"Create a cell and its fixed set of shards.",
                "Example: cells create big --region local --shard big-1=local=10.0.0.5:7443 "
                        + "--shard big-2=local=10.0.0.6:7443"})
public final class CellsCreateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    CellsCommand cells;

    @Parameters(index = "0", paramLabel = "NAME", description = "The cell's name: 1..64 printable ASCII characters, no '/'.")
    String name;

    @Option(names = "--region", required = true, paramLabel = "REGION",
            description = "A region the cell serves (repeat for several); each needs at least one shard.")
    List<String> regions = new ArrayList<>();

    @Option(names = "--shard", required = true, paramLabel = "ID=REGION=HOST:PORT",
            converter = ShardSpec.Converter.class,
            description = "A shard of the cell: its id (unique on the platform), its region and its node's address.")
    List<ShardSpec> shards = new ArrayList<>();

    @Option(names = "--exists-ok",
            description = "Succeed without writing anything when the cell exists with exactly these regions and shards"
                    + " (for a bootstrap that runs again); a cell that exists otherwise is still refused.")
    boolean existsOk;

    @Override
    public Integer call() {
        validate();
        AdminCommand admin = (AdminCommand) cells.spec.parent().userObject();
        PrintWriter out = spec.commandLine().getOut();
        List<ShardInfo> infos = shards.stream().map(s -> s.toShardInfo(name)).toList();
        try (ZooKeeperSession zk = admin.connect()) {
            if (existsOk && zk.call(() -> existsAlready(zk, infos))) {
                out.printf("cell %s exists with these regions and shards: nothing changed%n", name);
                out.flush();
                return ExitCodes.OK;
            }
            zk.call(() -> {
                zk.store().createCell(name, regions, infos);
                return null;
            });
            out.printf("created cell %s: regions %s, %d shard%s%n", name, String.join(",", regions), infos.size(),
                    infos.size() == 1 ? "" : "s");
            Table t = new Table("shard", "region", "address");
            infos.forEach(s -> t.row(s.getShardId(), s.getRegion(), s.getAddress()));
            t.print(out, "  ");
            out.println("Start each shard node with that id, region and port, e.g. LASTUNIT_SHARD_ID="
                    + infos.get(0).getShardId() + " LASTUNIT_SHARD_REGIONS=" + infos.get(0).getRegion()
                    + " LASTUNIT_SHARD_ZOOKEEPER=" + zk.connect() + " ./lastunit serve");
            out.flush();
            return ExitCodes.OK;
        }
    }

    /**
     * True when the cell exists with exactly these regions and shards; false when it does not exist
     * (or has no shards yet: createCell adopts such a cell). Throws, naming the difference, when it
     * exists with others.
     */
    private boolean existsAlready(ZooKeeperSession zk, List<ShardInfo> wanted) {
        var existing = zk.store().cells().stream().filter(c -> c.getName().equals(name)).findFirst();
        List<ShardInfo> have = zk.store().shards(name);
        if (existing.isEmpty() || have.isEmpty()) {
            return false;
        }
        List<String> problems = new ArrayList<>();
        if (!Set.copyOf(existing.get().getRegionsList()).equals(new LinkedHashSet<>(regions))) {
            problems.add("regions " + existing.get().getRegionsList() + ", not " + regions);
        }
        Set<ShardInfo> haveSet = new HashSet<>(have);
        Set<ShardInfo> wantSet = new HashSet<>(wanted);
        if (!haveSet.equals(wantSet)) {
            problems.add("shards " + describe(have) + ", not " + describe(wanted));
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("cell " + name + " exists with " + String.join(" and ", problems)
                    + " (a cell's shards never change: create another cell)");
        }
        return true;
    }

    private static String describe(List<ShardInfo> shards) {
        return shards.stream().map(s -> s.getShardId() + "=" + s.getRegion() + "=" + s.getAddress()).sorted().toList()
                .toString();
    }

    /** Everything that can be checked without ZooKeeper, every problem named at once. */
    void validate() {
        List<String> problems = new ArrayList<>();
        if (!ShardSpec.isName(name)) {
            problems.add("cell name '" + name + "' is not 1..64 printable ASCII characters without spaces or '/'");
        }
        Set<String> regionSet = new LinkedHashSet<>();
        for (String r : regions) {
            if (!ShardSpec.isName(r)) {
                problems.add("--region '" + r + "' is not 1..64 printable ASCII characters without spaces or '/'");
            } else if (!regionSet.add(r)) {
                problems.add("--region " + r + " is given twice");
            }
        }
        Set<String> ids = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        Set<String> served = new HashSet<>();
        for (ShardSpec s : shards) {
            if (!ids.add(s.shardId())) {
                problems.add("--shard id " + s.shardId() + " is given twice");
            }
            if (!addresses.add(s.address())) {
                problems.add("--shard address " + s.address() + " is given twice (one node serves one shard)");
            }
            if (!regionSet.contains(s.region())) {
                problems.add("--shard " + s.shardId() + " is in region '" + s.region() + "', which is not a --region "
                        + regionSet);
            }
            served.add(s.region());
        }
        for (String r : regionSet) {
            if (!served.contains(r)) {
                problems.add("--region " + r + " has no --shard");
            }
        }
        if (!problems.isEmpty()) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), String.join("; ", problems));
        }
    }
}
