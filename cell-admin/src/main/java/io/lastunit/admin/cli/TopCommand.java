package io.lastunit.admin.cli;

import io.lastunit.api.topology.v1.LiveShard;
import io.lastunit.common.metrics.Scrape;
import io.lastunit.common.topology.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./lastunit top}: a live view of a running platform, refreshed every interval — per shard
 * the sales, confirmations and expiries per second, HELD holds, batch sizes, the deepest queue,
 * commit p99, refusals, drift and whether writes are paused; per router the answers, the sheds by
 * cause and Reserve p99. The shards are found in ZooKeeper (each live shard names its metrics
 * URL); any other service is given by {@code --metrics}.
 */
@Command(name = "top", mixinStandardHelpOptions = true,
        description = "A live view of a running platform: sales/s, sheds, lanes, holds, drift, per shard.")
public final class TopCommand implements Callable<Integer> {
    /** Longest wait for one service's scrape: a hung one shows as down, it never stalls the view. */
    static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(2);
    static final int ITERATIONS_MAX = 1_000_000;

    @Spec
    CommandSpec spec;

    @Option(names = "--zookeeper", paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "ZooKeeper of the platform: its live shards are shown (./lastunit up prints it;"
                    + " default: LASTUNIT_ZOOKEEPER, else " + AdminCommand.ZOOKEEPER_DEFAULT + ", unless only --metrics is given)")
    String zookeeper;

    @Option(names = "--namespace", paramLabel = "PATH", description = "the topology's znode (default: ${DEFAULT-VALUE})")
    String namespace = AdminCommand.NAMESPACE_DEFAULT;

    @Option(names = "--metrics", paramLabel = "URL", description = "another service's metrics URL (repeatable):"
            + " a router, a balancer, a shard node outside ZooKeeper")
    List<String> metrics = new ArrayList<>();

    @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "2",
            description = "seconds between two looks, 1 to 3600 (default: ${DEFAULT-VALUE})")
    int intervalSeconds;

    @Option(names = "--iterations", paramLabel = "N", defaultValue = "0",
            description = "stop after N screens (default: until Ctrl-C)")
    int iterations;

    @picocli.CommandLine.Mixin
    ZooKeeperAuthOptions zookeeperAuth = new ZooKeeperAuthOptions();

    @Option(names = "--once", description = "print one screen (after one interval) and stop, without clearing")
    boolean once;

    @Override
    public Integer call() throws Exception {
        if (zookeeper == null && metrics.isEmpty()) {
            zookeeper = AdminCommand.envOr("LASTUNIT_ZOOKEEPER", AdminCommand.ZOOKEEPER_DEFAULT);
        }
        if (intervalSeconds < 1 || intervalSeconds > 3_600) {
            throw new ParameterException(spec.commandLine(), "--interval must be 1..3600 seconds, got " + intervalSeconds);
        }
        if (iterations < 0 || iterations > ITERATIONS_MAX) {
            throw new ParameterException(spec.commandLine(), "--iterations must be 0..1000000, got " + iterations);
        }
        int screens = once ? 1 : iterations == 0 ? ITERATIONS_MAX : iterations;
        boolean clear = !once && System.console() != null;
        PrintWriter out = spec.commandLine().getOut();
        ZooKeeperSession zk = zookeeper == null ? null : ZooKeeperSession.open(zookeeper, namespace, zookeeperAuth.zookeeper(),
                zookeeperAuth.zookeeperTls());
        try {
            Map<String, Scrape> before = look(zk);
            long t0 = System.nanoTime();
            for (int i = 0; i < screens; i++) {
                Thread.sleep(intervalSeconds * 1_000L);
                Map<String, Scrape> now = look(zk);
                long t1 = System.nanoTime();
                List<TopView.Source> sources = new ArrayList<>();
                for (Map.Entry<String, Scrape> e : now.entrySet()) {
                    sources.add(new TopView.Source(e.getKey(), before.get(e.getKey()), e.getValue()));
                }
                if (clear) {
                    out.print("\033[H\033[2J");
                }
                TopView.render(sources, (t1 - t0) / 1e9).forEach(out::println);
                out.flush();
                before = now;
                t0 = t1;
            }
            return ExitCodes.OK;
        } finally {
            if (zk != null) {
                zk.close();
            }
        }
    }

    /** Every service's scrape now, by a name for it (null where it did not answer). */
    private Map<String, Scrape> look(ZooKeeperSession zk) throws InterruptedException {
        Map<String, String> urls = new LinkedHashMap<>();
        if (zk != null) {
            try {
                Topology t = zk.snapshot();
                for (String id : t.liveShardIds()) {
                    LiveShard l = t.liveShard(id).orElseThrow();
                    if (!l.getMetricsUrl().isEmpty()) {
                        urls.put(id, l.getMetricsUrl());
                    }
                }
            } catch (CliError e) {
                spec.commandLine().getErr().println("top: " + e.getMessage());
            }
        }
        for (String m : metrics) {
            urls.putIfAbsent(m, m);
        }
        Map<String, Scrape> scrapes = new LinkedHashMap<>();
        for (Map.Entry<String, String> u : urls.entrySet()) {
            try {
                scrapes.put(u.getKey(), Scrape.of(u.getValue(), SCRAPE_TIMEOUT));
            } catch (IOException | RuntimeException e) {
                scrapes.put(u.getKey(), null);
            }
        }
        return scrapes;
    }
}
