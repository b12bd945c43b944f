package io.lastunit.shard.lane;

import io.lastunit.shard.seats.SeatItem.LiveHold;
import io.lastunit.shard.seats.SeatStore;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A seat lane's batches of new holds still being written: each is one self-committing statement
 * (see {@code SeatStore.placeInOneStatement}) that a writer thread runs while the lane decides
 * the next batch on the memory the earlier ones left. The statements chain through the item's
 * bucket row, which each moves by the seats it claims, so they may commit in either order; the
 * seat claims stay the arbiter (a batch claims only seats in no hold, or is refused whole). What a
 * batch answered without a hold was decided on the memory of the batch before it, so it goes out
 * only after both committed.
 *
 * <p>At most {@link #IN_FLIGHT_MAX} writes at a time per lane. The writer thread answers the
 * callers of a write that committed (through the lane's replier); the lane thread settles each
 * write in order ({@link #oldest}, {@link #poll}) to learn its database times or its refusal.
 *
 * <p>Thread-safety: {@link #submit}, {@link #oldest}, {@link #poll} and {@link #size} on the lane
 * thread only; the writes themselves run on the writer threads.
 */
final class SeatWrites {
    /** Writes in flight per lane: the one committing and the one waiting on its bucket row. */
    static final int IN_FLIGHT_MAX = 2;
    /** How long the lane waits for one write before it treats its outcome as unknown. */
    static final long WAIT_MAX_SECONDS = 120;

    /**
     * One write: the item, the operations it answers, the holds it places (in the lane's memory
     * already, with the lane's estimate of their times until it is settled), and the operations
     * answered without a hold (SOLD_OUT, SEATS_TAKEN, refusals), whose answers were decided on the
     * memory of the writes before it: those go out only once this write and the one before it
     * committed ({@code laterSent}); otherwise the lane decides them again.
     */
    record Write(Object item, List<Op> ops, List<LiveHold> holds, List<Op> laterOps,
                 CompletableFuture<SeatStore.PlacedBatch> done, AtomicBoolean laterSent) {
    }

    /** What waiting for a write gave: its statement's result, or why there is none. */
    record Outcome(Write write, SeatStore.PlacedBatch placed, Throwable failure) {
    }

    private final ArrayDeque<Write> inFlight = new ArrayDeque<>();
    private final ThreadPoolExecutor writers;

    private final Replier replier;

    SeatWrites(int lane, Replier replier) {
        this.replier = replier;
        writers = new ThreadPoolExecutor(IN_FLIGHT_MAX, IN_FLIGHT_MAX, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(IN_FLIGHT_MAX), r -> {
                    Thread t = new Thread(r, "lane-" + lane + "-seat-writes");
                    t.setDaemon(true);
                    return t;
                });
    }

    int size() {
        return inFlight.size();
    }

    boolean full() {
        return inFlight.size() >= IN_FLIGHT_MAX;
    }

    /**
     * Starts a write; the caller made room first ({@link #full}). {@code statement} writes it and
     * answers its holds' callers; then, if the write before it committed too, {@code later} goes out.
     */
    void submit(Object item, List<Op> ops, List<LiveHold> holds, List<Op> laterOps, List<Runnable> later,
                Callable<SeatStore.PlacedBatch> statement) {
        if (full()) {
            throw new IllegalStateException(inFlight.size() + " seat writes in flight already");
        }
        Write before = inFlight.peekLast();
        CompletableFuture<SeatStore.PlacedBatch> done = new CompletableFuture<>();
        AtomicBoolean laterSent = new AtomicBoolean();
        writers.execute(() -> {
            SeatStore.PlacedBatch placed;
            try {
                placed = statement.call();
            } catch (Throwable t) {
                done.completeExceptionally(t);
                return;
            }
            try {
                if (before == null || committed(before)) {
                    laterSent.set(true);
                    replier.reply(later);
                }
            } finally {
                done.complete(placed);
            }
        });
        inFlight.add(new Write(item, ops, holds, laterOps, done, laterSent));
    }

    /** Waits (bounded) for a write on a writer thread: whether it committed. */
    private static boolean committed(Write w) {
        try {
            w.done().get(WAIT_MAX_SECONDS, TimeUnit.SECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    /** The oldest write in flight, or null. */
    Write oldest() {
        return inFlight.peek();
    }

    /**
     * Waits for the oldest write (bounded by {@link #WAIT_MAX_SECONDS}: past it, its outcome is
     * unknown) and removes it. Interrupted, it leaves the write in flight ({@link #drop}).
     */
    Outcome poll() throws InterruptedException {
        Write w = inFlight.peek();
        if (w == null) {
            throw new IllegalStateException("no seat write in flight");
        }
        Outcome o;
        try {
            o = new Outcome(w, w.done().get(WAIT_MAX_SECONDS, TimeUnit.SECONDS), null);
        } catch (ExecutionException e) {
            o = new Outcome(w, null, e.getCause());
        } catch (TimeoutException e) {
            o = new Outcome(w, null, e);
        }
        inFlight.poll();
        return o;
    }

    /** Forgets the oldest write without waiting (the lane was interrupted; its outcome is unknown). */
    void drop() {
        inFlight.poll();
    }

    /** Whether a write of {@code item} is in flight. */
    boolean holds(Object item) {
        for (Write w : inFlight) {
            if (w.item().equals(item)) {
                return true;
            }
        }
        return false;
    }

    /** Ends the writer threads once what was submitted is written (bounded wait). */
    void close() throws InterruptedException {
        ExecutorService w = writers;
        w.shutdown();
        w.awaitTermination(WAIT_MAX_SECONDS, TimeUnit.SECONDS);
    }
}
