package io.lastunit.shard.lane;

import java.util.Collection;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A lane's bounded queue: many producers (gRPC transport threads, callers in process), one
 * consumer (the lane). Lock-free on both sides, unlike {@code ArrayBlockingQueue}, whose one
 * lock the lane holds while it drains a batch of hundreds: every caller that arrives meanwhile
 * parks on that lock and must be woken, a context switch per call on a two-core machine. Here a
 * producer never waits: it takes a slot with one atomic increment (or is refused when the
 * queue is full), links its operation, and wakes the lane only if the lane announced that it
 * is about to sleep.
 *
 * <p>The wake-up handshake: the lane sets {@code sleeping}, then looks at the queue once more
 * before it parks; a producer links its operation, then reads {@code sleeping}. Both are
 * volatile accesses, so at least one of the two sees the other: the lane finds the operation,
 * or the producer unparks it. Spurious wake-ups only cost a loop.
 *
 * <p>The same handshake serves {@link #awaitSize}, where the lane waits for a fuller batch: it
 * sets {@code wakeAt} before {@code sleeping}, and a producer wakes it only once the queue holds
 * that many operations, so a trickle of arrivals costs no wake-ups.
 */
final class LaneQueue {
    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    /** Slots taken: operations linked or about to be. Never above {@link #capacity}. */
    private final AtomicInteger size = new AtomicInteger();
    private final int capacity;
    private volatile Thread consumer;
    private volatile boolean sleeping;
    /** How many queued operations wake a sleeping consumer: 1, or the count {@link #awaitSize} waits for. */
    private volatile int wakeAt = 1;

    LaneQueue(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
        }
        this.capacity = capacity;
    }

    /** Any thread. False when the queue is full; nothing was queued then. */
    boolean offer(Op op) {
        int n = size.incrementAndGet();
        if (n > capacity) {
            size.decrementAndGet();
            return false;
        }
        ops.offer(op);
        if (sleeping && n >= wakeAt) {
            Thread t = consumer;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
        return true;
    }

    /** The consumer only: the next operation, waiting up to the timeout; null when none came. */
    Op poll(long timeout, TimeUnit unit) throws InterruptedException {
        Op op = take();
        if (op != null) {
            return op;
        }
        consumer = Thread.currentThread();
        sleeping = true;
        try {
            op = take(); // an offer that missed "sleeping" linked its op before this look
            if (op != null) {
                return op;
            }
            LockSupport.parkNanos(this, unit.toNanos(timeout));
        } finally {
            sleeping = false;
        }
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return take();
    }

    /**
     * The consumer only: waits until at least {@code count} operations are queued, or until
     * {@code nanos} have passed, whichever comes first. Returns at once if they are queued
     * already; an interrupt ends the wait and stays set.
     */
    void awaitSize(int count, long nanos) {
        if (size() >= count) {
            return;
        }
        long deadline = System.nanoTime() + nanos;
        consumer = Thread.currentThread();
        wakeAt = Math.max(1, count);
        sleeping = true;
        try {
            while (size() < count) { // an offer that missed "sleeping" counted its slot before this look
                long left = deadline - System.nanoTime();
                if (left <= 0 || Thread.currentThread().isInterrupted()) {
                    return;
                }
                LockSupport.parkNanos(this, left);
            }
        } finally {
            sleeping = false;
            wakeAt = 1;
        }
    }

    /** The consumer only: moves up to {@code max} operations into {@code to}; returns how many. */
    int drainTo(Collection<Op> to, int max) {
        int n = 0;
        Op op;
        while (n < max && (op = take()) != null) {
            to.add(op);
            n++;
        }
        return n;
    }

    /** Operations queued (or being linked this instant); a refused offer can show for an instant. */
    int size() {
        return Math.min(size.get(), capacity);
    }

    boolean isEmpty() {
        return ops.isEmpty();
    }

    private Op take() {
        Op op = ops.poll();
        if (op != null) {
            size.decrementAndGet();
        }
        return op;
    }
}
