package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.topology.Topology;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code lastunit admin cells list}: every cell with its shards, and whether each shard node is up. */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = "List the cells, their shards and whether each shard node is live.")
public final class CellsListCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ParentCommand
    CellsCommand cells;

    @Override
    public Integer call() {
        AdminCommand admin = (AdminCommand) cells.spec.parent().userObject();
        PrintWriter out = spec.commandLine().getOut();
        try (ZooKeeperSession zk = admin.connect()) {
            Topology t = zk.snapshot();
            if (t.cells().isEmpty()) {
                out.println("no cells under " + zk.namespace() + " at " + zk.connect());
                return ExitCodes.OK;
            }
            Table table = new Table("cell", "regions", "shard", "region", "address", "live");
            int shardCount = 0;
            int live = 0;
            for (Cell c : t.cells()) {
                String regions = String.join(",", c.getRegionsList());
                List<ShardInfo> shards = t.shards(c.getName());
                if (shards.isEmpty()) {
                    table.row(c.getName(), regions, "-", "-", "-", "-");
                }
                for (ShardInfo s : shards) {
                    shardCount++;
                    String liveText = "no";
                    LiveShard l = t.liveShard(s.getShardId()).orElse(null);
                    if (l != null) {
                        live++;
                        liveText = l.getAddress().equals(s.getAddress()) ? "yes" : "yes (at " + l.getAddress() + ")";
                    }
                    table.row(c.getName(), regions, s.getShardId(), s.getRegion(), s.getAddress(), liveText);
                }
            }
            table.print(out, "");
            out.println();
            out.printf("%d cell%s, %d shard%s, %d live%n", t.cells().size(), t.cells().size() == 1 ? "" : "s",
                    shardCount, shardCount == 1 ? "" : "s", live);
            out.flush();
            return ExitCodes.OK;
        }
    }
}
