package io.lastunit.shard;

import io.micronaut.context.ApplicationContext;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The shard node's one entry point: {@code serve} (the default) runs a node. The demo runs through
 * the router now: {@code ./lastunit demo} (cell-admin's {@code LastunitCli}).
 */
@Command(name = "lastunit", mixinStandardHelpOptions = true,
        subcommands = {ShardNodeMain.Serve.class},
        description = "lastunit: sells the last unit exactly once.")
public final class ShardNodeMain implements Callable<Integer> {

    public static void main(String[] args) {
        if (args.length == 0) {
            args = new String[] {"serve"};
        }
        System.exit(new CommandLine(new ShardNodeMain()).execute(args));
    }

    @Override
    public Integer call() {
        CommandLine.usage(this, System.out);
        return 0;
    }

    @Command(name = "serve", mixinStandardHelpOptions = true,
            description = "Run a shard node. Settings: lastunit.shard.* in application.yml, -D properties or "
                    + "LASTUNIT_SHARD_* environment variables.")
    static final class Serve implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            ApplicationContext ctx = ApplicationContext.run();
            ShardNode node = ctx.getBean(ShardNode.class).start();
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                ctx.close();
                stopped.countDown();
            }, "shutdown"));
            System.out.println("lastunit shard " + node.config().shardId() + " listening on "
                    + node.config().host() + ":" + node.port() + " (Ctrl-C stops it)");
            stopped.await();
            return 0;
        }
    }
}
