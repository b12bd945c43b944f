package io.lastunit.router.wiring;

import io.lastunit.common.Limits;
import io.lastunit.router.RouterConfig;
import io.micronaut.context.annotation.ConfigurationProperties;
import java.io.File;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The {@code lastunit.router.*} settings as Micronaut binds them (application.yml, system
 * properties, LASTUNIT_ROUTER_* environment variables). Only a carrier: {@link #toConfig()}
 * builds the validated {@link RouterConfig}.
 */
@ConfigurationProperties("lastunit.router")
public class RouterProperties {
    private static final Limits LIMITS = Limits.defaults(java.util.Set.of("local"));

    private String id = "router-1";
    private String host = "127.0.0.1";
    private int port = 7400;
    private String zookeeper = "127.0.0.1:2181";
    private String namespace = "/lastunit";
    private List<String> regions = List.of("local");
    private List<String> tokens = List.of();
    private long topologyStaleMaxMs = 10_000;
    private int attemptsMax = 3;
    private long backoffBaseMs = 25;
    private long defaultDeadlineMs = 10_000;
    private long soldOutTtlMs = 250;
    private int soldOutEntriesMax = 100_000;
    private double buyerRatePerSecond = 20;
    private int buyerBurst = 40;
    private int buyersTrackedMax = 1_000_000;
    private int inFlightPerItemMax = 4_096;
    private int recentKeysMax = 1_000_000;
    private String tlsCertificate = "";
    private String tlsKey = "";
    private String shardTrustCertificate = "";
    private String tokensFile = "";
    private long tokensReloadIntervalMs = 10_000;
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
    private long pullWaitMs = 1_000;
    private int pullAttemptsMax = 3;
    private int reserveBatchMax = 256;
    private int reserveBatchesInFlightMax = 16;
    private int reserveBatchHoldAbove = 64;
    private int reserveQueueMax = 65_536;
    private long movingHoldMaxMs = 3_000;
    private boolean metricsEnabled = true;
    /** Empty: the router's own host. */
    private String metricsHost = "";
    private int metricsPort = 0;
    private long shutdownGraceMs = 0;
    /** 0: client connections live as long as the clients keep them. */
    private long maxConnectionAgeMs = 0;
    private long maxConnectionAgeGraceMs = 30_000;
    private int healthPort = io.lastunit.common.lifecycle.NodeServer.HEALTH_PORT_OFF;
    private int reserveQuantityMax = LIMITS.reserveQuantityMax();
    private long holdTtlMinMs = LIMITS.holdTtlMinMs();
    private long holdTtlMaxMs = LIMITS.holdTtlMaxMs();
    private long holdTtlDefaultMs = LIMITS.holdTtlDefaultMs();

    public RouterConfig toConfig() {
        Limits limits = new Limits(LIMITS.tenantIdLengthMax(), LIMITS.itemIdLengthMax(), LIMITS.keyLengthMax(),
                LIMITS.regionLengthMax(), reserveQuantityMax, LIMITS.itemTotalMax(), LIMITS.perBuyerLimitMax(),
                holdTtlMinMs, holdTtlMaxMs, holdTtlDefaultMs, LIMITS.bucketCountMax(), new LinkedHashSet<>(regions));
        return new RouterConfig(id, host, port, zookeeper, namespace, limits, tokens,
                Duration.ofMillis(topologyStaleMaxMs), attemptsMax, Duration.ofMillis(backoffBaseMs),
                Duration.ofMillis(defaultDeadlineMs), Duration.ofMillis(soldOutTtlMs), soldOutEntriesMax,
                buyerRatePerSecond, buyerBurst, buyersTrackedMax, inFlightPerItemMax, recentKeysMax, file(tlsCertificate),
                file(tlsKey), file(shardTrustCertificate), Duration.ofMillis(pullWaitMs), pullAttemptsMax,
                reserveBatchMax, reserveBatchesInFlightMax, reserveBatchHoldAbove, reserveQueueMax,
                Duration.ofMillis(movingHoldMaxMs), new io.lastunit.common.metrics.MetricsConfig(metricsEnabled,
                        metricsHost.isBlank() ? host : metricsHost, metricsPort), Duration.ofMillis(shutdownGraceMs),
                Duration.ofMillis(maxConnectionAgeMs), Duration.ofMillis(maxConnectionAgeGraceMs), healthPort,
                file(tokensFile), Duration.ofMillis(tokensReloadIntervalMs),
                io.lastunit.common.tls.MutualTls.fromSettings("lastunit.router.mtls-", mtlsCertificate, mtlsKey, mtlsCa,
                        mtlsReloadIntervalMs),
                io.lastunit.common.topology.ZooKeeperCredentials.parse("lastunit.router.zookeeper-credentials",
                        zookeeperCredentials),
                io.lastunit.common.tls.ZooKeeperTls.fromSettings("lastunit.router.zookeeper-tls-",
                        zookeeperTlsCertificate, zookeeperTlsKey, zookeeperTlsCa));
    }

    private static File file(String path) {
        return path == null || path.isBlank() ? null : new File(path);
    }

    public String getId() { return id; }
    public void setId(String id) { this.id = id; }
    public String getHost() { return host; }
    public void setHost(String host) { this.host = host; }
    public int getPort() { return port; }
    public void setPort(int port) { this.port = port; }
    public String getZookeeper() { return zookeeper; }
    public void setZookeeper(String zookeeper) { this.zookeeper = zookeeper; }
    public String getNamespace() { return namespace; }
    public void setNamespace(String namespace) { this.namespace = namespace; }
    public List<String> getRegions() { return regions; }
    public void setRegions(List<String> regions) { this.regions = regions; }
    public List<String> getTokens() { return tokens; }
    public void setTokens(List<String> tokens) { this.tokens = tokens; }
    public long getTopologyStaleMaxMs() { return topologyStaleMaxMs; }
    public void setTopologyStaleMaxMs(long v) { this.topologyStaleMaxMs = v; }
    public int getAttemptsMax() { return attemptsMax; }
    public void setAttemptsMax(int v) { this.attemptsMax = v; }
    public long getBackoffBaseMs() { return backoffBaseMs; }
    public void setBackoffBaseMs(long v) { this.backoffBaseMs = v; }
    public long getDefaultDeadlineMs() { return defaultDeadlineMs; }
    public void setDefaultDeadlineMs(long v) { this.defaultDeadlineMs = v; }
    public long getSoldOutTtlMs() { return soldOutTtlMs; }
    public void setSoldOutTtlMs(long v) { this.soldOutTtlMs = v; }
    public int getSoldOutEntriesMax() { return soldOutEntriesMax; }
    public void setSoldOutEntriesMax(int v) { this.soldOutEntriesMax = v; }
    public double getBuyerRatePerSecond() { return buyerRatePerSecond; }
    public void setBuyerRatePerSecond(double v) { this.buyerRatePerSecond = v; }
    public int getBuyerBurst() { return buyerBurst; }
    public void setBuyerBurst(int v) { this.buyerBurst = v; }
    public int getBuyersTrackedMax() { return buyersTrackedMax; }
    public void setBuyersTrackedMax(int v) { this.buyersTrackedMax = v; }
    public int getInFlightPerItemMax() { return inFlightPerItemMax; }
    public void setInFlightPerItemMax(int v) { this.inFlightPerItemMax = v; }
    public int getRecentKeysMax() { return recentKeysMax; }
    public void setRecentKeysMax(int v) { this.recentKeysMax = v; }
    public String getTlsCertificate() { return tlsCertificate; }
    public void setTlsCertificate(String v) { this.tlsCertificate = v; }
    public String getTlsKey() { return tlsKey; }
    public void setTlsKey(String v) { this.tlsKey = v; }
    public String getTokensFile() { return tokensFile; }
    public void setTokensFile(String v) { this.tokensFile = v; }
    public long getTokensReloadIntervalMs() { return tokensReloadIntervalMs; }
    public void setTokensReloadIntervalMs(long v) { this.tokensReloadIntervalMs = v; }
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
    public String getShardTrustCertificate() { return shardTrustCertificate; }
    public void setShardTrustCertificate(String v) { this.shardTrustCertificate = v; }
    public long getPullWaitMs() { return pullWaitMs; }
    public void setPullWaitMs(long v) { this.pullWaitMs = v; }
    public int getPullAttemptsMax() { return pullAttemptsMax; }
    public void setPullAttemptsMax(int v) { this.pullAttemptsMax = v; }
    public int getReserveBatchMax() { return reserveBatchMax; }
    public void setReserveBatchMax(int v) { this.reserveBatchMax = v; }
    public int getReserveBatchesInFlightMax() { return reserveBatchesInFlightMax; }
    public void setReserveBatchesInFlightMax(int v) { this.reserveBatchesInFlightMax = v; }
    public int getReserveBatchHoldAbove() { return reserveBatchHoldAbove; }
    public void setReserveBatchHoldAbove(int v) { this.reserveBatchHoldAbove = v; }
    public int getReserveQueueMax() { return reserveQueueMax; }
    public void setReserveQueueMax(int v) { this.reserveQueueMax = v; }
    public long getMovingHoldMaxMs() { return movingHoldMaxMs; }
    public void setMovingHoldMaxMs(long v) { this.movingHoldMaxMs = v; }
    public boolean isMetricsEnabled() { return metricsEnabled; }
    public void setMetricsEnabled(boolean v) { this.metricsEnabled = v; }
    public String getMetricsHost() { return metricsHost; }
    public void setMetricsHost(String v) { this.metricsHost = v; }
    public long getShutdownGraceMs() { return shutdownGraceMs; }
    public void setShutdownGraceMs(long v) { this.shutdownGraceMs = v; }
    public long getMaxConnectionAgeMs() { return maxConnectionAgeMs; }
    public void setMaxConnectionAgeMs(long v) { this.maxConnectionAgeMs = v; }
    public long getMaxConnectionAgeGraceMs() { return maxConnectionAgeGraceMs; }
    public void setMaxConnectionAgeGraceMs(long v) { this.maxConnectionAgeGraceMs = v; }
    public int getHealthPort() { return healthPort; }
    public void setHealthPort(int v) { this.healthPort = v; }
    public int getMetricsPort() { return metricsPort; }
    public void setMetricsPort(int v) { this.metricsPort = v; }
    public int getReserveQuantityMax() { return reserveQuantityMax; }
    public void setReserveQuantityMax(int v) { this.reserveQuantityMax = v; }
    public long getHoldTtlMinMs() { return holdTtlMinMs; }
    public void setHoldTtlMinMs(long v) { this.holdTtlMinMs = v; }
    public long getHoldTtlMaxMs() { return holdTtlMaxMs; }
    public void setHoldTtlMaxMs(long v) { this.holdTtlMaxMs = v; }
    public long getHoldTtlDefaultMs() { return holdTtlDefaultMs; }
    public void setHoldTtlDefaultMs(long v) { this.holdTtlDefaultMs = v; }
}
