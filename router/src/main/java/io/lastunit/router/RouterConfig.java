package io.lastunit.router;

import io.lastunit.common.Limits;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything a router needs to start, validated as a whole: a bad setting fails start-up with
 * every problem named. Immutable.
 *
 * @param routerId              name in logs
 * @param host                  address the gRPC server binds
 * @param port                  gRPC port; 0 picks a free one
 * @param zookeeper             ZooKeeper connect string (host:port[,host:port...])
 * @param namespace             the topology's root znode
 * @param limits                request bounds and the regions the platform serves
 * @param tokenGrants           {@code <sha256-hex>:<name>:<tenants>[:admin]} per caller
 * @param topologyStaleMax      how long a suspended ZooKeeper session may serve the last topology
 * @param attemptsMax           attempts per call (first try included) on UNAVAILABLE / MOVED
 * @param backoffBase           first retry delay; doubles per attempt
 * @param defaultDeadline       deadline for calls that arrive without one
 * @param soldOutTtl            how long a SOLD_OUT is answered from the router's cache
 * @param soldOutEntriesMax     items remembered as sold out
 * @param buyerRatePerSecond    Reserve calls per second per buyer (token bucket refill)
 * @param buyerBurst            token bucket capacity per buyer
 * @param buyersTrackedMax      buyers with a token bucket at once
 * @param inFlightPerItemMax    Reserve calls in flight per item through this router
 * @param recentKeysMax         idempotency keys remembered (10 min) so their retries bypass the sold-out cache
 * @param tlsCertificate        PEM certificate chain of the router's listener, or null (plaintext)
 * @param tlsKey                PEM private key of the router's listener, or null
 * @param shardTrustCertificate PEM CA the shard nodes' certificates chain to, or null (plaintext to shards);
 *                              also used to dial the balancer leader
 * @param pullWait              the longest a Reserve waits for one balancer Pull into a dry region
 *                              (never past the caller's deadline)
 * @param pullAttemptsMax       balancer Pulls per Reserve while its region stays dry
 * @param reserveBatchMax       most Reserves sent to a shard in one ReserveBatch call, within [1, 1024];
 *                              1 sends each Reserve as its own call
 * @param reserveBatchesInFlightMax ReserveBatch calls in flight per shard; more Reserves wait for the next call
 *                              once {@code reserveBatchHoldAbove} Reserves are in flight to it too
 * @param reserveBatchHoldAbove Reserves in flight per shard below which a Reserve goes out at once, whatever
 *                              the calls in flight: an answer comes at a lane's commit, so a Reserve that
 *                              waited for one misses that lane's next batch (docs/routing.md)
 * @param reserveQueueMax       most Reserves waiting in the router to be sent to their shards
 * @param movingHoldMax         the longest a call of a tenant that is moving between cells is held in the
 *                              router before it is answered TENANT_MOVING (never past its deadline), within
 *                              [0, 60 s]; 0 answers at once
 * @param metrics               the management port ({@code /metrics}); the router's meters exist only when enabled
 * @param shutdownGrace         how long a stopping router says NOT_SERVING while it still takes calls
 * @param maxConnectionAge      how long a client connection may live before the router asks the client, with a
 *                              GOAWAY, to open a new one, so that clients spread over routers started later
 *                              (a rolling upgrade, a scale-out); zero keeps connections for as long as clients do
 * @param maxConnectionAgeGrace how long calls in flight on a connection past its age may take before the
 *                              connection is cut; only with {@code maxConnectionAge}
 * @param healthPort            a plaintext port serving only gRPC health, for probes that cannot speak TLS;
 *                              {@code -1}: none, 0: any free one
 * @param tokensFile            a file of grants, one a line, read again when it changes (GrantsFile);
 *                              instead of {@code tokenGrants}, null: the grants are {@code tokenGrants}
 * @param tokensReloadInterval  how often {@code tokensFile} is read again
 * @param mutualTls             mutual TLS to shard nodes and the balancer with the router's own certificate
 *                              (role router), or null; not with {@code shardTrustCertificate}
 * @param zookeeperCredentials  lastunit's ZooKeeper credentials, or null: none
 * @param zookeeperTls          TLS to ZooKeeper's secure client port, or null: plaintext
 */
public record RouterConfig(
        String routerId,
        String host,
        int port,
        String zookeeper,
        String namespace,
        Limits limits,
        List<String> tokenGrants,
        Duration topologyStaleMax,
        int attemptsMax,
        Duration backoffBase,
        Duration defaultDeadline,
        Duration soldOutTtl,
        int soldOutEntriesMax,
        double buyerRatePerSecond,
        int buyerBurst,
        int buyersTrackedMax,
        int inFlightPerItemMax,
        int recentKeysMax,
        File tlsCertificate,
        File tlsKey,
        File shardTrustCertificate,
        Duration pullWait,
        int pullAttemptsMax,
        int reserveBatchMax,
        int reserveBatchesInFlightMax,
        int reserveBatchHoldAbove,
        int reserveQueueMax,
        Duration movingHoldMax,
        io.lastunit.common.metrics.MetricsConfig metrics,
        Duration shutdownGrace,
        Duration maxConnectionAge,
        Duration maxConnectionAgeGrace,
        int healthPort,
        File tokensFile,
        Duration tokensReloadInterval,
        io.lastunit.common.tls.MutualTls mutualTls,
        io.lastunit.common.topology.ZooKeeperCredentials zookeeperCredentials,
        io.lastunit.common.tls.ZooKeeperTls zookeeperTls) {

    /** Longest {@code pullWait}: a Reserve should not wait longer than this for stock to move. */
    public static final Duration PULL_WAIT_MAX = Duration.ofSeconds(60);
    /** Most {@code pullAttemptsMax}. */
    public static final int PULL_ATTEMPTS_LIMIT = 10;
    /** Longest {@code movingHoldMax}. */
    public static final Duration MOVING_HOLD_LIMIT = Duration.ofSeconds(60);
    /**
     * Shortest {@code maxConnectionAge} but zero: grpc-java raises anything shorter to one second, and
     * a connection that lives less than that costs its handshakes more than it spreads.
     */
    public static final Duration MAX_CONNECTION_AGE_MIN = Duration.ofSeconds(1);
    /** Longest {@code maxConnectionAge}: a longer one spreads clients too slowly to be worth setting. */
    public static final Duration MAX_CONNECTION_AGE_LIMIT = Duration.ofDays(1);
    /** Longest {@code maxConnectionAgeGrace}. */
    public static final Duration MAX_CONNECTION_AGE_GRACE_LIMIT = Duration.ofMinutes(10);

    public RouterConfig {
        tokenGrants = List.copyOf(tokenGrants);
        List<String> problems = new ArrayList<>();
        if (!Limits.isId(routerId, 64)) {
            problems.add("routerId must be 1..64 printable ASCII characters");
        }
        if (port < 0 || port > 65_535) {
            problems.add("port=" + port + " is outside [0, 65535]");
        }
        if (zookeeper == null || zookeeper.isBlank()) {
            problems.add("zookeeper (connect string) is required");
        }
        if (namespace == null || !namespace.startsWith("/") || namespace.length() < 2) {
            problems.add("namespace must be an absolute znode path, got " + namespace);
        }
        if (tokensFile == null && tokenGrants.isEmpty()) {
            problems.add("tokenGrants is empty (and no tokens-file): no caller could authenticate");
        }
        if (tokensFile != null && !tokenGrants.isEmpty()) {
            problems.add("tokens and tokens-file are both set: give one");
        }
        if (tokensFile != null && !tokensFile.canRead()) {
            problems.add("cannot read tokens-file " + tokensFile);
        }
        if (tokensReloadInterval == null || tokensReloadInterval.compareTo(Duration.ofMillis(100)) < 0
                || tokensReloadInterval.compareTo(Duration.ofHours(1)) > 0) {
            problems.add("tokensReloadInterval=" + tokensReloadInterval + " is outside [100 ms, 1 h]");
        }
        if (mutualTls != null && shardTrustCertificate != null) {
            problems.add("mtls-* (mutual TLS to shards and the balancer) and shard-trust-certificate (TLS without a"
                    + " client certificate) are both set: give one");
        }
        positive(problems, "topologyStaleMax", topologyStaleMax);
        positive(problems, "backoffBase", backoffBase);
        positive(problems, "defaultDeadline", defaultDeadline);
        if (soldOutTtl == null || soldOutTtl.isNegative()) {
            problems.add("soldOutTtl must be >= 0");
        }
        if (attemptsMax < 1 || attemptsMax > 10) {
            problems.add("attemptsMax=" + attemptsMax + " is outside [1, 10]");
        }
        if (pullWait == null || pullWait.toMillis() < 1 || pullWait.compareTo(PULL_WAIT_MAX) > 0) {
            problems.add("pullWait=" + pullWait + " is outside [1 ms, " + PULL_WAIT_MAX.toMillis() + " ms]");
        }
        if (pullAttemptsMax < 1 || pullAttemptsMax > PULL_ATTEMPTS_LIMIT) {
            problems.add("pullAttemptsMax=" + pullAttemptsMax + " is outside [1, " + PULL_ATTEMPTS_LIMIT + "]");
        }
        if (reserveBatchMax < 1 || reserveBatchMax > Limits.RESERVE_BATCH_MAX) {
            problems.add("reserveBatchMax=" + reserveBatchMax + " is outside [1, " + Limits.RESERVE_BATCH_MAX + "]");
        }
        if (reserveBatchesInFlightMax < 1) {
            problems.add("reserveBatchesInFlightMax must be >= 1");
        }
        if (reserveBatchHoldAbove < 0) {
            problems.add("reserveBatchHoldAbove must be >= 0");
        }
        if (movingHoldMax == null || movingHoldMax.isNegative() || movingHoldMax.compareTo(MOVING_HOLD_LIMIT) > 0) {
            problems.add("movingHoldMax=" + movingHoldMax + " is outside [0, " + MOVING_HOLD_LIMIT.toMillis() + " ms]");
        }
        if (metrics == null) {
            problems.add("metrics is required (MetricsConfig.OFF to turn them off)");
        }
        if (maxConnectionAge == null || maxConnectionAge.isNegative() || (!maxConnectionAge.isZero()
                && (maxConnectionAge.compareTo(MAX_CONNECTION_AGE_MIN) < 0
                || maxConnectionAge.compareTo(MAX_CONNECTION_AGE_LIMIT) > 0))) {
            problems.add("maxConnectionAge=" + maxConnectionAge + " is neither 0 (off) nor within ["
                    + MAX_CONNECTION_AGE_MIN.toMillis() + " ms, " + MAX_CONNECTION_AGE_LIMIT.toMillis() + " ms]");
        }
        if (maxConnectionAgeGrace == null || maxConnectionAgeGrace.isNegative()
                || maxConnectionAgeGrace.compareTo(MAX_CONNECTION_AGE_GRACE_LIMIT) > 0) {
            problems.add("maxConnectionAgeGrace=" + maxConnectionAgeGrace + " is outside [0, "
                    + MAX_CONNECTION_AGE_GRACE_LIMIT.toMillis() + " ms]");
        }
        if (!io.lastunit.common.lifecycle.NodeServer.isHealthPort(healthPort)) {
            problems.add("healthPort=" + healthPort + " is not -1 (none), 0 (any free one) or a port up to 65535");
        }
        if (reserveQueueMax < 1) {
            problems.add("reserveQueueMax must be >= 1");
        }
        if (recentKeysMax < 1) {
            problems.add("recentKeysMax must be >= 1");
        }
        if (soldOutEntriesMax < 1 || buyerBurst < 1 || buyersTrackedMax < 1 || inFlightPerItemMax < 1
                || !(buyerRatePerSecond > 0) || Double.isInfinite(buyerRatePerSecond)) {
            problems.add("soldOutEntriesMax, buyerBurst, buyersTrackedMax, inFlightPerItemMax and buyerRatePerSecond "
                    + "must be positive");
        }
        if ((tlsCertificate == null) != (tlsKey == null)) {
            problems.add("tlsCertificate and tlsKey go together");
        }
        for (File f : new File[] {tlsCertificate, tlsKey, shardTrustCertificate}) {
            if (f != null && !f.canRead()) {
                problems.add("cannot read " + f);
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid router config: " + String.join("; ", problems));
        }
    }

    private static void positive(List<String> problems, String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            problems.add(name + " must be positive, got " + d);
        }
    }
}
