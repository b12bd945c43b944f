package io.lastunit.router.shed;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A token bucket per (tenant, buyer): {@code ratePerSecond} refill, {@code burst} capacity. A
 * buyer over its rate is refused at the router (RESOURCE_EXHAUSTED, RATE_LIMITED) before any
 * shard sees the request. Thread-safe.
 *
 * <p><b>Generations.</b> The buckets live in two maps, {@code current} and {@code previous}.
 * The horizon {@code H = burst / ratePerSecond} is the time an empty bucket takes to refill
 * completely (40 / 20 per second = 2 s by default). Once {@code current} is {@code H} old (checked
 * on calls, against the nano clock: no thread of its own), it becomes {@code previous} and a new,
 * empty {@code current} begins; the old {@code previous} is dropped whole, without a scan. A
 * lookup tries {@code current}, then {@code previous}, and moves a bucket it finds there into
 * {@code current}. So a bucket that is dropped was not touched since the drop's {@code current}
 * began, at least {@code H} ago: it had refilled to {@code burst}, exactly what a new bucket
 * holds. Forgetting it changes no answer. (When {@code current} is {@code 2H} old, nothing in
 * either map was touched for {@code H}, and both go.) A buyer is remembered for between {@code H}
 * and {@code 2H} after its last request, instead of until a full map is scanned.
 *
 * <p><b>Bound.</b> At most {@code buyersMax} buckets are tracked in both generations together:
 * every generation counts its buckets, and a new bucket claims its place before it is added.
 * When a new buyer finds the bound reached and {@code current} holds at least half of it, the
 * generations turn early: {@code previous} is dropped (those buyers may not have refilled yet:
 * the one inexact forgetting, and only under a flood of new buyers), and the request is tracked
 * if that made room. If it did not, or if {@code current} is too small for an early turn to be
 * worth its loss (so a flood cannot make every new buyer drop the ones seen a moment before), the
 * request is allowed untracked rather than refused: a limiter must not become an outage.
 *
 * <p><b>Threads.</b> The two maps sit in one immutable holder behind a volatile field: a turn
 * replaces the holder under a lock, taken only when a turn is due. A generation is sealed before
 * it stops being {@code current}, so that a thread still holding the old holder can add no
 * bucket to it (it waits for the turn and retries with a fresh clock reading). Each bucket's
 * tokens change under the bucket's own monitor.
 */
public final class BuyerRateLimiter {
    private static final class Bucket {
        double tokens;
        long lastNanos;

        Bucket(double tokens, long lastNanos) {
            this.tokens = tokens;
            this.lastNanos = lastNanos;
        }
    }

    /** One generation's buckets and how many there are; sealed once it stops being current. */
    private static final class Generation {
        private static final long SEALED = 1L << 32;

        final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
        /** The low 32 bits count the buckets; {@link #SEALED} is set once no bucket may join. */
        private final AtomicLong state;

        Generation(boolean sealed) {
            state = new AtomicLong(sealed ? SEALED : 0);
        }

        int size() {
            return (int) state.get();
        }

        boolean sealed() {
            return (state.get() & SEALED) != 0;
        }

        void seal() {
            state.getAndAccumulate(SEALED, (s, bit) -> s | bit);
        }

        /** Counts one more bucket, unless this generation is sealed or holds {@code limit} already. */
        boolean claim(long limit) {
            for (;;) {
                long s = state.get();
                if ((s & SEALED) != 0 || (int) s >= limit) {
                    return false;
                }
                if (state.compareAndSet(s, s + 1)) {
                    return true;
                }
            }
        }

        /** Counts one bucket less (one that moved out). */
        void release() {
            state.decrementAndGet();
        }
    }

    /** The two generations, and when {@code current} began. */
    private static final class Generations {
        final Generation current;
        final Generation previous;
        final long sinceNanos;

        Generations(Generation current, Generation previous, long sinceNanos) {
            this.current = current;
            this.previous = previous;
            this.sinceNanos = sinceNanos;
        }
    }

    private final double ratePerNano;
    private final double burst;
    private final int buyersMax;
    /** The refill horizon H, at least 1 ns; capped so that 2H cannot overflow. */
    private final long horizonNanos;
    private final LongSupplier nanoClock;
    private final Object turnLock = new Object();
    private volatile Generations generations;

    public BuyerRateLimiter(double ratePerSecond, int burst, int buyersMax, LongSupplier nanoClock) {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond) || burst < 1 || buyersMax < 1) {
            throw new IllegalArgumentException("rate limiter needs ratePerSecond > 0, burst >= 1, buyersMax >= 1; got "
                    + ratePerSecond + ", " + burst + ", " + buyersMax);
        }
        this.ratePerNano = ratePerSecond / 1e9;
        this.burst = burst;
        this.buyersMax = buyersMax;
        double horizon = Math.ceil(burst / ratePerNano);
        this.horizonNanos = horizon >= Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 4 : Math.max(1, (long) horizon);
        this.nanoClock = nanoClock;
        this.generations = new Generations(new Generation(false), new Generation(true), nanoClock.getAsLong());
    }

    public boolean tryAcquire(String tenant, String buyer) {
        String key = tenant + '\0' + buyer;
        boolean turnedEarly = false;
        for (;;) {
            long now = nanoClock.getAsLong();
            Generations g = generationsAt(now);
            Bucket b = g.current.buckets.get(key);
            if (b == null) {
                b = g.current.buckets.computeIfAbsent(key, k -> adopt(g, k, now));
            }
            if (b != null) {
                return take(b, now);
            }
            if (g.current.sealed()) {
                synchronized (turnLock) {
                    // The turn that sealed it holds this lock until the new generations are published:
                    // once it is ours, retry with them and a clock read after the turn.
                }
            } else if (turnedEarly || !turnEarly(g)) {
                return true; // at the bound: allowed, untracked
            } else {
                turnedEarly = true;
            }
        }
    }

    /** Number of buckets tracked, in both generations. */
    public int tracked() {
        Generations g = generationsAt(nanoClock.getAsLong());
        return g.current.size() + g.previous.size();
    }

    private boolean take(Bucket b, long now) {
        synchronized (b) {
            b.tokens = Math.min(burst, b.tokens + (now - b.lastNanos) * ratePerNano);
            b.lastNanos = now;
            // The epsilon absorbs floating-point drift of many small refills (ten 10 ms steps at 10/s = 1 token).
            if (b.tokens >= 1 - 1e-12) {
                b.tokens = Math.max(0, b.tokens - 1);
                return true;
            }
            return false;
        }
    }

    /**
     * The bucket to put in {@code g.current} for {@code key} (called once per absent key, under the
     * map's lock for that key): the one in {@code g.previous}, or a new full one; null when
     * {@code g.current} is sealed or the bound is reached.
     */
    private Bucket adopt(Generations g, String key, long now) {
        Bucket moved = g.previous.buckets.remove(key);
        if (moved != null) {
            // Count it in current before it leaves previous's count: the total never reads low.
            if (!g.current.claim(Long.MAX_VALUE)) {
                return null; // sealed: previous is being dropped, and this bucket with it
            }
            g.previous.release();
            return moved;
        }
        // previous is sealed: its count only falls, so this limit is never too high.
        return g.current.claim((long) buyersMax - g.previous.size()) ? new Bucket(burst, now) : null;
    }

    /** The generations at {@code now}, after the turn that is due, if any. */
    private Generations generationsAt(long now) {
        Generations g = generations;
        if (now - g.sinceNanos < horizonNanos) {
            return g;
        }
        synchronized (turnLock) {
            g = generations;
            if (now - g.sinceNanos < horizonNanos) {
                return g; // another thread turned them
            }
            // Every bucket in previous was last touched before current began, at least H ago. A
            // bucket in current was last touched before current was H old (the call would have
            // turned first): if current is 2H old, its buckets have refilled too.
            boolean keepCurrent = now - g.sinceNanos < 2 * horizonNanos;
            return turn(g, keepCurrent ? g.current : new Generation(true), now);
        }
    }

    /**
     * At the bound, turns the generations early when current holds at least half the bound.
     * Returns whether to retry (turned here, or by another thread meanwhile).
     */
    private boolean turnEarly(Generations g) {
        synchronized (turnLock) {
            if (generations != g) {
                return true;
            }
            if (2L * g.current.size() < buyersMax) {
                return false;
            }
            turn(g, g.current, nanoClock.getAsLong());
            return true;
        }
    }

    /** Under {@link #turnLock}: drops {@code g.previous}, keeps {@code previous}, starts a new current at {@code now}. */
    private Generations turn(Generations g, Generation previous, long now) {
        g.current.seal();
        Generations next = new Generations(new Generation(false), previous, now);
        generations = next;
        return next;
    }
}
