package io.lastunit.admin.cli;

import io.lastunit.admin.platform.EmbeddedZooKeeper;
import io.lastunit.admin.platform.LocalCredentials;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.admin.platform.LocalPrometheus;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.common.tls.MutualTls;
import io.lastunit.common.topology.Topology;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code lastunit up}: a whole platform in this process — an embedded ZooKeeper server,
 * PostgreSQL (embedded unless {@code --jdbc-url}), the shard nodes of cell {@code shared} (and of
 * an optional dedicated cell), each on a database of its own, and a router — until Ctrl-C.
 * Everything lives on 127.0.0.1. The topology is in memory: it is gone when this stops.
 */
@Command(name = "up", mixinStandardHelpOptions = true,
        description = {"Run a whole local platform until Ctrl-C: ZooKeeper, PostgreSQL, shard nodes, a router,"
                + " a bucket-balancer and an admin server.",
                "For trying lastunit and for development; the router accepts the dev token "
                        + LocalPlatform.DEV_TOKEN + " for every tenant."})
public final class UpCommand implements Callable<Integer> {
    static final int SHARDS_TOTAL_MAX = 32;
    static final int ZOOKEEPER_PORT_DEFAULT = 2181;
    static final int ROUTER_PORT_DEFAULT = 7400;
    static final int PROMETHEUS_PORT_DEFAULT = 9090;
    /** How often the local Prometheus scrapes every service and evaluates the rules. */
    static final Duration PROMETHEUS_INTERVAL = Duration.ofSeconds(5);

    @Spec
    CommandSpec spec;

    @Option(names = "--shards", paramLabel = "N", description = "Shards of cell shared per region (default ${DEFAULT-VALUE}).")
    int shards = 4;

    @Option(names = "--region", paramLabel = "REGION",
            description = "A region every cell serves (repeat for several; default local).")
    List<String> regions = new ArrayList<>();

    @Option(names = "--dedicated-cell", paramLabel = "NAME",
            description = "Also create this cell, for a large tenant ('admin tenants assign TENANT NAME').")
    String dedicatedCell;

    @Option(names = "--dedicated-shards", paramLabel = "M",
            description = "Shards of the dedicated cell per region (default 2; needs --dedicated-cell).")
    Integer dedicatedShards;

    @Option(names = "--router-port", paramLabel = "PORT",
            description = "The router's port (default ${DEFAULT-VALUE}; 0 picks a free one).")
    int routerPort = ROUTER_PORT_DEFAULT;

    @Option(names = "--zookeeper-port", paramLabel = "PORT",
            description = "The embedded ZooKeeper's port (default 2181, or a free one if 2181 is taken; 0 picks a free one).")
    Integer zookeeperPort;

    @Option(names = "--prometheus",
            description = "Also run Prometheus (the 'prometheus' binary on the PATH), scraping every service with the"
                    + " shipped alert and recording rules (observability/prometheus/lastunit-rules.yml).")
    boolean prometheus;

    @Option(names = "--prometheus-port", paramLabel = "PORT",
            description = "Its port (default 9090, or a free one if 9090 is taken; 0 picks a free one; needs --prometheus).")
    Integer prometheusPort;

    @Option(names = "--secure",
            description = {"Secure the internal hops: a CA and a certificate per service are made at start (in a"
                    + " directory printed below, deleted at stop), every service calls the others over mutual TLS and",
                    "is admitted by its certificate's role, ZooKeeper serves TLS only (a client certificate of that"
                    + " CA required) and its znodes are lastunit's only (digest ACLs).",
                    "The admin commands then need --secure-dir DIR."})
    boolean secure;

    @Mixin
    JdbcOptions jdbc = new JdbcOptions();

    @Override
    public Integer call() throws Exception {
        List<String> regionList = regions.isEmpty() ? List.of("local") : regions;
        validate(regionList);
        PrintWriter out = spec.commandLine().getOut();
        long t0 = System.nanoTime();
        int zkPort = chooseZooKeeperPort(out);
        int promPort = prometheus ? choosePrometheusPort(out) : -1;
        if (routerPort > 0 && !isFree(routerPort)) {
            throw CliError.usage("--router-port " + routerPort + " is in use (another './lastunit up' or router?);"
                    + " pass --router-port 0 for a free one");
        }
        int total = regionList.size() * (shards + (dedicatedCell == null ? 0 : dedicatedShards()));
        out.printf("lastunit up: starting ZooKeeper, %s, %d shard node%s, a router, a bucket-balancer and an admin server%s ...%n",
                jdbc.describe(), total, total == 1 ? "" : "s", prometheus ? ", then Prometheus" : "");
        out.flush();

        Closer closer = new Closer();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            PrintWriter o = spec.commandLine().getOut();
            o.println();
            o.println("lastunit up: stopping (" + (prometheus ? "Prometheus, " : "")
                    + "balancer, router, shard nodes, ZooKeeper, PostgreSQL) ...");
            o.flush();
            long s = System.nanoTime();
            closer.close();
            o.printf("lastunit up: stopped in %.1f s%n", (System.nanoTime() - s) / 1e9);
            o.flush();
            stopped.countDown();
        }, "lastunit-up-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        LocalPlatform platform;
        PlatformDatabases dbs;
        LocalPrometheus prom = null;
        try {
            java.util.function.Consumer<String> report = line -> {
                out.println("lastunit up: " + line);
                out.flush();
            };
            // Secure: the credentials first, so that ZooKeeper itself serves TLS with its certificate.
            LocalCredentials credentials = !secure ? null : LocalCredentials.create(closer.add(OwnedTempDirectory
                    .create(OwnedTempDirectory.stateDirectory(), "secure", null)).path(),
                    MutualTls.RELOAD_INTERVAL_DEFAULT);
            EmbeddedZooKeeper zk = closer.add(credentials == null
                    ? EmbeddedZooKeeper.start(zkPort, OwnedTempDirectory.stateDirectory(), report)
                    : EmbeddedZooKeeper.startSecure(zkPort, OwnedTempDirectory.stateDirectory(), report,
                            credentials.zookeeperServer()));
            dbs = closer.add(jdbc.open("lastunit_", out));
            LocalPlatform.Builder b = LocalPlatform.builder(dbs.forShards()).zookeeper(zk.connectString())
                    .routerPort(routerPort).cell(Topology.SHARED_CELL, regionList, shards);
            if (credentials != null) {
                b.secure(credentials);
            }
            if (dedicatedCell != null) {
                b.cell(dedicatedCell, regionList, dedicatedShards());
            }
            platform = closer.add(b.start());
            if (prometheus) {
                try {
                    prom = closer.add(LocalPrometheus.start(OwnedTempDirectory.stateDirectory(), promPort,
                            LocalPrometheus.jobs(platform.metricsUrls()), PROMETHEUS_INTERVAL, Duration.ofSeconds(60)));
                } catch (IOException e) {
                    throw CliError.failed("Prometheus did not start: " + rootMessage(e));
                }
            }
        } catch (CliError e) {
            closeAfterFailedStart(closer, hook);
            throw e;
        } catch (Exception e) {
            closeAfterFailedStart(closer, hook);
            throw CliError.failed("the platform did not start: " + rootMessage(e));
        }
        banner(out, platform, dbs, prom, (System.nanoTime() - t0) / 1e9);
        stopped.await();
        return ExitCodes.OK;
    }

    private static void closeAfterFailedStart(Closer closer, Thread hook) {
        closer.close();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway and finds everything closed
        }
    }

    private void banner(PrintWriter out, LocalPlatform p, PlatformDatabases dbs, LocalPrometheus prom, double seconds) {
        String zk = p.zookeeper();
        String router = "127.0.0.1:" + p.routerPort();
        out.printf("%nlastunit platform is up (%.1f s)%n", seconds);
        out.println("  router      " + router + "   lastunit.inventory.v1.InventoryService, plaintext"
                + (p.credentials() == null ? "" : " (bearer tokens; the internal hops are mutual TLS)"));
        out.println("  dev token   " + LocalPlatform.DEV_TOKEN + "   (header  authorization: Bearer "
                + LocalPlatform.DEV_TOKEN + ")");
        out.println("  zookeeper   " + zk + "   namespace /lastunit (in memory)" + (p.credentials() == null ? ""
                : ", TLS with client certificates, digest ACLs"));
        p.balancers().forEach(b -> out.println("  balancer    " + b.address() + "   bucket-balancer ("
                + (b.isLeader() ? "leader" : "standby") + ")"));
        out.println("  admin       127.0.0.1:" + p.adminPort() + "   lastunit.admin.v1.AdminService (tenant moves;"
                + " the dev token), " + (p.credentials() == null ? "plaintext" : "mutual TLS: the admin certificate"));
        if (p.credentials() != null) {
            out.println("  secure      " + p.credentials().directory() + "   CA, certificates, ZooKeeper credentials"
                    + " (deleted at stop)");
        }
        out.println("  postgresql  " + dbs.describe());
        if (prom != null) {
            out.println("  prometheus  " + prom.base() + "   scraping every service each "
                    + PROMETHEUS_INTERVAL.toSeconds() + " s with the shipped rules (alerts: " + prom.base() + "/alerts)");
        }
        if (dbs.unsafeNoFsync()) {
            out.println("  WARNING     --unsafe-no-fsync: PostgreSQL does not flush commits to disk; a crash of this"
                    + " machine can lose confirmed reservations and sales.");
        }
        out.println();
        Table t = new Table("cell", "region", "shard", "address");
        p.shards().values().stream().sorted(Comparator.comparing(ShardInfo::getCell)
                        .thenComparing(ShardInfo::getRegion).thenComparing(ShardInfo::getShardId))
                .forEach(s -> t.row(s.getCell(), s.getRegion(), s.getShardId(), s.getAddress()));
        t.print(out, "  ");
        out.println();
        Map<String, String> metrics = p.metricsUrls();
        if (!metrics.isEmpty()) {
            out.println("Metrics (Prometheus text format):");
            Table m = new Table("node", "metrics");
            metrics.forEach(m::row);
            m.print(out, "  ");
            out.println();
        }
        String secureDir = p.credentials() == null ? "" : " --secure-dir " + p.credentials().directory();
        String admin = "./lastunit admin --zookeeper " + zk + secureDir;
        out.println("Try, from another terminal:");
        out.println("  " + admin + " cells list");
        out.println("  " + admin + " check");
        if (dedicatedCell != null) {
            out.println("  " + admin + " tenants assign big-tenant " + dedicatedCell);
            out.println("  " + admin + " tenants move --tenant acme --to-cell " + dedicatedCell + " --wait");
        }
        out.println("  " + admin + " moves list");
        out.println("  " + admin + " tenants show some-tenant");
        String routerMetrics = metrics.get("router");
        out.println("  ./lastunit top --zookeeper " + zk + secureDir + (routerMetrics == null ? "" : " --metrics " + routerMetrics)
                + "   # a live view: sales/s, sheds, lanes, drift");
        if (prom != null) {
            out.println("  curl -sG " + prom.base() + "/api/v1/query --data-urlencode"
                    + " 'query=sum(rate(lastunit_holds_total[1m]))'   # holds/s, from Prometheus");
        }
        out.println("  grpcurl -plaintext " + router + " list   # the router serves reflection");
        out.println("  grpcurl -plaintext -H 'authorization: Bearer " + LocalPlatform.DEV_TOKEN + "' \\");
        out.println("    -d '{\"tenant_id\":\"acme\",\"item_id\":\"sku-1\",\"total\":10,\"home_region\":\""
                + p.shards().values().iterator().next().getRegion() + "\"}' \\");
        out.println("    " + router + " lastunit.inventory.v1.InventoryService/CreateItem");
        out.println("  (a whole session, Reserve to Release: docs/local-platform.md, \"A first session, by hand\")");
        out.println();
        out.println("Ctrl-C stops everything" + (jdbc.embedded()
                ? "; the embedded PostgreSQL's data directory is temporary and is deleted with it."
                : "; the databases stay."));
        out.flush();
    }

    void validate(List<String> regionList) {
        List<String> problems = new ArrayList<>();
        if (shards < 1 || shards > SHARDS_TOTAL_MAX) {
            problems.add("--shards " + shards + " is outside [1, " + SHARDS_TOTAL_MAX + "]");
        }
        for (String r : regionList) {
            if (!ShardSpec.isName(r) || r.length() > 32) {
                problems.add("--region '" + r + "' is not 1..32 printable ASCII characters without spaces or '/'");
            }
        }
        if (regionList.stream().distinct().count() != regionList.size()) {
            problems.add("--region repeats a region: " + regionList);
        }
        if (dedicatedShards != null && dedicatedCell == null) {
            problems.add("--dedicated-shards needs --dedicated-cell NAME");
        }
        if (dedicatedCell != null) {
            if (!ShardSpec.isName(dedicatedCell)) {
                problems.add("--dedicated-cell '" + dedicatedCell + "' is not 1..64 printable ASCII characters without spaces or '/'");
            } else if (dedicatedCell.equals(Topology.SHARED_CELL)) {
                problems.add("--dedicated-cell cannot be '" + Topology.SHARED_CELL + "' (that cell always exists)");
            }
            if (dedicatedShards() < 1 || dedicatedShards() > SHARDS_TOTAL_MAX) {
                problems.add("--dedicated-shards " + dedicatedShards() + " is outside [1, " + SHARDS_TOTAL_MAX + "]");
            }
        }
        long total = (long) regionList.size() * (shards + (dedicatedCell == null ? 0 : dedicatedShards()));
        if (problems.isEmpty() && total > SHARDS_TOTAL_MAX) {
            problems.add(total + " shard nodes in all (regions x shards per cell) is more than " + SHARDS_TOTAL_MAX
                    + " for one process");
        }
        if (routerPort < 0 || routerPort > 65_535) {
            problems.add("--router-port " + routerPort + " is outside [0, 65535]");
        }
        if (zookeeperPort != null && (zookeeperPort < 0 || zookeeperPort > 65_535)) {
            problems.add("--zookeeper-port " + zookeeperPort + " is outside [0, 65535]");
        }
        if (zookeeperPort != null && routerPort != 0 && zookeeperPort.intValue() == routerPort) {
            problems.add("--zookeeper-port and --router-port are both " + routerPort);
        }
        if (prometheusPort != null && !prometheus) {
            problems.add("--prometheus-port needs --prometheus");
        }
        if (prometheusPort != null && (prometheusPort < 0 || prometheusPort > 65_535)) {
            problems.add("--prometheus-port " + prometheusPort + " is outside [0, 65535]");
        }
        if (prometheusPort != null && prometheusPort != 0 && (prometheusPort.intValue() == routerPort
                || (zookeeperPort != null && prometheusPort.equals(zookeeperPort)))) {
            problems.add("--prometheus-port " + prometheusPort + " is also the router's or ZooKeeper's port");
        }
        if (prometheus && !onPath("prometheus")) {
            problems.add("--prometheus needs the 'prometheus' binary on the PATH (Debian: apt-get install prometheus)");
        }
        try {
            jdbc.validate(spec.commandLine());
        } catch (ParameterException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", problems));
        }
    }

    int dedicatedShards() {
        return dedicatedShards == null ? 2 : dedicatedShards;
    }

    /** The port to start ZooKeeper on; -1 means any free one. */
    private int chooseZooKeeperPort(PrintWriter out) {
        if (zookeeperPort != null) {
            if (zookeeperPort == 0) {
                return -1;
            }
            if (!isFree(zookeeperPort)) {
                throw CliError.usage("--zookeeper-port " + zookeeperPort + " is in use; pass --zookeeper-port 0 for a free one");
            }
            return zookeeperPort;
        }
        if (isFree(ZOOKEEPER_PORT_DEFAULT)) {
            return ZOOKEEPER_PORT_DEFAULT;
        }
        out.println("lastunit up: port " + ZOOKEEPER_PORT_DEFAULT + " is taken; ZooKeeper gets a free port (printed below)");
        return -1;
    }

    /** The port to start Prometheus on; 0 means any free one. */
    private int choosePrometheusPort(PrintWriter out) {
        if (prometheusPort != null) {
            if (prometheusPort != 0 && !isFree(prometheusPort)) {
                throw CliError.usage("--prometheus-port " + prometheusPort + " is in use; pass --prometheus-port 0"
                        + " for a free one");
            }
            return prometheusPort;
        }
        if (isFree(PROMETHEUS_PORT_DEFAULT)) {
            return PROMETHEUS_PORT_DEFAULT;
        }
        out.println("lastunit up: port " + PROMETHEUS_PORT_DEFAULT + " is taken; Prometheus gets a free port (printed below)");
        return 0;
    }

    /** Whether an executable {@code name} is in a directory of {@code PATH}. */
    static boolean onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(java.io.File.pathSeparator)) {
            if (!d.isEmpty() && java.nio.file.Files.isExecutable(java.nio.file.Path.of(d, name))) {
                return true;
            }
        }
        return false;
    }

    static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return t == e ? String.valueOf(m) : e.getMessage() + " (cause: " + t.getClass().getSimpleName() + ": " + m + ")";
    }
}
