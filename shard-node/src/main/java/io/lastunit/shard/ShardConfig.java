package io.lastunit.shard;

import io.lastunit.common.Limits;
import io.lastunit.shard.lane.LaneConfig;
import io.lastunit.shard.retention.RetentionConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything a shard node needs to start, validated as a whole when built: a bad or
 * inconsistent setting fails start-up with every problem named. Immutable.
 *
 * @param shardId                 this shard's name (in logs, reports, later in ZooKeeper)
 * @param host                    address the gRPC server binds (127.0.0.1 by default)
 * @param port                    gRPC port; 0 picks a free one
 * @param jdbc                    the shard's database (the wiring fills in an embedded one's URL for embedded=true)
 * @param sweepInterval           how often the sweeper looks for due holds
 * @param sweepBucketsPerTickMax  buckets the sweeper hands to lanes per pass
 * @param readThreads             threads serving committed reads
 * @param readQueueCapacity       reads waiting; a full queue answers RESOURCE_EXHAUSTED
 * @param retention               what finished rows are deleted, and how fast (its own bounds are
 *                                checked by {@link RetentionConfig}; the idempotency window must also
 *                                outlast every hold, see below)
 */
public record ShardConfig(
        String shardId,
        String host,
        int port,
        Jdbc jdbc,
        Limits limits,
        LaneConfig lanes,
        Duration sweepInterval,
        int sweepBucketsPerTickMax,
        int readThreads,
        int readQueueCapacity,
        Topology topology,
        Tls tls,
        RetentionConfig retention,
        Observability observability) {

    /**
     * What the node exports and checks on its own (docs/observability.md).
     *
     * @param metrics                 the management port ({@code /metrics})
     * @param invariantCheckInterval  how often the whole shard's invariants are checked (0: never)
     * @param databaseSampleInterval  how often lock waits, the oldest transaction and the HELD holds
     *                                are read from the database (0: never)
     * @param databaseDownMax         how long the node may be without its database's ownership
     *                                session (unreachable, restarting) before its health says NOT_SERVING
     * @param laneStuckMax            how long a lane may hold queued work without finishing a batch
     *                                before the health says NOT_SERVING (above the socket timeout: a
     *                                lane legitimately waits that long in one commit)
     * @param shutdownGrace           how long a stopping node says NOT_SERVING before it stops taking
     *                                calls, for load balancers to notice
     * @param healthPort              a plaintext port serving only gRPC health, for probes that cannot
     *                                speak TLS; {@code -1}: none, 0: any free one
     */
    public record Observability(io.lastunit.common.metrics.MetricsConfig metrics, Duration invariantCheckInterval,
                                Duration databaseSampleInterval, Duration databaseDownMax, Duration laneStuckMax,
                                Duration shutdownGrace, int healthPort) {
        public static final Duration INVARIANT_CHECK_DEFAULT = Duration.ofSeconds(60);
        public static final Duration DATABASE_SAMPLE_DEFAULT = Duration.ofSeconds(10);
        public static final Duration DATABASE_DOWN_MAX_DEFAULT = Duration.ofSeconds(5);
        public static final Duration LANE_STUCK_MAX_DEFAULT = Duration.ofSeconds(30);
        /** Metrics on, on any free port of 127.0.0.1; the default schedules and bounds; no shutdown grace; no health port. */
        public static final Observability DEFAULTS = new Observability(
                io.lastunit.common.metrics.MetricsConfig.on("127.0.0.1"), INVARIANT_CHECK_DEFAULT,
                DATABASE_SAMPLE_DEFAULT, DATABASE_DOWN_MAX_DEFAULT, LANE_STUCK_MAX_DEFAULT, Duration.ZERO,
                io.lastunit.common.lifecycle.NodeServer.HEALTH_PORT_OFF);

        public Observability {
            java.util.Objects.requireNonNull(metrics, "metrics");
            for (Duration d : new Duration[] {databaseDownMax, laneStuckMax, shutdownGrace}) {
                if (d == null || d.isNegative()) {
                    throw new IllegalArgumentException("readiness bounds and the shutdown grace must be >= 0, got " + d);
                }
            }
            if (invariantCheckInterval == null || invariantCheckInterval.isNegative()) {
                throw new IllegalArgumentException("invariant check interval must be 0 (off) or positive, got "
                        + invariantCheckInterval);
            }
            if (databaseSampleInterval == null || databaseSampleInterval.isNegative()) {
                throw new IllegalArgumentException("database sample interval must be 0 (off) or positive, got "
                        + databaseSampleInterval);
            }
            if (!io.lastunit.common.lifecycle.NodeServer.isHealthPort(healthPort)) {
                throw new IllegalArgumentException("health port must be -1 (none), 0 (any free one) or up to 65535, got "
                        + healthPort);
            }
        }
    }

    /**
     * TLS for the node's gRPC listener. Nothing set: plaintext (a node inside a private network
     * behind the router). {@code certificate} and {@code key}: TLS with this PEM certificate chain and
     * PKCS#8 PEM key, any client admitted. {@code mutual}: TLS that admits callers by their client
     * certificate's role ({@code ShardAllowList}), reloaded from its files; not with the other two.
     */
    public record Tls(java.io.File certificate, java.io.File key, io.lastunit.common.tls.MutualTls mutual) {
        public static final Tls NONE = new Tls(null, null, null);

        public Tls(java.io.File certificate, java.io.File key) {
            this(certificate, key, null);
        }

        public boolean enabled() {
            return certificate != null || mutual != null;
        }
    }

    /**
     * Where the node registers and learns placement. An empty {@code zookeeper} runs the node
     * standalone: no registration, every item accepted.
     *
     * @param zookeeper          connect string, or empty
     * @param namespace          the topology's root znode
     * @param advertisedAddress  host:port routers use to reach this node; empty = host:port
     * @param staleMax           how long a suspended session may serve the last topology
     * @param standaloneRegion   the region a standalone node serves (with a topology, the
     *                           region of this shard in its cell wins); empty = the first
     *                           configured region
     * @param sessionTimeout     the ZooKeeper session: how long a node may be unreachable (paused,
     *                           cut off) before its live registration goes and another start of the
     *                           shard may take its database over
     * @param credentials        lastunit's ZooKeeper credentials (every znode it creates gets their
     *                           ACL), or null: none
     * @param tls                TLS to ZooKeeper's secure client port, or null: plaintext
     */
    public record Topology(String zookeeper, String namespace, String advertisedAddress, Duration staleMax,
                           String standaloneRegion, Duration sessionTimeout,
                           io.lastunit.common.topology.ZooKeeperCredentials credentials,
                           io.lastunit.common.tls.ZooKeeperTls tls) {
        /** The ZooKeeper session timeout unless one is given. */
        public static final Duration SESSION_TIMEOUT_DEFAULT = Duration.ofSeconds(15);
        public static final Topology STANDALONE = new Topology("", "/lastunit", "", Duration.ofSeconds(10), "");

        /** With the default session timeout. */
        public Topology(String zookeeper, String namespace, String advertisedAddress, Duration staleMax,
                        String standaloneRegion) {
            this(zookeeper, namespace, advertisedAddress, staleMax, standaloneRegion, SESSION_TIMEOUT_DEFAULT, null, null);
        }

        public boolean enabled() {
            return !zookeeper.isBlank();
        }
    }

    /**
     * @param poolSize connections; 0 = 3 × lanes + read threads + 3 (each lane's batch, its
     *                 borrows and a seat write in flight beside them, the readers, the sweeper, the move
     *                 thread, a spare). Fewer than lanes + read threads
     *                 + 2 would make lanes wait on the pool for their batches, so it is refused;
     *                 between the two, a borrow may wait for a connection another borrow returns.
     */
    public record Jdbc(String url, String user, String password, int poolSize, DbTimeouts timeouts) {
        /** With the default timeouts. */
        public Jdbc(String url, String user, String password, int poolSize) {
            this(url, user, password, poolSize, DbTimeouts.DEFAULTS);
        }

        public Jdbc {
            if (timeouts == null) {
                throw new IllegalArgumentException("jdbc timeouts are required");
            }
        }
    }

    /**
     * The bound on every wait for the database (docs/durability.md, "Bounded waits"). A wait that
     * runs out becomes UNAVAILABLE: before the commit was sent the batch failed and nothing was
     * written; from the commit on the outcome is unknown and the caller retries with the same key.
     *
     * @param connect           how long taking a connection (and opening one) may take (HikariCP's
     *                          {@code connectionTimeout}, pgjdbc's {@code connectTimeout})
     * @param socket            how long any statement or commit may wait for the server's answer
     *                          (pgjdbc {@code socketTimeout}, whole seconds): a hung or partitioned
     *                          server, or a commit waiting for a synchronous standby that is gone
     * @param lock              how long a statement of a write waits for a row or table lock
     *                          (PostgreSQL {@code lock_timeout}; borrows and collapses wait less)
     * @param idleInTransaction how long the server keeps a session whose transaction went idle
     *                          (PostgreSQL {@code idle_in_transaction_session_timeout}): a paused or
     *                          hung node's open transaction is rolled back and its locks freed; above
     *                          the 30 s a move's export may wait for its reader
     * @param readStatement     how long one statement of a read (GetStock, GetHold, the invariant
     *                          check) may run (PostgreSQL {@code statement_timeout}). Never set on the
     *                          connections that write: a cancelled commit waiting for the standby is
     *                          committed locally and reported as if it had been replicated.
     * @param standbyCheck      how often the node asks its primary whether a synchronous standby is
     *                          connected ({@link io.lastunit.shard.store.StandbyWatch}); while none
     *                          is where commits wait for one, writes are refused at once
     *                          (STANDBY_MISSING) instead of waiting up to {@code socket}
     */
    public record DbTimeouts(Duration connect, Duration socket, Duration lock, Duration idleInTransaction,
                             Duration readStatement, Duration standbyCheck) {
        public static final DbTimeouts DEFAULTS = new DbTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(15),
                Duration.ofSeconds(2), Duration.ofSeconds(60), Duration.ofSeconds(30), Duration.ofMillis(500));

        /** These bounds with another standby check interval. */
        public DbTimeouts withStandbyCheck(Duration interval) {
            return new DbTimeouts(connect, socket, lock, idleInTransaction, readStatement, interval);
        }
        /** A move's export may wait this long for its reader, in its transaction. */
        public static final Duration EXPORT_IDLE_MAX = io.lastunit.shard.grpc.ShardGrpcService.EXPORT_READY_WAIT_MAX;

        /** What is wrong with these bounds, empty when nothing is. */
        List<String> problems() {
            List<String> problems = new ArrayList<>();
            Duration[] all = {connect, socket, lock, idleInTransaction, readStatement, standbyCheck};
            String[] names = {"connect", "socket", "lock", "idleInTransaction", "readStatement", "standbyCheck"};
            for (int i = 0; i < all.length; i++) {
                if (all[i] == null || all[i].isNegative() || all[i].isZero()) {
                    problems.add("jdbc timeout " + names[i] + " must be positive, got " + all[i]);
                }
            }
            if (!problems.isEmpty()) {
                return problems;
            }
            if (socket.toMillis() % 1_000 != 0) {
                problems.add("jdbc timeout socket=" + socket + " must be whole seconds (pgjdbc's socketTimeout)");
            }
            if (socket.compareTo(lock) <= 0) {
                problems.add("jdbc timeout socket=" + socket + " must be above lock=" + lock
                        + ", so a lock wait ends on the server, with its SQL state, before the socket gives up");
            }
            if (idleInTransaction.compareTo(EXPORT_IDLE_MAX) <= 0) {
                problems.add("jdbc timeout idleInTransaction=" + idleInTransaction + " must be above "
                        + EXPORT_IDLE_MAX + ", the time a move's export may wait for its reader");
            }
            return problems;
        }
    }

    public ShardConfig {
        List<String> problems = new ArrayList<>();
        if (lanes != null && limits != null && lanes.defaultBucketsMax() > limits.bucketCountMax()) {
            problems.add("defaultBucketsMax=" + lanes.defaultBucketsMax() + " is over bucketCountMax="
                    + limits.bucketCountMax());
        }
        if (!Limits.isId(shardId, 64)) {
            problems.add("shardId '" + shardId + "' must be 1..64 printable ASCII characters");
        }
        if (host == null || host.isBlank()) {
            problems.add("host is required");
        }
        if (port < 0 || port > 65_535) {
            problems.add("port=" + port + " is outside [0, 65535]");
        }
        problems.addAll(jdbc.timeouts().problems());
        if (jdbc.poolSize() != 0 && jdbc.poolSize() < minPool(lanes, readThreads)) {
            problems.add("jdbc.poolSize=" + jdbc.poolSize() + " is below lanes + readThreads + 2 = "
                    + minPool(lanes, readThreads));
        }
        if (sweepInterval == null || sweepInterval.isNegative() || sweepInterval.isZero()) {
            problems.add("sweepInterval must be positive, got " + sweepInterval);
        }
        if (sweepBucketsPerTickMax < 1) {
            problems.add("sweepBucketsPerTickMax=" + sweepBucketsPerTickMax + " must be >= 1");
        }
        if (readThreads < 1 || readThreads > 64) {
            problems.add("readThreads=" + readThreads + " is outside [1, 64]");
        }
        if (readQueueCapacity < 1) {
            problems.add("readQueueCapacity=" + readQueueCapacity + " must be >= 1");
        }
        if ((tls.certificate() == null) != (tls.key() == null)) {
            problems.add("tls certificate and key go together");
        }
        if (tls.certificate() != null && tls.mutual() != null) {
            problems.add("tls-certificate (TLS for any client) and mtls-certificate (mutual TLS) are both set: give one");
        }
        for (java.io.File f : new java.io.File[] {tls.certificate(), tls.key()}) {
            if (f != null && !f.canRead()) {
                problems.add("cannot read " + f);
            }
        }
        if (topology.enabled() && (topology.namespace() == null || !topology.namespace().startsWith("/"))) {
            problems.add("namespace must be an absolute znode path, got " + topology.namespace());
        }
        if (topology.sessionTimeout() == null || topology.sessionTimeout().toMillis() < 100
                || topology.sessionTimeout().compareTo(Duration.ofMinutes(5)) > 0) {
            problems.add("zookeeper session timeout must be within [100 ms, 5 min], got " + topology.sessionTimeout());
        }
        if (topology.enabled() && (topology.staleMax() == null || topology.staleMax().isNegative()
                || topology.staleMax().isZero())) {
            problems.add("topology staleMax must be positive");
        }
        if (observability == null) {
            problems.add("observability is required");
        }
        if (retention == null) {
            problems.add("retention is required");
        } else if (limits != null && retention.holdsAfter().toMillis() < 2 * limits.holdTtlMaxMs()) {
            // A key record (CLAIMED at home, FORWARDED) ends when it is written, while the hold its key
            // stands for in another region may stay HELD for its TTL and one Extend, each at most
            // hold-ttl-max-ms: deleted before that, the key could place a second hold meanwhile.
            problems.add("retention holdsAfter=" + retention.holdsAfter().toMillis() + " ms is below twice"
                    + " holdTtlMaxMs=" + limits.holdTtlMaxMs() + " ms: a key must outlive the longest hold"
                    + " (its TTL and one Extend)");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid shard config: " + String.join("; ", problems));
        }
    }

    private static int minPool(LaneConfig lanes, int readThreads) {
        return lanes.laneCount() + readThreads + 2;
    }

    /** The pool size in force. */
    public int poolSize() {
        return jdbc.poolSize() != 0 ? jdbc.poolSize() : minPool(lanes, readThreads) + 2 * lanes.laneCount() + 1;
    }

    public ShardConfig withJdbc(Jdbc other) {
        return new ShardConfig(shardId, host, port, other, limits, lanes, sweepInterval, sweepBucketsPerTickMax,
                readThreads, readQueueCapacity, topology, tls, retention, observability);
    }
}
