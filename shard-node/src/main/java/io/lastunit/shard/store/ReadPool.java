package io.lastunit.shard.store;

import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Runs committed reads (GetStock, GetHold, the invariant check) on a few threads of their own,
 * so no transport thread ever waits on the database and reads never queue behind a lane's
 * writes. Bounded: {@code threads} workers and a queue of {@code queueCapacity}; a full queue
 * fails at once with QUEUE_FULL. Thread-safe.
 */
public final class ReadPool implements AutoCloseable {

    /** A read on a connection from the pool; the pool commits (ends) the transaction. */
    @FunctionalInterface
    public interface Read<T> {
        T apply(Connection c) throws SQLException;
    }

    private final DataSource dataSource;
    private final ThreadPoolExecutor executor;
    private final Duration retryAfter;
    private final boolean askAgainWhenBroken;

    /** Reads: each is asked once more on a new connection when its connection broke. */
    public ReadPool(DataSource dataSource, int threads, int queueCapacity, Duration retryAfter) {
        this(dataSource, threads, queueCapacity, retryAfter, "read-", true);
    }

    /**
     * Calls on {@code threads} threads named {@code threadPrefix} and a number; with
     * {@code askAgainWhenBroken}, a call whose connection broke is run once more (only for calls
     * that change nothing, or change it idempotently).
     */
    public ReadPool(DataSource dataSource, int threads, int queueCapacity, Duration retryAfter, String threadPrefix,
                    boolean askAgainWhenBroken) {
        if (threads < 1 || queueCapacity < 1) {
            throw new IllegalArgumentException("read pool needs threads >= 1 and queueCapacity >= 1, got threads="
                    + threads + ", queueCapacity=" + queueCapacity);
        }
        this.dataSource = dataSource;
        this.retryAfter = retryAfter;
        this.askAgainWhenBroken = askAgainWhenBroken;
        AtomicInteger n = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queueCapacity), r -> {
                    Thread t = new Thread(r, threadPrefix + n.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
    }

    private <T> T readOnce(Read<T> read) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            T v = read.apply(c);
            c.commit();
            return v;
        }
    }

    /**
     * The connection broke (the read may be asked again on another): SQL state class 08, or the
     * server ended the session (57P01 admin shutdown — a terminated backend or a fast shutdown —,
     * 57P02 crash shutdown, 57P03 cannot connect now).
     */
    static boolean brokenConnection(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
                || state.equals("57P03"));
    }

    /**
     * Runs {@code read} on a reader thread; once more on a new connection when the first one was
     * broken ({@link #brokenConnection}). A failure of PostgreSQL completes the future with
     * STORE_UNAVAILABLE saying {@code what} and an error id; its text is only logged
     * ({@link Failure#storeUnavailable}).
     *
     * @param what what failed, for the client's message, e.g. {@code "GetStock read failed"}
     */
    public <T> CompletableFuture<T> submit(String what, Read<T> read) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    f.complete(readOnce(read));
                } catch (SQLException e) {
                    if (!askAgainWhenBroken || !brokenConnection(e)) {
                        f.completeExceptionally(Failure.storeUnavailable(what, e, retryAfter));
                        return;
                    }
                    // A pooled connection the database ended (a restart, a failover): a read
                    // changes nothing, so it is asked once more on a new one.
                    try {
                        f.complete(readOnce(read));
                    } catch (SQLException again) {
                        f.completeExceptionally(Failure.storeUnavailable(what, again, retryAfter));
                    } catch (RuntimeException again) {
                        f.completeExceptionally(again);
                    }
                } catch (RuntimeException e) {
                    f.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(Failure.retryable(Reason.QUEUE_FULL, "read queue is full (capacity="
                    + executor.getQueue().remainingCapacity() + " left)", retryAfter));
        }
        return f;
    }

    @Override
    public void close() {
        executor.shutdown();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            executor.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
