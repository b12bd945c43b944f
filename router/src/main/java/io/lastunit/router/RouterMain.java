package io.lastunit.router;

import io.micronaut.context.ApplicationContext;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a router. Settings: {@code lastunit.router.*} in application.yml, -D properties or
 * LASTUNIT_ROUTER_* environment variables (docs/operations.md).
 */
public final class RouterMain {
    private RouterMain() {
    }

    public static void main(String[] args) throws Exception {
        ApplicationContext ctx = ApplicationContext.run();
        RouterNode node = ctx.getBean(RouterNode.class).start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ctx.close();
            stopped.countDown();
        }, "shutdown"));
        System.out.println("lastunit router " + node.config().routerId() + " listening on " + node.config().host() + ":"
                + node.port() + " (Ctrl-C stops it)");
        stopped.await();
    }
}
