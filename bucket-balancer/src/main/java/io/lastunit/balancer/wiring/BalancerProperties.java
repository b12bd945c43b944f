package io.lastunit.balancer.wiring;

import io.lastunit.balancer.BalancerConfig;
import io.micronaut.context.annotation.ConfigurationProperties;
import java.io.File;
import java.time.Duration;

/**
 * The {@code lastunit.balancer.*} settings as Micronaut binds them (application.yml, system
 * properties, LASTUNIT_BALANCER_* environment variables). Only a carrier: {@link #toConfig()}
 * builds the validated {@link BalancerConfig}; the defaults are {@link BalancerConfig#defaults}.
 */
@ConfigurationProperties("lastunit.balancer")
public class BalancerProperties {
    private static final BalancerConfig D = BalancerConfig.defaults("127.0.0.1:2181");

    private String host = D.host();
    private int port = D.port();
    private String advertisedAddress = D.advertisedAddress();
    private String zookeeper = D.zookeeper();
    private String namespace = D.namespace();
    private long zookeeperSessionTimeoutMs = D.zookeeperSessionTimeout().toMillis();
    private long topologyStaleMaxMs = D.topologyStaleMax().toMillis();
    private long intervalMs = D.interval().toMillis();
    private double hysteresis = D.hysteresis();
    private long minTransfer = D.minTransfer();
    private double collapseFraction = D.collapseFraction();
    private long collapseMin = D.collapseMin();
    private double demandFloor = D.demandFloor();
    private long demandWindowMs = D.demandWindow().toMillis();
    private long invariantIntervalMs = D.invariantInterval().toMillis();
    private int invariantConsecutive = D.invariantConsecutive();
    private int stepAttemptsMax = D.stepAttemptsMax();
    private long stepTimeoutMs = D.stepTimeout().toMillis();
    private long recoveryIntervalMs = D.recoveryInterval().toMillis();
    private int movesPerTickMax = D.movesPerTickMax();
    private int pullThreads = D.pullThreads();
    private int pullQueueMax = D.pullQueueMax();
    private long metricsLogIntervalMs = D.metricsLogInterval().toMillis();
    private String shardTrustCertificate = "";
    private String tlsCertificate = "";
    private String tlsKey = "";
    private String mtlsCertificate = "";
    private String mtlsKey = "";
    private String mtlsCa = "";
    private long mtlsReloadIntervalMs = io.lastunit.common.tls.MutualTls.RELOAD_INTERVAL_DEFAULT.toMillis();
    /** {@code user:password}; empty: no ZooKeeper credentials, open ACLs. */
    private String zookeeperCredentials = "";
    /** PEM files for TLS to ZooKeeper's secure client port; all empty: plaintext. */
    private String zookeeperTlsCertificate = "";
    private String zookeeperTlsKey = "";
    private String zookeeperTlsCa = "";
    private boolean metricsEnabled = D.metrics().enabled();
    /** Empty: the balancer's own host. */
    private String metricsHost = "";
    private int metricsPort = D.metrics().port();
    private long shutdownGraceMs = D.shutdownGrace().toMillis();
    private int healthPort = D.healthPort();

    public BalancerConfig toConfig() {
        return new BalancerConfig(host, port, advertisedAddress, zookeeper, namespace,
                Duration.ofMillis(zookeeperSessionTimeoutMs), Duration.ofMillis(topologyStaleMaxMs),
                Duration.ofMillis(intervalMs), hysteresis, minTransfer, collapseFraction, collapseMin, demandFloor,
                Duration.ofMillis(demandWindowMs), Duration.ofMillis(invariantIntervalMs), invariantConsecutive,
                stepAttemptsMax, Duration.ofMillis(stepTimeoutMs), Duration.ofMillis(recoveryIntervalMs),
                movesPerTickMax, pullThreads, pullQueueMax, Duration.ofMillis(metricsLogIntervalMs),
                file(shardTrustCertificate), file(tlsCertificate), file(tlsKey),
                new io.lastunit.common.metrics.MetricsConfig(metricsEnabled, metricsHost.isBlank() ? host : metricsHost,
                        metricsPort), Duration.ofMillis(shutdownGraceMs), healthPort,
                io.lastunit.common.tls.MutualTls.fromSettings("lastunit.balancer.mtls-", mtlsCertificate, mtlsKey, mtlsCa,
                        mtlsReloadIntervalMs),
                io.lastunit.common.topology.ZooKeeperCredentials.parse("lastunit.balancer.zookeeper-credentials",
                        zookeeperCredentials),
                io.lastunit.common.tls.ZooKeeperTls.fromSettings("lastunit.balancer.zookeeper-tls-",
                        zookeeperTlsCertificate, zookeeperTlsKey, zookeeperTlsCa));
    }

    private static File file(String path) {
        return path == null || path.isBlank() ? null : new File(path);
    }

    public int getHealthPort() { return healthPort; }
    public void setHealthPort(int v) { this.healthPort = v; }
    public long getShutdownGraceMs() { return shutdownGraceMs; }
    public void setShutdownGraceMs(long v) { this.shutdownGraceMs = v; }
    public boolean isMetricsEnabled() { return metricsEnabled; }
    public void setMetricsEnabled(boolean v) { this.metricsEnabled = v; }
    public String getMetricsHost() { return metricsHost; }
    public void setMetricsHost(String v) { this.metricsHost = v; }
    public int getMetricsPort() { return metricsPort; }
    public void setMetricsPort(int v) { this.metricsPort = v; }
    public String getHost() { return host; }
    public void setHost(String v) { this.host = v; }
    public int getPort() { return port; }
    public void setPort(int v) { this.port = v; }
    public String getAdvertisedAddress() { return advertisedAddress; }
    public void setAdvertisedAddress(String v) { this.advertisedAddress = v; }
    public String getZookeeper() { return zookeeper; }
    public void setZookeeper(String v) { this.zookeeper = v; }
    public String getNamespace() { return namespace; }
    public void setNamespace(String v) { this.namespace = v; }
    public long getZookeeperSessionTimeoutMs() { return zookeeperSessionTimeoutMs; }
    public void setZookeeperSessionTimeoutMs(long v) { this.zookeeperSessionTimeoutMs = v; }
    public long getTopologyStaleMaxMs() { return topologyStaleMaxMs; }
    public void setTopologyStaleMaxMs(long v) { this.topologyStaleMaxMs = v; }
    public long getIntervalMs() { return intervalMs; }
    public void setIntervalMs(long v) { this.intervalMs = v; }
    public double getHysteresis() { return hysteresis; }
    public void setHysteresis(double v) { this.hysteresis = v; }
    public long getMinTransfer() { return minTransfer; }
    public void setMinTransfer(long v) { this.minTransfer = v; }
    public double getCollapseFraction() { return collapseFraction; }
    public void setCollapseFraction(double v) { this.collapseFraction = v; }
    public long getCollapseMin() { return collapseMin; }
    public void setCollapseMin(long v) { this.collapseMin = v; }
    public double getDemandFloor() { return demandFloor; }
    public void setDemandFloor(double v) { this.demandFloor = v; }
    public long getDemandWindowMs() { return demandWindowMs; }
    public void setDemandWindowMs(long v) { this.demandWindowMs = v; }
    public long getInvariantIntervalMs() { return invariantIntervalMs; }
    public void setInvariantIntervalMs(long v) { this.invariantIntervalMs = v; }
    public int getInvariantConsecutive() { return invariantConsecutive; }
    public void setInvariantConsecutive(int v) { this.invariantConsecutive = v; }
    public int getStepAttemptsMax() { return stepAttemptsMax; }
    public void setStepAttemptsMax(int v) { this.stepAttemptsMax = v; }
    public long getStepTimeoutMs() { return stepTimeoutMs; }
    public void setStepTimeoutMs(long v) { this.stepTimeoutMs = v; }
    public long getRecoveryIntervalMs() { return recoveryIntervalMs; }
    public void setRecoveryIntervalMs(long v) { this.recoveryIntervalMs = v; }
    public int getMovesPerTickMax() { return movesPerTickMax; }
    public void setMovesPerTickMax(int v) { this.movesPerTickMax = v; }
    public int getPullThreads() { return pullThreads; }
    public void setPullThreads(int v) { this.pullThreads = v; }
    public int getPullQueueMax() { return pullQueueMax; }
    public void setPullQueueMax(int v) { this.pullQueueMax = v; }
    public long getMetricsLogIntervalMs() { return metricsLogIntervalMs; }
    public void setMetricsLogIntervalMs(long v) { this.metricsLogIntervalMs = v; }
    public String getShardTrustCertificate() { return shardTrustCertificate; }
    public void setShardTrustCertificate(String v) { this.shardTrustCertificate = v; }
    public String getMtlsCertificate() { return mtlsCertificate; }
    public void setMtlsCertificate(String v) { this.mtlsCertificate = v; }
    public String getMtlsKey() { return mtlsKey; }
    public void setMtlsKey(String v) { this.mtlsKey = v; }
    public String getMtlsCa() { return mtlsCa; }
    public void setMtlsCa(String v) { this.mtlsCa = v; }
    public long getMtlsReloadIntervalMs() { return mtlsReloadIntervalMs; }
    public void setMtlsReloadIntervalMs(long v) { this.mtlsReloadIntervalMs = v; }
    public String getZookeeperCredentials() { return zookeeperCredentials; }
    public void setZookeeperCredentials(String v) { this.zookeeperCredentials = v; }
    public String getZookeeperTlsCertificate() { return zookeeperTlsCertificate; }
    public void setZookeeperTlsCertificate(String v) { this.zookeeperTlsCertificate = v; }
    public String getZookeeperTlsKey() { return zookeeperTlsKey; }
    public void setZookeeperTlsKey(String v) { this.zookeeperTlsKey = v; }
    public String getZookeeperTlsCa() { return zookeeperTlsCa; }
    public void setZookeeperTlsCa(String v) { this.zookeeperTlsCa = v; }
    public String getTlsCertificate() { return tlsCertificate; }
    public void setTlsCertificate(String v) { this.tlsCertificate = v; }
    public String getTlsKey() { return tlsKey; }
    public void setTlsKey(String v) { this.tlsKey = v; }
}
