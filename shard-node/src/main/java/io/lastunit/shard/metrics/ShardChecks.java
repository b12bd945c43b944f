package io.lastunit.shard.metrics;

import io.lastunit.api.shard.v1.Drift;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.common.metrics.InvariantMeters;
import io.lastunit.common.metrics.Metrics;
import io.lastunit.shard.store.InvariantChecker;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a shard node checks on a schedule, on one daemon thread and the read pool:
 * <ul>
 *   <li>the shard's invariants (DESIGN §1; {@link InvariantChecker}), every
 *       {@code invariantInterval}: drift units and drifting items of the last check that ran, and
 *       a separate "the last check failed" — a check that could not run is never a silent 0;</li>
 *   <li>the database, every {@code sampleInterval}: sessions waiting for a lock, the oldest open
 *       transaction, HELD holds and held units.</li>
 * </ul>
 * A drift is logged as an ERROR naming its first items. A zero interval turns that part off.
 */
public final class ShardChecks implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShardChecks.class);
    /** The drifts named in the log line of a check that found some. */
    static final int DRIFTS_LOGGED_MAX = 5;
    static final String SAMPLE = "SELECT"
            + " (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'),"
            + " (SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)), 0) FROM pg_stat_activity"
            + "    WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()),"
            + " (SELECT count(*) FROM holds WHERE state = 'HELD'),"
            + " (SELECT coalesce(sum(held), 0) FROM buckets)";

    /** The drift of one check: how many units away from the rules, over how many items. */
    record DriftSummary(long units, int items) {
        static DriftSummary of(InvariantReport r) {
            long units = 0;
            Set<String> items = new HashSet<>();
            for (Drift d : r.getDriftsList()) {
                units += Math.abs(d.getActual() - d.getExpected());
                items.add(d.getTenantId() + "\u0000" + d.getItemId());
            }
            return new DriftSummary(units, items.size());
        }
    }

    private final InvariantChecker checker;
    private final DataSource reads;
    private final Duration invariantInterval;
    private final Duration sampleInterval;
    private final String shardId;
    private final ScheduledExecutorService scheduler;
    private final InvariantMeters invariant;
    private final AtomicLong lockWaits = new AtomicLong();
    private volatile double longestTransactionSeconds;
    private final AtomicLong heldHolds = new AtomicLong();
    private final AtomicLong heldUnits = new AtomicLong();

    /** @param registry where the results go (a registry nobody reads when metrics are off) */
    public ShardChecks(InvariantChecker checker, DataSource reads, MeterRegistry registry, Duration invariantInterval,
                       Duration sampleInterval, String shardId) {
        this.checker = checker;
        this.reads = reads;
        this.invariantInterval = invariantInterval;
        this.sampleInterval = sampleInterval;
        this.shardId = shardId;
        MeterRegistry r = registry == null ? new CompositeMeterRegistry() : registry;
        invariant = new InvariantMeters(r, "shard", Tags.empty(), System.currentTimeMillis() / 1000);
        Gauge.builder(Metrics.PREFIX + "db.lock.waits", lockWaits, AtomicLong::get)
                .description("sessions of the shard's database waiting for a lock").register(r);
        Gauge.builder(Metrics.PREFIX + "db.transaction.oldest", this, c -> c.longestTransactionSeconds)
                .baseUnit("seconds").description("age of the oldest open transaction on the shard's database")
                .register(r);
        Gauge.builder(Metrics.PREFIX + "holds.held", heldHolds, AtomicLong::get)
                .description("holds HELD on the shard now").register(r);
        Gauge.builder(Metrics.PREFIX + "held.units", heldUnits, AtomicLong::get).baseUnit("units")
                .description("units held on the shard now").register(r);
        this.scheduler = Executors.newSingleThreadScheduledExecutor(t -> {
            Thread th = new Thread(t, "shard-checks");
            th.setDaemon(true);
            return th;
        });
    }

    public ShardChecks start() {
        if (!invariantInterval.isZero()) {
            scheduler.scheduleWithFixedDelay(this::checkInvariants, invariantInterval.toMillis(),
                    invariantInterval.toMillis(), TimeUnit.MILLISECONDS);
        }
        if (!sampleInterval.isZero()) {
            scheduler.scheduleWithFixedDelay(this::sample, 0, sampleInterval.toMillis(), TimeUnit.MILLISECONDS);
        }
        return this;
    }

    /** One invariant check of the whole shard, its result exported. Never throws. */
    void checkInvariants() {
        InvariantReport report;
        try {
            report = checker.check("", "");
        } catch (SQLException | RuntimeException e) {
            invariant.failed();
            log.warn("shard {}: the invariant check could not run: {}", shardId, e.toString());
            return;
        }
        DriftSummary s = DriftSummary.of(report);
        invariant.checked(s.units(), s.items(), System.currentTimeMillis() / 1000);
        if (report.getDriftsCount() == 0) {
            return;
        }
        List<Drift> first = report.getDriftsList().subList(0, Math.min(DRIFTS_LOGGED_MAX, report.getDriftsCount()));
        log.error("shard {}: INVARIANT DRIFT: {} units over {} items ({} drifts); first: {}", shardId, s.units(),
                s.items(), report.getDriftsCount(), first.stream().map(d -> d.getKind() + " " + d.getTenantId() + "/"
                        + d.getItemId() + "#" + d.getBucketNo() + " expected " + d.getExpected() + " found "
                        + d.getActual()).toList());
    }

    /** One look at the database's locks, transactions and holds. Never throws. */
    void sample() {
        try (Connection c = reads.getConnection(); PreparedStatement ps = c.prepareStatement(SAMPLE);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            lockWaits.set(rs.getLong(1));
            longestTransactionSeconds = rs.getDouble(2);
            heldHolds.set(rs.getLong(3));
            heldUnits.set(rs.getLong(4));
            c.rollback();
        } catch (SQLException e) {
            log.debug("shard {}: database sample failed: {}", shardId, e.getMessage());
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
