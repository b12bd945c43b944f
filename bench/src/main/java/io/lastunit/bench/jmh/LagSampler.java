package io.lastunit.bench.jmh;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Samples a primary's {@code pg_stat_replication} (the first standby's write and flush lag) every
 * {@code periodMs} on one connection of its own, and sums the samples into a window that
 * {@link #take()} hands over and restarts. Lags are read while a load runs: PostgreSQL reports
 * them per WAL position the standby confirmed, and clears them (null) once it has caught up and
 * no new WAL comes, so a null sample counts in {@code samples} but not in {@code withLag}.
 *
 * <p>Thread-safe: one daemon thread samples; {@link #take()} and {@link #close()} may be called from
 * any thread. A failed sample closes the connection; the next tick opens a new one (one attempt
 * per period, so a dead server is not hammered). {@link #close()} waits at most
 * {@value #CLOSE_WAIT_SECONDS} s for a sample in progress.
 */
final class LagSampler implements AutoCloseable {
    static final long CLOSE_WAIT_SECONDS = 5;
    private static final String QUERY = "SELECT extract(epoch FROM write_lag) * 1000, extract(epoch FROM flush_lag) * 1000"
            + " FROM pg_stat_replication ORDER BY application_name LIMIT 1";

    /** Opens the sampler's connection. */
    @FunctionalInterface
    interface Connector {
        Connection connect() throws SQLException;
    }

    /** What a window saw: samples taken, samples with a flush lag, mean write and flush lag, max flush lag (ms). */
    record Window(long samples, long withLag, double writeMeanMs, double flushMeanMs, double flushMaxMs) {
    }

    private final Connector connector;
    private final ScheduledExecutorService thread;
    private Connection connection; // the sampling thread's, until close() saw it stop
    private long samples;          // guarded by this
    private long withLag;
    private double writeSumMs;
    private double flushSumMs;
    private double flushMaxMs;

    LagSampler(Connector connector, long periodMs) {
        if (periodMs < 10 || periodMs > 60_000) {
            throw new IllegalArgumentException("periodMs=" + periodMs + " must be between 10 and 60000");
        }
        this.connector = connector;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-replication-lag-sampler");
            t.setDaemon(true);
            return t;
        });
        thread.scheduleWithFixedDelay(this::sample, periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    private void sample() {
        try {
            if (connection == null) {
                connection = connector.connect();
            }
            try (Statement st = connection.createStatement(); ResultSet rs = st.executeQuery(QUERY)) {
                if (rs.next()) {
                    double write = rs.getDouble(1);
                    boolean writeNull = rs.wasNull();
                    double flush = rs.getDouble(2);
                    add(writeNull ? 0 : write, rs.wasNull() ? Double.NaN : flush);
                } else {
                    add(0, Double.NaN);
                }
            }
        } catch (SQLException | RuntimeException e) {
            closeConnection();
        }
    }

    /** One sample; {@code flushMs} NaN when PostgreSQL reported no lag. Package-private for tests. */
    synchronized void add(double writeMs, double flushMs) {
        samples++;
        if (!Double.isNaN(flushMs)) {
            withLag++;
            writeSumMs += writeMs;
            flushSumMs += flushMs;
            flushMaxMs = Math.max(flushMaxMs, flushMs);
        }
    }

    /** The window since the last call (means NaN when no sample had a lag), and a new one begun. */
    synchronized Window take() {
        Window w = new Window(samples, withLag, withLag == 0 ? Double.NaN : writeSumMs / withLag,
                withLag == 0 ? Double.NaN : flushSumMs / withLag, withLag == 0 ? Double.NaN : flushMaxMs);
        samples = 0;
        withLag = 0;
        writeSumMs = 0;
        flushSumMs = 0;
        flushMaxMs = 0;
        return w;
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // the sample failed already; a new connection comes next tick
            }
            connection = null;
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        boolean stopped = false;
        try {
            stopped = thread.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (stopped) {
            closeConnection(); // the sampling thread is gone: its connection is ours now
        } // else it is stuck in a sample past the bound; its connection dies with the server
    }
}
