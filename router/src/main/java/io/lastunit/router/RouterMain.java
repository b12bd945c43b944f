package io.lastunit.router;

import io.lastunit.common.cli.ServiceCommandLine;
import io.lastunit.router.wiring.RouterProperties;
import io.micronaut.context.ApplicationContext;
import java.io.PrintStream;
import java.util.List;

/**
 * Runs a router until Ctrl-C or SIGTERM. Settings: {@code lastunit.router.*} in application.yml,
 * -D properties or LASTUNIT_ROUTER_* environment variables (docs/operations.md); the only
 * arguments are -h/--help ({@link ServiceCommandLine}).
 */
public final class RouterMain {
    static final ServiceCommandLine COMMAND_LINE = new ServiceCommandLine("lastunit router", List.of(
            "Runs a router until Ctrl-C or SIGTERM: the public gRPC front door (lastunit.inventory.v1.InventoryService)."
                    + " It authenticates each caller by bearer token and routes each call to the shard that owns the"
                    + " item, from the topology in ZooKeeper.",
            "It needs a reachable ZooKeeper (zookeeper) and at least one token grant (tokens,"
                    + " <sha256-hex>:<name>:<tenants>[:admin]; docs/authentication.md); it refuses to start without."),
            "lastunit.router", RouterProperties.class, "docs/operations.md#router-settings");

    private RouterMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        System.exit(run(List.of(args), System.out, System.err));
    }

    static int run(List<String> args, PrintStream out, PrintStream err) throws InterruptedException {
        return COMMAND_LINE.run(args, out, err, () -> {
            ApplicationContext ctx = ApplicationContext.run();
            try {
                RouterNode node = ctx.getBean(RouterNode.class).start();
                return new ServiceCommandLine.Started(ctx, "lastunit router " + node.config().routerId() + " listening on " + node.config().host() + ":"
                    + node.port());
            } catch (Exception | Error e) {
                ctx.close();
                throw e;
            }
        });
    }
}
