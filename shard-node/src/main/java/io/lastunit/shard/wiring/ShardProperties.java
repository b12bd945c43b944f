package io.lastunit.shard.wiring;

import io.lastunit.common.Limits;
import io.lastunit.shard.ShardConfig;
import io.lastunit.shard.lane.LaneConfig;
import io.lastunit.shard.retention.RetentionConfig;
import io.micronaut.context.annotation.ConfigurationProperties;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The {@code lastunit.shard.*} settings as Micronaut binds them (application.yml, system
 * properties, environment variables such as {@code LASTUNIT_SHARD_JDBC_URL}). Only a carrier:
 * {@link #toConfig()} builds the validated {@link ShardConfig}. Defaults live here and in
 * {@link Limits#defaults} / {@link LaneConfig#defaults} / {@link RetentionConfig#defaults}.
 */
@ConfigurationProperties("lastunit.shard")
public class ShardProperties {
    private static final Limits LIMITS = Limits.defaults(java.util.Set.of("local"));
    private static final LaneConfig LANES = LaneConfig.defaults();
    private static final RetentionConfig RETENTION = RetentionConfig.defaults();

    private String id = "shard-1";
    private String host = "127.0.0.1";
    private int port = 7443;
    private List<String> regions = List.of("local");
    private String jdbcUrl = "";
    private boolean embedded = false;
    private String jdbcUser = "lastunit";
    private String jdbcPassword = "lastunit";
    private int poolSize = 0;
    private static final ShardConfig.DbTimeouts TIMEOUTS = ShardConfig.DbTimeouts.DEFAULTS;
    private long jdbcConnectTimeoutMs = TIMEOUTS.connect().toMillis();
    private long jdbcSocketTimeoutMs = TIMEOUTS.socket().toMillis();
    private long jdbcLockTimeoutMs = TIMEOUTS.lock().toMillis();
    private long jdbcIdleInTransactionTimeoutMs = TIMEOUTS.idleInTransaction().toMillis();
    private long jdbcReadStatementTimeoutMs = TIMEOUTS.readStatement().toMillis();
    private long jdbcStandbyCheckIntervalMs = TIMEOUTS.standbyCheck().toMillis();
    private boolean metricsEnabled = true;
    /** Empty: the node's own host. */
    private String metricsHost = "";
    private int metricsPort = 0;
    private long invariantCheckIntervalMs = ShardConfig.Observability.INVARIANT_CHECK_DEFAULT.toMillis();
    private long databaseSampleIntervalMs = ShardConfig.Observability.DATABASE_SAMPLE_DEFAULT.toMillis();
    private long readinessDatabaseDownMaxMs = ShardConfig.Observability.DATABASE_DOWN_MAX_DEFAULT.toMillis();
    private long readinessLaneStuckMaxMs = ShardConfig.Observability.LANE_STUCK_MAX_DEFAULT.toMillis();
    private long shutdownGraceMs = 0;
    private int healthPort = io.lastunit.common.lifecycle.NodeServer.HEALTH_PORT_OFF;

    private int lanes = LANES.laneCount();
    private int queueCapacity = LANES.queueCapacity();
    private int batchMax = LANES.batchMax();
    private long batchIntervalMicros = LANES.batchIntervalMicros();
    private int paceBelow = LANES.paceBelow();
    private int redoMax = LANES.redoMax();
    private int keyIndexMax = LANES.keyIndexMax();
    private int sweepBatchMax = LANES.sweepBatchMax();
    private long retryAfterMs = LANES.retryAfterMs();

    private String zookeeper = "";
    private String namespace = "/lastunit";
    private String advertisedAddress = "";
    private long topologyStaleMaxMs = 10_000;
    private long zookeeperSessionTimeoutMs = ShardConfig.Topology.SESSION_TIMEOUT_DEFAULT.toMillis();

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

    private long sweepIntervalMs = 1_000;
    private int sweepBucketsPerTickMax = 10_000;
    private int readThreads = 2;
    private int readQueueCapacity = 4_096;

    private int tenantIdLengthMax = LIMITS.tenantIdLengthMax();
    private int itemIdLengthMax = LIMITS.itemIdLengthMax();
    private int keyLengthMax = LIMITS.keyLengthMax();
    private int regionLengthMax = LIMITS.regionLengthMax();
    private int reserveQuantityMax = LIMITS.reserveQuantityMax();
    private long itemTotalMax = LIMITS.itemTotalMax();
    private int perBuyerLimitMax = LIMITS.perBuyerLimitMax();
    private long holdTtlMinMs = LIMITS.holdTtlMinMs();
    private long holdTtlMaxMs = LIMITS.holdTtlMaxMs();
    private long holdTtlDefaultMs = LIMITS.holdTtlDefaultMs();
    private int bucketCountMax = LIMITS.bucketCountMax();
    private long collapseBelow = LANES.collapseBelow();
    private long unitsPerBucket = LANES.unitsPerBucket();
    private int defaultBucketsMax = LANES.defaultBucketsMax();

    private boolean retentionEnabled = RETENTION.enabled();
    private long retentionIntervalMs = RETENTION.interval().toMillis();
    private long retentionHoldsAfterMs = RETENTION.holdsAfter().toMillis();
    private long retentionTransfersAfterMs = RETENTION.transfersAfter().toMillis();
    private int retentionBatchMax = RETENTION.batchMax();
    private int retentionBatchesPerRunMax = RETENTION.batchesPerRunMax();
    private long retentionBatchPauseMs = RETENTION.batchPause().toMillis();

    /**
     * The validated config. A node needs a database: a {@code jdbc-url}, or {@code embedded=true}
     * for a throwaway PostgreSQL of its own; neither, or both, is refused here.
     */
    public ShardConfig toConfig() {
        if (jdbcUrl.isBlank() && !embedded) {
            throw new IllegalArgumentException("invalid shard config: no database: set lastunit.shard.jdbc-url"
                    + " (LASTUNIT_SHARD_JDBC_URL) to the shard's PostgreSQL, or lastunit.shard.embedded=true"
                    + " (LASTUNIT_SHARD_EMBEDDED=true) for an embedded PostgreSQL whose data is deleted when the node stops");
        }
        if (!jdbcUrl.isBlank() && embedded) {
            throw new IllegalArgumentException("invalid shard config: lastunit.shard.jdbc-url and"
                    + " lastunit.shard.embedded=true are both set: give one (LASTUNIT_SHARD_JDBC_URL or"
                    + " LASTUNIT_SHARD_EMBEDDED=true)");
        }
        Limits limits = new Limits(tenantIdLengthMax, itemIdLengthMax, keyLengthMax, regionLengthMax,
                reserveQuantityMax, itemTotalMax, perBuyerLimitMax, holdTtlMinMs, holdTtlMaxMs, holdTtlDefaultMs,
                bucketCountMax, new LinkedHashSet<>(regions));
        LaneConfig laneConfig = new LaneConfig(lanes, queueCapacity, batchMax, batchIntervalMicros, paceBelow, redoMax,
                keyIndexMax, sweepBatchMax, retryAfterMs, collapseBelow, unitsPerBucket, defaultBucketsMax);
        return new ShardConfig(id, host, port, new ShardConfig.Jdbc(jdbcUrl, jdbcUser, jdbcPassword, poolSize,
                new ShardConfig.DbTimeouts(Duration.ofMillis(jdbcConnectTimeoutMs), Duration.ofMillis(jdbcSocketTimeoutMs),
                        Duration.ofMillis(jdbcLockTimeoutMs), Duration.ofMillis(jdbcIdleInTransactionTimeoutMs),
                        Duration.ofMillis(jdbcReadStatementTimeoutMs), Duration.ofMillis(jdbcStandbyCheckIntervalMs))),
                limits, laneConfig, Duration.ofMillis(sweepIntervalMs), sweepBucketsPerTickMax, readThreads,
                readQueueCapacity, new ShardConfig.Topology(zookeeper, namespace, advertisedAddress,
                Duration.ofMillis(topologyStaleMaxMs), regions.isEmpty() ? "" : regions.get(0),
                Duration.ofMillis(zookeeperSessionTimeoutMs), io.lastunit.common.topology.ZooKeeperCredentials.parse(
                        "lastunit.shard.zookeeper-credentials", zookeeperCredentials),
                io.lastunit.common.tls.ZooKeeperTls.fromSettings("lastunit.shard.zookeeper-tls-",
                        zookeeperTlsCertificate, zookeeperTlsKey, zookeeperTlsCa)),
                new ShardConfig.Tls(tlsCertificate.isBlank() ? null : new java.io.File(tlsCertificate),
                        tlsKey.isBlank() ? null : new java.io.File(tlsKey),
                        io.lastunit.common.tls.MutualTls.fromSettings("lastunit.shard.mtls-", mtlsCertificate, mtlsKey,
                                mtlsCa, mtlsReloadIntervalMs)),
                new RetentionConfig(retentionEnabled, Duration.ofMillis(retentionIntervalMs),
                        Duration.ofMillis(retentionHoldsAfterMs), Duration.ofMillis(retentionTransfersAfterMs),
                        retentionBatchMax, retentionBatchesPerRunMax, Duration.ofMillis(retentionBatchPauseMs)),
                new ShardConfig.Observability(new io.lastunit.common.metrics.MetricsConfig(metricsEnabled,
                        metricsHost.isBlank() ? host : metricsHost, metricsPort),
                        Duration.ofMillis(invariantCheckIntervalMs), Duration.ofMillis(databaseSampleIntervalMs),
                        Duration.ofMillis(readinessDatabaseDownMaxMs), Duration.ofMillis(readinessLaneStuckMaxMs),
                        Duration.ofMillis(shutdownGraceMs), healthPort));
    }

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
    public String getZookeeper() { return zookeeper; }
    public void setZookeeper(String zookeeper) { this.zookeeper = zookeeper; }
    public String getNamespace() { return namespace; }
    public void setNamespace(String namespace) { this.namespace = namespace; }
    public String getAdvertisedAddress() { return advertisedAddress; }
    public void setAdvertisedAddress(String advertisedAddress) { this.advertisedAddress = advertisedAddress; }
    public long getZookeeperSessionTimeoutMs() { return zookeeperSessionTimeoutMs; }
    public void setZookeeperSessionTimeoutMs(long v) { this.zookeeperSessionTimeoutMs = v; }
    public long getTopologyStaleMaxMs() { return topologyStaleMaxMs; }
    public void setTopologyStaleMaxMs(long v) { this.topologyStaleMaxMs = v; }
    public String getId() { return id; }
    public void setId(String id) { this.id = id; }
    public String getHost() { return host; }
    public void setHost(String host) { this.host = host; }
    public int getPort() { return port; }
    public void setPort(int port) { this.port = port; }
    public List<String> getRegions() { return regions; }
    public void setRegions(List<String> regions) { this.regions = regions; }
    public String getJdbcUrl() { return jdbcUrl; }
    public void setJdbcUrl(String jdbcUrl) { this.jdbcUrl = jdbcUrl; }
    public boolean isEmbedded() { return embedded; }
    public void setEmbedded(boolean embedded) { this.embedded = embedded; }
    public String getJdbcUser() { return jdbcUser; }
    public void setJdbcUser(String jdbcUser) { this.jdbcUser = jdbcUser; }
    public String getJdbcPassword() { return jdbcPassword; }
    public void setJdbcPassword(String jdbcPassword) { this.jdbcPassword = jdbcPassword; }
    public long getJdbcConnectTimeoutMs() { return jdbcConnectTimeoutMs; }
    public void setJdbcConnectTimeoutMs(long v) { this.jdbcConnectTimeoutMs = v; }
    public long getJdbcSocketTimeoutMs() { return jdbcSocketTimeoutMs; }
    public void setJdbcSocketTimeoutMs(long v) { this.jdbcSocketTimeoutMs = v; }
    public long getJdbcLockTimeoutMs() { return jdbcLockTimeoutMs; }
    public void setJdbcLockTimeoutMs(long v) { this.jdbcLockTimeoutMs = v; }
    public long getJdbcIdleInTransactionTimeoutMs() { return jdbcIdleInTransactionTimeoutMs; }
    public void setJdbcIdleInTransactionTimeoutMs(long v) { this.jdbcIdleInTransactionTimeoutMs = v; }
    public long getJdbcReadStatementTimeoutMs() { return jdbcReadStatementTimeoutMs; }
    public void setJdbcReadStatementTimeoutMs(long v) { this.jdbcReadStatementTimeoutMs = v; }
    public boolean isMetricsEnabled() { return metricsEnabled; }
    public void setMetricsEnabled(boolean v) { this.metricsEnabled = v; }
    public String getMetricsHost() { return metricsHost; }
    public void setMetricsHost(String v) { this.metricsHost = v; }
    public int getMetricsPort() { return metricsPort; }
    public void setMetricsPort(int v) { this.metricsPort = v; }
    public long getInvariantCheckIntervalMs() { return invariantCheckIntervalMs; }
    public void setInvariantCheckIntervalMs(long v) { this.invariantCheckIntervalMs = v; }
    public long getReadinessDatabaseDownMaxMs() { return readinessDatabaseDownMaxMs; }
    public void setReadinessDatabaseDownMaxMs(long v) { this.readinessDatabaseDownMaxMs = v; }
    public long getReadinessLaneStuckMaxMs() { return readinessLaneStuckMaxMs; }
    public void setReadinessLaneStuckMaxMs(long v) { this.readinessLaneStuckMaxMs = v; }
    public int getHealthPort() { return healthPort; }
    public void setHealthPort(int v) { this.healthPort = v; }
    public long getShutdownGraceMs() { return shutdownGraceMs; }
    public void setShutdownGraceMs(long v) { this.shutdownGraceMs = v; }
    public long getDatabaseSampleIntervalMs() { return databaseSampleIntervalMs; }
    public void setDatabaseSampleIntervalMs(long v) { this.databaseSampleIntervalMs = v; }
    public long getJdbcStandbyCheckIntervalMs() { return jdbcStandbyCheckIntervalMs; }
    public void setJdbcStandbyCheckIntervalMs(long v) { this.jdbcStandbyCheckIntervalMs = v; }
    public int getPoolSize() { return poolSize; }
    public void setPoolSize(int poolSize) { this.poolSize = poolSize; }
    public int getLanes() { return lanes; }
    public void setLanes(int lanes) { this.lanes = lanes; }
    public int getQueueCapacity() { return queueCapacity; }
    public void setQueueCapacity(int queueCapacity) { this.queueCapacity = queueCapacity; }
    public int getBatchMax() { return batchMax; }
    public void setBatchMax(int batchMax) { this.batchMax = batchMax; }
    public long getBatchIntervalMicros() { return batchIntervalMicros; }
    public void setBatchIntervalMicros(long v) { this.batchIntervalMicros = v; }
    public int getPaceBelow() { return paceBelow; }
    public void setPaceBelow(int v) { this.paceBelow = v; }
    public int getRedoMax() { return redoMax; }
    public void setRedoMax(int redoMax) { this.redoMax = redoMax; }
    public int getKeyIndexMax() { return keyIndexMax; }
    public void setKeyIndexMax(int keyIndexMax) { this.keyIndexMax = keyIndexMax; }
    public int getSweepBatchMax() { return sweepBatchMax; }
    public void setSweepBatchMax(int sweepBatchMax) { this.sweepBatchMax = sweepBatchMax; }
    public long getRetryAfterMs() { return retryAfterMs; }
    public void setRetryAfterMs(long retryAfterMs) { this.retryAfterMs = retryAfterMs; }
    public long getSweepIntervalMs() { return sweepIntervalMs; }
    public void setSweepIntervalMs(long sweepIntervalMs) { this.sweepIntervalMs = sweepIntervalMs; }
    public int getSweepBucketsPerTickMax() { return sweepBucketsPerTickMax; }
    public void setSweepBucketsPerTickMax(int v) { this.sweepBucketsPerTickMax = v; }
    public int getReadThreads() { return readThreads; }
    public void setReadThreads(int readThreads) { this.readThreads = readThreads; }
    public int getReadQueueCapacity() { return readQueueCapacity; }
    public void setReadQueueCapacity(int readQueueCapacity) { this.readQueueCapacity = readQueueCapacity; }
    public int getTenantIdLengthMax() { return tenantIdLengthMax; }
    public void setTenantIdLengthMax(int v) { this.tenantIdLengthMax = v; }
    public int getItemIdLengthMax() { return itemIdLengthMax; }
    public void setItemIdLengthMax(int v) { this.itemIdLengthMax = v; }
    public int getKeyLengthMax() { return keyLengthMax; }
    public void setKeyLengthMax(int v) { this.keyLengthMax = v; }
    public int getRegionLengthMax() { return regionLengthMax; }
    public void setRegionLengthMax(int v) { this.regionLengthMax = v; }
    public int getReserveQuantityMax() { return reserveQuantityMax; }
    public void setReserveQuantityMax(int v) { this.reserveQuantityMax = v; }
    public long getItemTotalMax() { return itemTotalMax; }
    public void setItemTotalMax(long v) { this.itemTotalMax = v; }
    public int getPerBuyerLimitMax() { return perBuyerLimitMax; }
    public void setPerBuyerLimitMax(int v) { this.perBuyerLimitMax = v; }
    public long getHoldTtlMinMs() { return holdTtlMinMs; }
    public void setHoldTtlMinMs(long v) { this.holdTtlMinMs = v; }
    public long getHoldTtlMaxMs() { return holdTtlMaxMs; }
    public void setHoldTtlMaxMs(long v) { this.holdTtlMaxMs = v; }
    public long getHoldTtlDefaultMs() { return holdTtlDefaultMs; }
    public void setHoldTtlDefaultMs(long v) { this.holdTtlDefaultMs = v; }
    public int getBucketCountMax() { return bucketCountMax; }
    public void setBucketCountMax(int v) { this.bucketCountMax = v; }
    public long getCollapseBelow() { return collapseBelow; }
    public void setCollapseBelow(long v) { this.collapseBelow = v; }
    public long getUnitsPerBucket() { return unitsPerBucket; }
    public void setUnitsPerBucket(long v) { this.unitsPerBucket = v; }
    public int getDefaultBucketsMax() { return defaultBucketsMax; }
    public void setDefaultBucketsMax(int v) { this.defaultBucketsMax = v; }
    public boolean isRetentionEnabled() { return retentionEnabled; }
    public void setRetentionEnabled(boolean v) { this.retentionEnabled = v; }
    public long getRetentionIntervalMs() { return retentionIntervalMs; }
    public void setRetentionIntervalMs(long v) { this.retentionIntervalMs = v; }
    public long getRetentionHoldsAfterMs() { return retentionHoldsAfterMs; }
    public void setRetentionHoldsAfterMs(long v) { this.retentionHoldsAfterMs = v; }
    public long getRetentionTransfersAfterMs() { return retentionTransfersAfterMs; }
    public void setRetentionTransfersAfterMs(long v) { this.retentionTransfersAfterMs = v; }
    public int getRetentionBatchMax() { return retentionBatchMax; }
    public void setRetentionBatchMax(int v) { this.retentionBatchMax = v; }
    public int getRetentionBatchesPerRunMax() { return retentionBatchesPerRunMax; }
    public void setRetentionBatchesPerRunMax(int v) { this.retentionBatchesPerRunMax = v; }
    public long getRetentionBatchPauseMs() { return retentionBatchPauseMs; }
    public void setRetentionBatchPauseMs(long v) { this.retentionBatchPauseMs = v; }
}
