package io.lastunit.shard;

import io.lastunit.common.cli.ServiceCommandLine;
import io.lastunit.shard.wiring.ShardProperties;
import io.micronaut.context.ApplicationContext;
import java.io.PrintStream;
import java.util.List;

/**
 * The shard node's one entry point: runs a node until Ctrl-C or SIGTERM. The launcher calls it as
 * {@code serve}; that first argument is optional. Settings: {@code lastunit.shard.*} in
 * application.yml, -D properties or LASTUNIT_SHARD_* environment variables; the only other
 * arguments are -h/--help ({@link ServiceCommandLine}).
 */
public final class ShardNodeMain {
    static final ServiceCommandLine COMMAND_LINE = new ServiceCommandLine("lastunit serve", List.of(
            "Runs a shard node until Ctrl-C or SIGTERM: it owns the stock of the items placed on its shard, decides"
                    + " Reserves in single-writer lanes and commits them to its PostgreSQL database"
                    + " (lastunit.shard.v1.ShardService and lastunit.inventory.v1.InventoryService over gRPC).",
            "It needs a database: jdbc-url (LASTUNIT_SHARD_JDBC_URL), or embedded=true (LASTUNIT_SHARD_EMBEDDED=true)"
                    + " for a PostgreSQL of its own in a temporary directory, deleted when the node stops. With"
                    + " zookeeper set it joins a platform as the shard named by id; without, it runs standalone."),
            "lastunit.shard", ShardProperties.class, "docs/operations.md#configuration");

    private ShardNodeMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        System.exit(run(List.of(args), System.out, System.err));
    }

    static int run(List<String> args, PrintStream out, PrintStream err) throws InterruptedException {
        List<String> rest = !args.isEmpty() && args.get(0).equals("serve") ? args.subList(1, args.size()) : args;
        return COMMAND_LINE.run(rest, out, err, () -> {
            ApplicationContext ctx = ApplicationContext.run();
            try {
                ShardNode node = ctx.getBean(ShardNode.class).start();
                return new ServiceCommandLine.Started(ctx, "lastunit shard " + node.config().shardId() + " listening on " + node.config().host() + ":"
                    + node.port());
            } catch (Exception | Error e) {
                ctx.close();
                throw e;
            }
        });
    }
}
