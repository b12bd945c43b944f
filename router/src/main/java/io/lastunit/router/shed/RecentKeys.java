package io.lastunit.router.shed;

import io.lastunit.common.keys.Fingerprints;
import io.lastunit.common.keys.LongSet;
import java.util.function.LongSupplier;

/**
 * Idempotency keys this router recently sent to a shard, so that a retry of such a key skips
 * the {@link SoldOutCache} and reaches the shard, which returns the key's hold. Without it, a
 * buyer whose Reserve timed out after it was placed would be told SOLD_OUT on retry while its
 * unit sits held. A retry through another router within the sold-out TTL can still get the
 * cached answer: the cache is per router (docs/routing.md). Thread-safe.
 *
 * <p><b>Fingerprints.</b> A key is stored as its 64-bit {@link Fingerprints#of(String, String, String)
 * fingerprint} (tenant, item, key) in a {@link LongSet}: eight to sixteen bytes in a long array, no object per key
 * for the garbage collector to copy. Two keys sharing a fingerprint only make the second one's
 * request skip the cache and ask the shard: harmless.
 *
 * <p><b>Generations.</b> Time is cut into spans of {@code ttl / 9} (rounded up to a whole
 * nanosecond), counted from construction. A key goes into the generation of the span it is
 * remembered in; the current generation and the nine before it are live, and {@link #seen}
 * looks in all ten. A generation is dropped whole, without a scan, once ten spans have begun
 * after it. So a key is seen for at least {@code ttl} (nine whole spans after its own) and at
 * most ten spans, {@code ttl} plus one span.
 *
 * <p><b>Stripes and bound.</b> The fingerprints are split by their top bits into up to 16
 * stripes, each with its own ring of generations under its own lock. At most {@code keysMax}
 * fingerprints are held: each stripe holds at most its share. A stripe whose share is full drops
 * its oldest generation early, the current one last. A forgotten key only costs its retry the
 * cache hit it should have skipped, never correctness of stock: the shard still decides.
 */
public final class RecentKeys {
    /** Live generations: the current one and the nine before it. */
    private static final int GENERATIONS = 10;
    private static final int STRIPES_MAX = 16;
    /** No stripe below this share: a small set is one stripe, and its bound is exact. */
    private static final int STRIPE_SHARE_MIN = 1024;

    /** One stripe's ring of generations. Generation {@code e} sits at {@code e mod GENERATIONS}. */
    private static final class Stripe {
        private final int share;
        private final LongSet[] sets = new LongSet[GENERATIONS];
        private final long[] epochs = new long[GENERATIONS];
        /** The newest epoch this stripe saw: its time never goes back for a thread with an older clock. */
        private long latest = Long.MIN_VALUE;
        private int size;

        Stripe(int share) {
            this.share = share;
        }

        synchronized void remember(long fingerprint, long epoch) {
            long current = advance(epoch);
            int i = (int) Math.floorMod(current, (long) GENERATIONS);
            if (sets[i] != null && sets[i].contains(fingerprint)) {
                return;
            }
            while (size >= share) {
                dropOldest();
            }
            if (sets[i] == null) {
                sets[i] = new LongSet();
                epochs[i] = current;
            }
            sets[i].add(fingerprint);
            size++;
        }

        synchronized boolean seen(long fingerprint, long epoch) {
            advance(epoch);
            for (LongSet set : sets) {
                if (set != null && set.contains(fingerprint)) {
                    return true;
                }
            }
            return false;
        }

        synchronized int size(long epoch) {
            advance(epoch);
            return size;
        }

        /** Moves to {@code epoch} (if it is newer) and drops the generations no longer live. */
        private long advance(long epoch) {
            if (epoch > latest) {
                latest = epoch;
                for (int i = 0; i < GENERATIONS; i++) {
                    if (sets[i] != null && latest - epochs[i] >= GENERATIONS) {
                        drop(i);
                    }
                }
            }
            return latest;
        }

        private void dropOldest() {
            int oldest = -1;
            for (int i = 0; i < GENERATIONS; i++) {
                if (sets[i] != null && (oldest < 0 || epochs[i] < epochs[oldest])) {
                    oldest = i;
                }
            }
            drop(oldest);
        }

        private void drop(int i) {
            size -= sets[i].size();
            sets[i] = null; // its table goes too: a generation that grew in a flood does not keep its size
        }
    }

    private final Stripe[] stripes;
    private final long spanNanos;
    private final long originNanos;
    private final LongSupplier nanoClock;

    public RecentKeys(long ttlNanos, int keysMax, LongSupplier nanoClock) {
        if (ttlNanos <= 0 || keysMax < 1) {
            throw new IllegalArgumentException("recent keys need ttl > 0 and keysMax >= 1");
        }
        long spans = GENERATIONS - 1;
        this.spanNanos = ttlNanos / spans + (ttlNanos % spans == 0 ? 0 : 1);
        this.nanoClock = nanoClock;
        this.originNanos = nanoClock.getAsLong();
        int n = Math.min(STRIPES_MAX, Math.max(1, Integer.highestOneBit(keysMax / STRIPE_SHARE_MIN)));
        this.stripes = new Stripe[n];
        for (int i = 0; i < n; i++) {
            stripes[i] = new Stripe(keysMax / n + (i < keysMax % n ? 1 : 0));
        }
    }

    /** Remembers a Reserve's key: (tenant, item, idempotency key) names one Reserve. */
    public void remember(String tenant, String item, String key) {
        long fingerprint = Fingerprints.of(tenant, item, key);
        stripe(fingerprint).remember(fingerprint, epochNow());
    }

    public boolean seen(String tenant, String item, String key) {
        long fingerprint = Fingerprints.of(tenant, item, key);
        return stripe(fingerprint).seen(fingerprint, epochNow());
    }

    /** Number of fingerprints held in live generations (a key remembered in two generations counts twice). */
    public int size() {
        long epoch = epochNow();
        int n = 0;
        for (Stripe s : stripes) {
            n += s.size(epoch);
        }
        return n;
    }

    private long epochNow() {
        return Math.floorDiv(nanoClock.getAsLong() - originNanos, spanNanos);
    }

    private Stripe stripe(long fingerprint) {
        // The top bits: LongSet places a fingerprint by its lower bits, which a stripe's keys then still spread over.
        return stripes[(int) (fingerprint >>> 60) & (stripes.length - 1)];
    }
}
