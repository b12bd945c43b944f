package io.lastunit.balancer;

import io.lastunit.balancer.wiring.BalancerProperties;
import io.lastunit.common.cli.ServiceCommandLine;
import io.micronaut.context.ApplicationContext;
import java.io.PrintStream;
import java.util.List;

/**
 * Runs a bucket-balancer until Ctrl-C or SIGTERM. Settings: {@code lastunit.balancer.*} in
 * application.yml, -D properties or LASTUNIT_BALANCER_* environment variables; the only arguments
 * are -h/--help ({@link ServiceCommandLine}). Run two or more: one leads, the others stand by.
 */
public final class BalancerMain {
    static final ServiceCommandLine COMMAND_LINE = new ServiceCommandLine("lastunit balancer", List.of(
            "Runs a bucket-balancer until Ctrl-C or SIGTERM. It joins the leader election in ZooKeeper; the leader"
                    + " moves unsold stock between the regions of items sold in several regions, serves the routers'"
                    + " pulls for a dry region, and checks the item invariant across shards. Run two or more: one"
                    + " leads, the others stand by.",
            "It needs a reachable ZooKeeper (zookeeper) holding the platform's topology."),
            "lastunit.balancer", BalancerProperties.class, "docs/operations.md#balancer-settings");

    private BalancerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        System.exit(run(List.of(args), System.out, System.err));
    }

    static int run(List<String> args, PrintStream out, PrintStream err) throws InterruptedException {
        return COMMAND_LINE.run(args, out, err, () -> {
            ApplicationContext ctx = ApplicationContext.run();
            try {
                BalancerNode node = ctx.getBean(BalancerNode.class).start();
                return new ServiceCommandLine.Started(ctx, "lastunit bucket-balancer " + node.address() + " joined the election at "
                    + node.config().zookeeper() + node.config().namespace() + "/balancer/leader");
            } catch (Exception | Error e) {
                ctx.close();
                throw e;
            }
        });
    }
}
