package io.lastunit.shard.retention;

import io.lastunit.shard.retention.RetiredRows.Kind;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAccumulator;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the rows a shard no longer needs, off the hot path (docs/operations.md, "Retention"):
 * holds that ended longer ago than {@code holdsAfter} and DONE OUT transfer records completed
 * longer ago than {@code transfersAfter}, by the database's clock. Every {@code interval} one pass
 * runs on the node's {@code retention} thread: for each kind, the tenants with due rows
 * ({@link RetiredRows#dueTenants}), each drained in batches of at most {@code batchMax} rows, one
 * transaction each with a pause after it, at most {@code batchesPerRunMax} batches per kind and
 * pass; the next pass goes on from the tenant where this one stopped, so a tenant with a large
 * backlog does not starve the others. Each batch adds what it deleted to the retired totals in the
 * same statement, so the invariants hold exactly before and after it.
 *
 * <p>A tenant is left alone, for the pass, when a move names it ({@link MovingTenants}, asked after
 * the batch took the tenant's lock), when one of its items here is fenced by a move, or when a
 * move's call holds its lock: a move's delta export would not see a deletion, and its verification
 * compares both sides' rows. A pass that cannot tell which tenants move deletes nothing.
 *
 * <p>The outbox and restocks are never touched: the outbox waits for its reader, and a restock row
 * is what makes a repeated Restock add nothing.
 *
 * <p>Thread-safe: passes run one at a time, on the retention thread or a caller of {@link #runOnce}.
 * A batch holds one pooled connection for its milliseconds, takes no lock a lane waits for (it
 * deletes ended rows only, which no lane statement changes) and takes the tenant's advisory lock
 * shared, which no sale takes. Hazard: a key reused after its hold was deleted names a new Reserve;
 * while the old row's delete has not committed, a lane inserting that key waits for it (one batch).
 */
public final class Retention implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Retention.class);

    /**
     * What one pass did.
     *
     * @param deleted rows deleted, by kind
     * @param units   sold units of the holds deleted; units of the transfer records deleted
     * @param batches delete statements run
     * @param skipped tenants left alone (a move names them, fences an item, or holds their lock)
     * @param more    a kind's batch budget ran out with rows still due: the next pass goes on
     */
    public record Pass(Map<Kind, Long> deleted, Map<Kind, Long> units, int batches, int skipped, boolean more,
                       long millis) {
        public Pass {
            deleted = Map.copyOf(deleted);
            units = Map.copyOf(units);
        }

        public long holds() {
            return deleted.getOrDefault(Kind.HOLDS, 0L);
        }

        public long transfers() {
            return deleted.getOrDefault(Kind.TRANSFERS, 0L);
        }
    }

    /**
     * Counters since the node started (exported by a later issue; today in the log line of each pass).
     *
     * @param runs             passes finished
     * @param failures         passes that failed (PostgreSQL, or the node could not tell which tenants move)
     * @param batches          delete statements committed
     * @param holdsDeleted     holds deleted
     * @param soldUnitsRetired units of the SOLD holds among them, now in {@code retired_hold_totals}
     * @param transfersDeleted DONE OUT transfer records deleted
     * @param tenantsSkipped   times a tenant was left alone for a pass
     * @param lastRunMillis    how long the last finished pass took, pauses included
     * @param batchNanosTotal  time spent in batches (from taking the connection to the commit)
     * @param batchNanosMax    the longest batch
     */
    public record Stats(long runs, long failures, long batches, long holdsDeleted, long soldUnitsRetired,
                        long transfersDeleted, long tenantsSkipped, long lastRunMillis, long batchNanosTotal,
                        long batchNanosMax) {
        /** Mean time of one batch in milliseconds, 0 before the first. */
        public double meanBatchMillis() {
            return batches == 0 ? 0 : batchNanosTotal / 1e6 / batches;
        }
    }

    private final DataSource dataSource;
    private final RetentionConfig config;
    private final MovingTenants moving;
    private final RetiredRows rows = new RetiredRows();
    /** Per kind, the tenant the next pass starts at (inclusive; "" from the first). Guarded by this. */
    private final Map<Kind, String> cursor = new EnumMap<>(Kind.class);
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "retention");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong runs = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong holdsDeleted = new AtomicLong();
    private final AtomicLong soldUnits = new AtomicLong();
    private final AtomicLong transfersDeleted = new AtomicLong();
    private final AtomicLong tenantsSkipped = new AtomicLong();
    private final AtomicLong batchNanos = new AtomicLong();
    private final LongAccumulator batchNanosMax = new LongAccumulator(Math::max, 0);
    private volatile long lastRunMillis;

    public Retention(DataSource dataSource, RetentionConfig config, MovingTenants moving) {
        this.dataSource = dataSource;
        this.config = config;
        this.moving = moving;
        for (Kind k : Kind.values()) {
            cursor.put(k, "");
        }
    }

    /** Schedules the passes: the first one {@code interval} after this call. */
    public void start() {
        long every = config.interval().toMillis();
        scheduler.scheduleWithFixedDelay(this::runQuietly, every, every, TimeUnit.MILLISECONDS);
    }

    private void runQuietly() {
        try {
            runOnce();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (SQLException | RuntimeException e) {
            log.warn("retention pass failed, next try in {} s: {}", config.interval().toSeconds(), e.toString());
        }
    }

    /**
     * One pass, now, on the caller's thread (after any pass in progress). Deletes nothing for a tenant a
     * move names; each kind stops after {@code batchesPerRunMax} batches.
     *
     * @throws InterruptedException when interrupted in a pause (what was committed stays)
     * @throws SQLException         when PostgreSQL fails (the batch in progress is rolled back)
     */
    public synchronized Pass runOnce() throws SQLException, InterruptedException {
        long started = System.nanoTime();
        Map<Kind, Long> deleted = new EnumMap<>(Kind.class);
        Map<Kind, Long> units = new EnumMap<>(Kind.class);
        int[] counts = new int[2]; // batches, skipped
        boolean more = false;
        try {
            for (Kind kind : Kind.values()) {
                more |= drain(kind, deleted, units, counts);
            }
        } catch (SQLException | RuntimeException e) {
            failures.incrementAndGet();
            throw e;
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        lastRunMillis = millis;
        runs.incrementAndGet();
        Pass pass = new Pass(deleted, units, counts[0], counts[1], more, millis);
        if (pass.holds() + pass.transfers() > 0) {
            log.info("retention holds={} sold_units={} transfers={} batches={} ms={} skipped={} more={}", pass.holds(),
                    units.getOrDefault(Kind.HOLDS, 0L), pass.transfers(), pass.batches(), millis, pass.skipped(), more);
        } else if (pass.skipped() > 0) {
            log.debug("retention: nothing deleted, {} tenant(s) left alone (a move works on them)", pass.skipped());
        }
        return pass;
    }

    /** The due rows of one kind, tenant by tenant from the cursor; true when the budget ran out first. */
    private boolean drain(Kind kind, Map<Kind, Long> deleted, Map<Kind, Long> units, int[] counts)
            throws SQLException, InterruptedException {
        int budget = config.batchesPerRunMax();
        int used = 0;
        List<String> tenants = dueTenants(kind, budget);
        for (String tenant : tenants) {
            while (true) {
                if (used == budget) {
                    cursor.put(kind, tenant);
                    return true;
                }
                used++;
                RetiredRows.Batch b = batch(kind, tenant);
                if (b == null) {
                    counts[1]++;
                    tenantsSkipped.incrementAndGet();
                    break;
                }
                counts[0]++;
                deleted.merge(kind, (long) b.rows(), Long::sum);
                units.merge(kind, b.units(), Long::sum);
                if (b.rows() > 0 && !config.batchPause().isZero()) {
                    Thread.sleep(config.batchPause().toMillis());
                }
                if (b.rows() < config.batchMax()) {
                    break;
                }
            }
            cursor.put(kind, tenant);
        }
        if (tenants.size() < budget) {
            cursor.put(kind, ""); // every tenant with rows due was visited
        }
        return false;
    }

    /** At most {@code max} tenants with rows of {@code kind} due: from the cursor on, then from the start. */
    private List<String> dueTenants(Kind kind, int max) throws SQLException {
        String from = cursor.get(kind);
        try (Connection c = dataSource.getConnection()) {
            try {
                List<String> out = new ArrayList<>(rows.dueTenants(c, kind, from, null, after(kind), max));
                if (out.size() < max && !from.isEmpty()) {
                    out.addAll(rows.dueTenants(c, kind, "", from, after(kind), max - out.size()));
                }
                c.commit();
                return out;
            } finally {
                c.rollback();
            }
        }
    }

    /** One batch of one tenant in a transaction of its own; null when the tenant is left alone. */
    private RetiredRows.Batch batch(Kind kind, String tenant) throws SQLException {
        long t0 = System.nanoTime();
        try (Connection c = dataSource.getConnection()) {
            try {
                if (rows.guard(c, tenant) != RetiredRows.Guard.CLEAR || moving.moving(tenant)) {
                    c.rollback();
                    return null;
                }
                RetiredRows.Batch b = rows.retire(c, kind, tenant, after(kind), config.batchMax());
                c.commit();
                long nanos = System.nanoTime() - t0;
                batches.incrementAndGet();
                batchNanos.addAndGet(nanos);
                batchNanosMax.accumulate(nanos);
                if (kind == Kind.HOLDS) {
                    holdsDeleted.addAndGet(b.rows());
                    soldUnits.addAndGet(b.units());
                } else {
                    transfersDeleted.addAndGet(b.rows());
                }
                log.debug("retention: {} {} of tenant {} deleted in {} µs", b.rows(), kind, tenant, nanos / 1_000);
                return b;
            } catch (SQLException | RuntimeException e) {
                try {
                    c.rollback();
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }
    }

    private Duration after(Kind kind) {
        return kind == Kind.HOLDS ? config.holdsAfter() : config.transfersAfter();
    }

    public Stats stats() {
        return new Stats(runs.get(), failures.get(), batches.get(), holdsDeleted.get(), soldUnits.get(),
                transfersDeleted.get(), tenantsSkipped.get(), lastRunMillis, batchNanos.get(), batchNanosMax.get());
    }

    public RetentionConfig config() {
        return config;
    }

    /** Stops the passes: a pass in progress ends after its current batch. Idempotent. */
    @Override
    public void close() {
        scheduler.shutdownNow();
        try {
            if (!scheduler.awaitTermination(10, TimeUnit.SECONDS)) {
                log.warn("retention thread still running after 10 s (a batch waiting on PostgreSQL)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
