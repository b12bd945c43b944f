package io.lastunit.balancer;

import io.lastunit.balancer.plan.BalancePolicy;
import io.lastunit.common.invariant.DriftTracker;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything a balancer needs to start, validated as a whole: a bad setting fails start-up with
 * every problem named in one message, never clamped. Immutable. Defaults: {@link #defaults}.
 *
 * @param host                  address the gRPC server binds (127.0.0.1 by default)
 * @param port                  gRPC port; 0 picks a free one
 * @param advertisedAddress     host:port published as participant id and endpoint; empty = host:port
 * @param zookeeper             ZooKeeper connect string
 * @param namespace             the topology's root znode
 * @param zookeeperSessionTimeout ZooKeeper session; a crashed leader is replaced after about this long
 * @param topologyStaleMax      how long a suspended session may serve the last topology
 * @param interval              period of the balancing loop
 * @param hysteresis            a region moves only when its available leaves target ± this fraction
 * @param minTransfer           fewest units a rebalance moves (less only when that is all a donor has)
 * @param collapseFraction      an item collapses at Σ available <= max(collapseMin, this × total)
 * @param collapseMin           see collapseFraction
 * @param demandFloor           fraction of the remaining stock spread evenly before demand shares the rest
 * @param demandWindow          sliding window of the demand rates
 * @param invariantInterval     period of the cross-shard invariant check
 * @param invariantConsecutive  checks in a row an item must drift in before it is reported
 * @param stepAttemptsMax       attempts per transfer step (first included)
 * @param stepTimeout           deadline of each shard call
 * @param recoveryInterval      how often, and past which age, PENDING transfers are completed by the loop
 * @param movesPerTickMax       most transfers the loop starts in one interval
 * @param pullThreads           threads serving pulls
 * @param pullQueueMax          pulls waiting for a thread; more are refused (RESOURCE_EXHAUSTED)
 * @param metricsLogInterval    period of the metrics summary log line
 * @param metrics               the management port ({@code /metrics}); the meters exist only when enabled
 * @param shardTrustCertificate PEM CA of the shard nodes' certificates, or null (plaintext)
 * @param tlsCertificate        PEM certificate chain of the balancer's listener, or null (plaintext);
 *                              routers dial the leader trusting the shard nodes' CA
 * @param tlsKey                PKCS#8 PEM key of the listener, or null
 * @param shutdownGrace         how long a stopping balancer says NOT_SERVING (process and
 *                              BalancerService) while it still takes calls, before it gives up the
 *                              lead and stops: 0 to 5 minutes
 * @param healthPort            a plaintext port serving only gRPC health, for probes that cannot speak TLS;
 *                              {@code -1}: none, 0: any free one
 * @param mutualTls             mutual TLS (null: off): the listener serves TLS and admits routers only
 *                              (BalancerAllowList), and shard nodes are dialled with this identity; not
 *                              with tlsCertificate or shardTrustCertificate
 * @param zookeeperCredentials  lastunit's ZooKeeper credentials (its znodes get their ACL), or null: none
 * @param zookeeperTls          TLS to ZooKeeper's secure client port, or null: plaintext
 */
public record BalancerConfig(
        String host,
        int port,
        String advertisedAddress,
        String zookeeper,
        String namespace,
        Duration zookeeperSessionTimeout,
        Duration topologyStaleMax,
        Duration interval,
        double hysteresis,
        long minTransfer,
        double collapseFraction,
        long collapseMin,
        double demandFloor,
        Duration demandWindow,
        Duration invariantInterval,
        int invariantConsecutive,
        int stepAttemptsMax,
        Duration stepTimeout,
        Duration recoveryInterval,
        int movesPerTickMax,
        int pullThreads,
        int pullQueueMax,
        Duration metricsLogInterval,
        File shardTrustCertificate,
        File tlsCertificate,
        File tlsKey,
        io.lastunit.common.metrics.MetricsConfig metrics,
        Duration shutdownGrace,
        int healthPort,
        io.lastunit.common.tls.MutualTls mutualTls,
        io.lastunit.common.topology.ZooKeeperCredentials zookeeperCredentials,
        io.lastunit.common.tls.ZooKeeperTls zookeeperTls) {

    public BalancerConfig {
        List<String> problems = new ArrayList<>();
        if (host == null || host.isBlank()) {
            problems.add("host is required");
        }
        if (port < 0 || port > 65_535) {
            problems.add("port=" + port + " is outside [0, 65535]");
        }
        if (advertisedAddress == null || (!advertisedAddress.isEmpty() && !advertisedAddress.matches("[^\\s:]+:\\d{1,5}"))) {
            problems.add("advertisedAddress must be empty or host:port, got '" + advertisedAddress + "'");
        }
        if (zookeeper == null || zookeeper.isBlank()) {
            problems.add("zookeeper (connect string) is required");
        }
        if (namespace == null || !namespace.startsWith("/") || namespace.length() < 2 || namespace.endsWith("/")) {
            problems.add("namespace must be an absolute znode path without a trailing slash, got " + namespace);
        }
        within(problems, "zookeeperSessionTimeout", zookeeperSessionTimeout, Duration.ofMillis(500), Duration.ofMinutes(5));
        within(problems, "topologyStaleMax", topologyStaleMax, Duration.ofMillis(1), Duration.ofMinutes(10));
        within(problems, "interval", interval, Duration.ofMillis(10), Duration.ofHours(24));
        within(problems, "demandWindow", demandWindow, Duration.ofMillis(10), Duration.ofHours(1));
        within(problems, "invariantInterval", invariantInterval, Duration.ofMillis(10), Duration.ofHours(24));
        within(problems, "stepTimeout", stepTimeout, Duration.ofMillis(10), Duration.ofMinutes(5));
        within(problems, "recoveryInterval", recoveryInterval, Duration.ofMillis(10), Duration.ofHours(24));
        within(problems, "metricsLogInterval", metricsLogInterval, Duration.ofSeconds(1), Duration.ofHours(24));
        within(problems, "shutdownGrace", shutdownGrace, Duration.ZERO, Duration.ofMinutes(5));
        if (!io.lastunit.common.lifecycle.NodeServer.isHealthPort(healthPort)) {
            problems.add("healthPort=" + healthPort + " is not -1 (none), 0 (any free one) or a port up to 65535");
        }
        try {
            new BalancePolicy(hysteresis, minTransfer, collapseFraction, collapseMin, demandFloor);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        if (invariantConsecutive < 1 || invariantConsecutive > DriftTracker.CONSECUTIVE_MAX) {
            problems.add("invariantConsecutive=" + invariantConsecutive + " is outside [1, "
                    + DriftTracker.CONSECUTIVE_MAX + "]");
        }
        if (stepAttemptsMax < 1 || stepAttemptsMax > 20) {
            problems.add("stepAttemptsMax=" + stepAttemptsMax + " is outside [1, 20]");
        }
        if (movesPerTickMax < 1 || movesPerTickMax > 100_000) {
            problems.add("movesPerTickMax=" + movesPerTickMax + " is outside [1, 100000]");
        }
        if (pullThreads < 1 || pullThreads > 256) {
            problems.add("pullThreads=" + pullThreads + " is outside [1, 256]");
        }
        if (pullQueueMax < 1 || pullQueueMax > 1_000_000) {
            problems.add("pullQueueMax=" + pullQueueMax + " is outside [1, 1000000]");
        }
        if (metrics == null) {
            problems.add("metrics is required (MetricsConfig.OFF to turn them off)");
        }
        if ((tlsCertificate == null) != (tlsKey == null)) {
            problems.add("tlsCertificate and tlsKey go together");
        }
        if (mutualTls != null && (tlsCertificate != null || shardTrustCertificate != null)) {
            problems.add("mtls-* (mutual TLS) and tls-certificate / shard-trust-certificate (TLS without client"
                    + " certificates) are both set: give one");
        }
        for (File f : new File[] {shardTrustCertificate, tlsCertificate, tlsKey}) {
            if (f != null && !f.canRead()) {
                problems.add("cannot read " + f);
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid balancer config: " + String.join("; ", problems));
        }
    }

    /** The defaults of {@code application.yml}, for a balancer of the given ZooKeeper. */
    public static BalancerConfig defaults(String zookeeper) {
        return new BalancerConfig("127.0.0.1", 7500, "", zookeeper, "/lastunit", Duration.ofSeconds(15),
                Duration.ofSeconds(10), Duration.ofSeconds(1), 0.25, 16, 0.02, 64, 0.1, Duration.ofSeconds(10),
                Duration.ofSeconds(5), 2, 3, Duration.ofSeconds(5), Duration.ofSeconds(10), 256, 4, 1_024,
                Duration.ofSeconds(60), null, null, null, io.lastunit.common.metrics.MetricsConfig.on("127.0.0.1"),
                Duration.ZERO, io.lastunit.common.lifecycle.NodeServer.HEALTH_PORT_OFF, null, null, null);
    }

    public BalancePolicy policy() {
        return new BalancePolicy(hysteresis, minTransfer, collapseFraction, collapseMin, demandFloor);
    }

    private static void within(List<String> problems, String name, Duration d, Duration min, Duration max) {
        if (d == null || d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            problems.add(name + "=" + d + " is outside [" + min + ", " + max + "]");
        }
    }

    /** A copy with other settings, for tests and tools: {@code c.with(b -> b.port = 0)}. */
    public BalancerConfig with(java.util.function.Consumer<Builder> change) {
        Builder b = new Builder(this);
        change.accept(b);
        return b.build();
    }

    /** Mutable fields of a config, to derive one from another. Not thread-safe. */
    public static final class Builder {
        public String host;
        public int port;
        public String advertisedAddress;
        public String zookeeper;
        public String namespace;
        public Duration zookeeperSessionTimeout;
        public Duration topologyStaleMax;
        public Duration interval;
        public double hysteresis;
        public long minTransfer;
        public double collapseFraction;
        public long collapseMin;
        public double demandFloor;
        public Duration demandWindow;
        public Duration invariantInterval;
        public int invariantConsecutive;
        public int stepAttemptsMax;
        public Duration stepTimeout;
        public Duration recoveryInterval;
        public int movesPerTickMax;
        public int pullThreads;
        public int pullQueueMax;
        public Duration metricsLogInterval;
        public File shardTrustCertificate;
        public File tlsCertificate;
        public File tlsKey;
        public io.lastunit.common.metrics.MetricsConfig metrics;
        public Duration shutdownGrace;
        public int healthPort;
        public io.lastunit.common.tls.MutualTls mutualTls;
        public io.lastunit.common.topology.ZooKeeperCredentials zookeeperCredentials;
        public io.lastunit.common.tls.ZooKeeperTls zookeeperTls;

        Builder(BalancerConfig c) {
            host = c.host;
            port = c.port;
            advertisedAddress = c.advertisedAddress;
            zookeeper = c.zookeeper;
            namespace = c.namespace;
            zookeeperSessionTimeout = c.zookeeperSessionTimeout;
            topologyStaleMax = c.topologyStaleMax;
            interval = c.interval;
            hysteresis = c.hysteresis;
            minTransfer = c.minTransfer;
            collapseFraction = c.collapseFraction;
            collapseMin = c.collapseMin;
            demandFloor = c.demandFloor;
            demandWindow = c.demandWindow;
            invariantInterval = c.invariantInterval;
            invariantConsecutive = c.invariantConsecutive;
            stepAttemptsMax = c.stepAttemptsMax;
            stepTimeout = c.stepTimeout;
            recoveryInterval = c.recoveryInterval;
            movesPerTickMax = c.movesPerTickMax;
            pullThreads = c.pullThreads;
            pullQueueMax = c.pullQueueMax;
            metricsLogInterval = c.metricsLogInterval;
            shardTrustCertificate = c.shardTrustCertificate;
            tlsCertificate = c.tlsCertificate;
            tlsKey = c.tlsKey;
            metrics = c.metrics;
            shutdownGrace = c.shutdownGrace;
            healthPort = c.healthPort;
            mutualTls = c.mutualTls;
            zookeeperCredentials = c.zookeeperCredentials;
            zookeeperTls = c.zookeeperTls;
        }

        BalancerConfig build() {
            return new BalancerConfig(host, port, advertisedAddress, zookeeper, namespace, zookeeperSessionTimeout,
                    topologyStaleMax, interval, hysteresis, minTransfer, collapseFraction, collapseMin, demandFloor,
                    demandWindow, invariantInterval, invariantConsecutive, stepAttemptsMax, stepTimeout,
                    recoveryInterval, movesPerTickMax, pullThreads, pullQueueMax, metricsLogInterval,
                    shardTrustCertificate, tlsCertificate, tlsKey, metrics, shutdownGrace, healthPort,
                    mutualTls, zookeeperCredentials, zookeeperTls);
        }
    }
}
