package io.lastunit.shard.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the shard's primary every {@code interval} whether a commit could be acknowledged now
 * ({@link StandbyRule}) and keeps the lanes' {@link WriteGate} closed while it could not: while no
 * synchronous standby is connected, Reserves and every other write are answered UNAVAILABLE /
 * STANDBY_MISSING at once (nothing written), as CloudNativePG's {@code dataDurability: required}
 * pauses writes rather than falling back to asynchronous commits. The gate opens at the first look
 * that finds the standby back.
 *
 * <p>A look that fails (the database unreachable) changes nothing: the writes fail by themselves
 * then. {@link StandbyRule.Verdict#CANNOT_TELL} (a role without {@code pg_monitor}) keeps the gate
 * open and says so once; a commit then waits for the standby up to the socket timeout.
 *
 * <p>One daemon thread, the look on a pooled read connection (its statement timeout bounds it).
 */
public final class StandbyWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StandbyWatch.class);
    static final String LOOK = "SELECT current_setting('synchronous_standby_names'),"
            + " current_setting('synchronous_commit'),"
            + " (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')),"
            + " (SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL)";

    private final DataSource reads;
    private final Duration interval;
    private final WriteGate gate;
    private final String shardId;
    private final Thread thread;
    private volatile StandbyRule.Verdict last;
    private volatile boolean closed;

    public StandbyWatch(DataSource reads, Duration interval, WriteGate gate, String shardId) {
        this.reads = Objects.requireNonNull(reads, "reads");
        this.interval = Objects.requireNonNull(interval, "interval");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("standby check interval must be positive: " + interval);
        }
        this.gate = Objects.requireNonNull(gate, "gate");
        this.shardId = shardId;
        this.thread = new Thread(this::run, "standby-watch-" + shardId);
        thread.setDaemon(true);
    }

    /** Looks once now (so a node started without its standby refuses writes from the start), then every interval. */
    public StandbyWatch start() {
        look();
        thread.start();
        return this;
    }

    /** The last verdict, or null before the first look that reached the database. */
    public StandbyRule.Verdict last() {
        return last;
    }

    private void run() {
        while (!closed) {
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            look();
        }
    }

    /** One look: the verdict, and the gate set by it. */
    void look() {
        StandbyRule.Verdict v;
        String names;
        int synchronous;
        try (Connection c = reads.getConnection(); PreparedStatement ps = c.prepareStatement(LOOK);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            names = rs.getString(1);
            synchronous = rs.getInt(3);
            v = StandbyRule.verdict(names, rs.getString(2), synchronous, rs.getInt(4));
        } catch (SQLException e) {
            log.debug("shard {}: standby look failed: {}", shardId, e.getMessage());
            return;
        }
        StandbyRule.Verdict before = last;
        last = v;
        if (v == StandbyRule.Verdict.MISSING) {
            gate.close("the shard's database has " + synchronous + " of the " + StandbyRule.required(names)
                    + " synchronous standby(s) a commit waits for (synchronous_standby_names='" + names
                    + "'): writes pause until one connects; nothing was written, retry");
        } else {
            gate.open();
        }
        if (v != before) {
            switch (v) {
                case MISSING -> log.warn("shard {}: no synchronous standby connected ({}): writes refused"
                        + " (UNAVAILABLE / STANDBY_MISSING) until one is", shardId, names);
                case CANNOT_TELL -> log.warn("shard {}: the database role cannot see pg_stat_replication's"
                        + " sync_state (grant it pg_monitor); writes are not paused when the standby is gone,"
                        + " they wait for it up to the socket timeout", shardId);
                case CONNECTED -> log.info("shard {}: synchronous standby connected: writes go on", shardId);
                default -> log.debug("shard {}: synchronous standby {}", shardId, v);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }
}
