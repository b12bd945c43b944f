package io.lastunit.shard.store.local;

import io.lastunit.common.local.OwnedTempDirectory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link PostgresServer} is made and how long each of its operations may take. A standby
 * made from a primary takes the primary's settings (its configuration file is a copy).
 * Validated when built: a bad value is refused, never clamped. A value; thread-safe.
 *
 * @param stateDirectory      where the servers' {@link OwnedTempDirectory}s are created
 * @param fsync               whether commits wait for the disk; off survives a crash of PostgreSQL,
 *                            not of the machine
 * @param maxConnections      {@code max_connections}
 * @param maxWalSenders       {@code max_wal_senders}: standbys and base backups streaming at once
 * @param maxReplicationSlots {@code max_replication_slots}: one per standby
 * @param operationWait       the bound on one operation (initdb, a start, a stop, a promotion, a
 *                            wait for a standby); whole seconds, since pg_ctl takes seconds
 */
public record ServerSettings(Path stateDirectory, boolean fsync, int maxConnections, int maxWalSenders,
                             int maxReplicationSlots, Duration operationWait) {
    /** As {@code EmbeddedDatabase}: a local platform's nodes each keep a pool open on one server. */
    public static final int MAX_CONNECTIONS = 500;
    /** Standbys and base backups at once, per primary. */
    public static final int MAX_WAL_SENDERS = 10;
    /** Replication slots, per primary. */
    public static final int MAX_REPLICATION_SLOTS = 10;
    /** Long enough for crash recovery after a kill of a busy local server. */
    public static final Duration OPERATION_WAIT = Duration.ofSeconds(60);

    static final int MAX_CONNECTIONS_LIMIT = 10_000;
    static final int WAL_SENDERS_LIMIT = 100;
    static final Duration OPERATION_WAIT_LIMIT = Duration.ofHours(1);

    public ServerSettings {
        Objects.requireNonNull(stateDirectory, "stateDirectory");
        Objects.requireNonNull(operationWait, "operationWait");
        requireBetween("maxConnections", maxConnections, 1, MAX_CONNECTIONS_LIMIT);
        requireBetween("maxWalSenders", maxWalSenders, 1, WAL_SENDERS_LIMIT);
        requireBetween("maxReplicationSlots", maxReplicationSlots, 1, WAL_SENDERS_LIMIT);
        if (operationWait.compareTo(Duration.ofSeconds(1)) < 0 || operationWait.compareTo(OPERATION_WAIT_LIMIT) > 0
                || operationWait.getNano() != 0) {
            throw new IllegalArgumentException("operationWait=" + operationWait
                    + " must be whole seconds between 1 s and " + OPERATION_WAIT_LIMIT);
        }
    }

    /** fsync on, the limits above, in this user's {@link OwnedTempDirectory#stateDirectory()}. */
    public static ServerSettings defaults() {
        return new ServerSettings(OwnedTempDirectory.stateDirectory(), true, MAX_CONNECTIONS, MAX_WAL_SENDERS,
                MAX_REPLICATION_SLOTS, OPERATION_WAIT);
    }

    public ServerSettings withStateDirectory(Path dir) {
        return new ServerSettings(dir, fsync, maxConnections, maxWalSenders, maxReplicationSlots, operationWait);
    }

    public ServerSettings withFsync(boolean on) {
        return new ServerSettings(stateDirectory, on, maxConnections, maxWalSenders, maxReplicationSlots, operationWait);
    }

    public ServerSettings withOperationWait(Duration wait) {
        return new ServerSettings(stateDirectory, fsync, maxConnections, maxWalSenders, maxReplicationSlots, wait);
    }

    /** {@link #operationWait} in seconds, for pg_ctl's {@code -t} and pg_promote's wait. */
    int operationWaitSeconds() {
        return Math.toIntExact(operationWait.toSeconds());
    }

    private static void requireBetween(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + "=" + value + " must be between " + min + " and " + max);
        }
    }
}
