package io.lastunit.router.shed;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A token bucket per (tenant, buyer): {@code ratePerSecond} refill, {@code burst} capacity. A
 * buyer over its rate is refused at the router (RESOURCE_EXHAUSTED, RATE_LIMITED) before any
 * shard sees the request. Thread-safe.
 *
 * <p><b>Generations.</b> The buckets live in two generations, {@code current} and {@code previous}.
 * The horizon {@code H = burst / ratePerSecond} is the time an empty bucket takes to refill
 * completely (40 / 20 per second = 2 s by default). Once {@code current} is {@code H} old (checked
 * on calls, against the nano clock: no thread of its own), it becomes {@code previous} and a new,
 * empty {@code current} begins; the old {@code previous} is dropped whole, without a scan. A
 * lookup tries {@code current}, then {@code previous}, and moves a bucket it finds there into
 * {@code current}. So a bucket that is dropped was not touched since the drop's {@code current}
 * began, at least {@code H} ago: it had refilled to {@code burst}, exactly what a new bucket
 * holds. Forgetting it changes no answer. (When {@code current} is {@code 2H} old, nothing in
 * either generation was touched for {@code H}, and both go.) A buyer is remembered for between {@code H}
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
 * <p><b>Threads.</b> The two generations sit in one immutable holder behind a volatile field: a turn
 * replaces the holder under a lock, taken only when a turn is due. A generation is sealed before
 * it stops being {@code current}, so that a thread still holding the old holder can add no
 * bucket to it (it waits for the turn and retries with a fresh clock reading). A bucket's tokens
 * change under the lock of its stripe (below); a bucket that moves from {@code previous} to
 * {@code current} is taken out of one stripe and put into the other with both locks held, newer
 * generation first (no cycle: a thread only ever waits from a newer generation to an older one).
 *
 * <p><b>Storage.</b> A generation keeps its buckets in {@link Stripe#COUNT} open-addressing tables
 * of primitives (a 64-bit fingerprint of tenant and buyer, the tokens, the last refill), each
 * under its own lock, not as objects in a map. Every buyer of a flash sale is new, so at 12,000
 * Reserves a second a router tracks some 40,000 buckets that live 2-4 s: as a map of strings and
 * small objects (about 160,000 of them) they survived several young collections each and were
 * copied every time, over half of each G1 pause. As arrays they are a few objects. The
 * fingerprint is {@code murmur3_128} under a seed drawn at start, so buyer ids cannot be chosen
 * to collide; two buyers that share one (about 2<sup>-64</sup> per pair) share a bucket, which
 * can only refuse one of them early.
 */
public final class BuyerRateLimiter {
    /**
     * One lock's share of a generation's buckets: linear probing over parallel arrays, a key of 0
     * marks a free slot, at most half full (it doubles), deletion by backward shift. Guarded by
     * its own monitor.
     */
    static final class Stripe {
        /** Stripes per generation: a power of two. */
        static final int COUNT = 16;
        private static final int CAPACITY_MIN = 16;

        private long[] keys = new long[CAPACITY_MIN];
        private double[] tokens = new double[CAPACITY_MIN];
        private long[] lastNanos = new long[CAPACITY_MIN];
        private int size;

        /** The slot of {@code key}, or -1. */
        int find(long key) {
            int mask = keys.length - 1;
            for (int i = (int) key & mask; ; i = (i + 1) & mask) {
                long k = keys[i];
                if (k == key) {
                    return i;
                }
                if (k == 0) {
                    return -1;
                }
            }
        }

        /** Puts {@code key} (absent) and returns its slot. */
        int insert(long key, double t, long last) {
            if (2 * (size + 1) > keys.length) {
                grow();
            }
            int mask = keys.length - 1;
            int i = (int) key & mask;
            while (keys[i] != 0) {
                i = (i + 1) & mask;
            }
            keys[i] = key;
            tokens[i] = t;
            lastNanos[i] = last;
            size++;
            return i;
        }

        /** Frees slot {@code i}, moving back the entries after it that probed past it. */
        void removeAt(int i) {
            int mask = keys.length - 1;
            int hole = i;
            for (int j = (hole + 1) & mask; keys[j] != 0; j = (j + 1) & mask) {
                int home = (int) keys[j] & mask;
                // j's entry may fill the hole unless its home lies cyclically in (hole, j]
                boolean stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
                if (!stays) {
                    keys[hole] = keys[j];
                    tokens[hole] = tokens[j];
                    lastNanos[hole] = lastNanos[j];
                    hole = j;
                }
            }
            keys[hole] = 0;
            size--;
        }

        int size() {
            return size;
        }

        /** The last refill of slot {@code i} (tests). */
        long lastNanosAt(int i) {
            return lastNanos[i];
        }

        private void grow() {
            long[] k = keys;
            double[] t = tokens;
            long[] l = lastNanos;
            keys = new long[k.length * 2];
            tokens = new double[k.length * 2];
            lastNanos = new long[k.length * 2];
            size = 0;
            for (int i = 0; i < k.length; i++) {
                if (k[i] != 0) {
                    insert(k[i], t[i], l[i]);
                }
            }
        }
    }

    /** One generation's buckets and how many there are; sealed once it stops being current. */
    private static final class Generation {
        private static final long SEALED = 1L << 32;

        final Stripe[] stripes = new Stripe[Stripe.COUNT];
        /** The low 32 bits count the buckets; {@link #SEALED} is set once no bucket may join. */
        private final AtomicLong state;

        Generation(boolean sealed) {
            state = new AtomicLong(sealed ? SEALED : 0);
            for (int i = 0; i < stripes.length; i++) {
                stripes[i] = new Stripe();
            }
        }

        Stripe stripe(long key) {
            return stripes[(int) (key >>> 60) & (Stripe.COUNT - 1)]; // the slot uses the low bits
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
    private final HashFunction fingerprints = Hashing.murmur3_128(ThreadLocalRandom.current().nextInt());
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
        long key = fingerprint(tenant, buyer);
        boolean turnedEarly = false;
        for (;;) {
            long now = nanoClock.getAsLong();
            Generations g = generationsAt(now);
            int answer = acquire(g, key, now);
            if (answer != UNTRACKED) {
                return answer == ALLOWED;
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

    private static final int ALLOWED = 0;
    private static final int REFUSED = 1;
    /** No bucket: {@code g.current} is sealed, or the bound is reached. */
    private static final int UNTRACKED = 2;

    /** The 64-bit fingerprint of {@code (tenant, buyer)}; never 0 (a free slot). */
    private long fingerprint(String tenant, String buyer) {
        long h = fingerprints.newHasher().putString(tenant, StandardCharsets.UTF_8).putByte((byte) 0)
                .putString(buyer, StandardCharsets.UTF_8).hash().asLong();
        return h == 0 ? 1 : h;
    }

    /**
     * Takes a token from {@code key}'s bucket in {@code g.current}, which is the one moved there
     * from {@code g.previous} or a new full one if it has none yet.
     */
    private int acquire(Generations g, long key, long now) {
        Stripe cur = g.current.stripe(key);
        synchronized (cur) {
            int i = cur.find(key);
            if (i < 0) {
                double tokens = burst;
                long last = now;
                Stripe prev = g.previous.stripe(key);
                boolean moved = false;
                synchronized (prev) {
                    int j = prev.find(key);
                    if (j >= 0) {
                        tokens = prev.tokens[j];
                        last = prev.lastNanos[j];
                        prev.removeAt(j);
                        moved = true;
                    }
                }
                if (moved) {
                    // Count it in current before it leaves previous's count: the total never reads low.
                    if (!g.current.claim(Long.MAX_VALUE)) {
                        return UNTRACKED; // sealed: previous is being dropped, and this bucket with it
                    }
                    g.previous.release();
                } else if (!g.current.claim((long) buyersMax - g.previous.size())) {
                    // previous is sealed: its count only falls, so this limit is never too high.
                    return UNTRACKED;
                }
                i = cur.insert(key, tokens, last);
            }
            return take(cur, i, now) ? ALLOWED : REFUSED;
        }
    }

    /** Under {@code s}'s monitor: refills slot {@code i} to {@code now} and takes a token if it has one. */
    private boolean take(Stripe s, int i, long now) {
        double t = Math.min(burst, s.tokens[i] + (now - s.lastNanos[i]) * ratePerNano);
        s.lastNanos[i] = now;
        // The epsilon absorbs floating-point drift of many small refills (ten 10 ms steps at 10/s = 1 token).
        if (t >= 1 - 1e-12) {
            s.tokens[i] = Math.max(0, t - 1);
            return true;
        }
        s.tokens[i] = t;
        return false;
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
