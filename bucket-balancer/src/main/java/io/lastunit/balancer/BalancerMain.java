package io.lastunit.balancer;

import io.micronaut.context.ApplicationContext;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a bucket-balancer. Settings: {@code lastunit.balancer.*} in application.yml, -D properties
 * or LASTUNIT_BALANCER_* environment variables. Run two or more: one leads, the others stand by.
 */
public final class BalancerMain {
    private BalancerMain() {
    }

    public static void main(String[] args) throws Exception {
        ApplicationContext ctx = ApplicationContext.run();
        BalancerNode node = ctx.getBean(BalancerNode.class).start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ctx.close();
            stopped.countDown();
        }, "shutdown"));
        System.out.println("lastunit bucket-balancer " + node.address() + " joined the election at "
                + node.config().zookeeper() + node.config().namespace() + "/balancer/leader (Ctrl-C stops it)");
        stopped.await();
    }
}
