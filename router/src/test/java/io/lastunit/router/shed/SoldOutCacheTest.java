package io.lastunit.router.shed;

import static io.lastunit.router.shed.SoldOutCache.Verdict.ASK_SHARD;
import static io.lastunit.router.shed.SoldOutCache.Verdict.PROBE;
import static io.lastunit.router.shed.SoldOutCache.Verdict.SOLD_OUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SoldOutCacheTest {

    static final long TTL = 1_000_000_000L; // 1 s

    final AtomicLong now = new AtomicLong(5_000_000_000L);

    SoldOutCache cache(long ttl, int max) {
        return new SoldOutCache(ttl, max, now::get);
    }

    static final ItemKey A = SoldOutCache.key("tenant-1", "sku-1", "eu");
    static final ItemKey B = SoldOutCache.key("tenant-1", "sku-2", "eu");
    static final ItemKey C = SoldOutCache.key("tenant-1", "sku-3", "eu");
    static final ItemKey D = SoldOutCache.key("tenant-1", "sku-4", "eu");

    @Test
    void unknownKeyIsNotSoldOut() {
        SoldOutCache c = cache(TTL, 10);

        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
        assertThat(c.isSoldOut(A)).isFalse();
        assertThat(c.size()).isZero();
    }

    @Test
    void markedKeyIsSoldOutForTheTtl_thenOneProbe_thenLeftToTheShardAfterASecondTtl() {
        SoldOutCache c = cache(TTL, 10);
        long t0 = now.get();

        c.markSoldOut(A);
        assertThat(c.size()).isEqualTo(1);
        assertThat(c.check(A)).isEqualTo(SOLD_OUT);

        now.set(t0 + TTL - 1);
        assertThat(c.check(A)).as("1 ns before expiry").isEqualTo(SOLD_OUT);

        now.set(t0 + TTL);
        assertThat(c.isSoldOut(A)).as("expired, no probe out yet").isFalse();
        assertThat(c.check(A)).as("at expiry: the first to ask is the probe").isEqualTo(PROBE);
        assertThat(c.check(A)).as("while the probe is out").isEqualTo(SOLD_OUT);
        assertThat(c.isSoldOut(A)).isTrue();

        now.set(t0 + 2 * TTL - 1);
        assertThat(c.check(A)).as("1 ns before the stale answer is too old").isEqualTo(SOLD_OUT);
        assertThat(c.size()).isEqualTo(1);

        now.set(t0 + 2 * TTL);
        assertThat(c.check(A)).as("the probe never came back: the shard answers again").isEqualTo(ASK_SHARD);
        assertThat(c.size()).as("removed on read").isZero();
        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
    }

    @Test
    void aProbesSoldOutRenewsTheEntry_andTheNextExpiryHasItsOwnProbe() {
        SoldOutCache c = cache(TTL, 10);
        long t0 = now.get();
        c.markSoldOut(A);

        now.set(t0 + TTL + 5);
        assertThat(c.check(A)).isEqualTo(PROBE);
        for (int i = 0; i < 100; i++) {
            assertThat(c.check(A)).as("one probe per expiry").isEqualTo(SOLD_OUT);
        }
        c.markSoldOut(A); // the probe's answer: still sold out

        now.set(t0 + 2 * TTL + 4);
        assertThat(c.check(A)).as("fresh again: renewed at the probe's answer").isEqualTo(SOLD_OUT);
        now.set(t0 + 2 * TTL + 5);
        assertThat(c.check(A)).isEqualTo(PROBE);
        assertThat(c.check(A)).isEqualTo(SOLD_OUT);
    }

    @Test
    void aProbeThatDoesNotProveSoldOutForgets_andEveryoneAsksTheShard() {
        SoldOutCache c = cache(TTL, 10);
        c.markSoldOut(A);
        now.addAndGet(TTL);
        assertThat(c.check(A)).isEqualTo(PROBE);

        c.forget(A); // the probe was RESERVED (a unit came back), or failed

        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
        assertThat(c.size()).isZero();
    }

    @Test
    void isSoldOutChangesNothing() {
        SoldOutCache c = cache(TTL, 10);
        c.markSoldOut(A);
        now.addAndGet(TTL);
        for (int i = 0; i < 3; i++) {
            assertThat(c.isSoldOut(A)).isFalse();
        }
        assertThat(c.check(A)).as("isSoldOut took no probe").isEqualTo(PROBE);
    }

    @Test
    void manyThreadsAtOneExpiry_exactlyOneIsTheProbe() throws Exception {
        SoldOutCache c = cache(TTL, 10);
        c.markSoldOut(A);
        now.addAndGet(TTL + 1); // the clock stands still past the expiry
        int threads = 8;
        int checks = 20_000;
        AtomicInteger probes = new AtomicInteger();
        AtomicInteger soldOut = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < checks; i++) {
                    switch (c.check(A)) {
                        case PROBE -> probes.incrementAndGet();
                        case SOLD_OUT -> soldOut.incrementAndGet();
                        case ASK_SHARD -> throw new AssertionError("ASK_SHARD inside the probe window");
                    }
                }
            });
            th.start();
            all.add(th);
        }
        go.countDown();
        for (Thread th : all) {
            th.join(30_000);
            assertThat(th.isAlive()).isFalse();
        }
        assertThat(probes.get()).isEqualTo(1);
        assertThat(soldOut.get()).isEqualTo(threads * checks - 1);
    }

    @Test
    void expiredEntryStaysCountedUntilReadOrEvicted() {
        SoldOutCache c = cache(TTL, 10);
        c.markSoldOut(A);
        c.markSoldOut(B);

        now.addAndGet(TTL * 5);
        assertThat(c.size()).isEqualTo(2);
        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
        assertThat(c.size()).isEqualTo(1);
    }

    @Test
    void markingAgainRestartsTheTtl() {
        SoldOutCache c = cache(TTL, 10);
        long t0 = now.get();
        c.markSoldOut(A);

        now.set(t0 + 400_000_000L);
        c.markSoldOut(A);
        assertThat(c.size()).isEqualTo(1);

        now.set(t0 + 400_000_000L + TTL - 1);
        assertThat(c.check(A)).isEqualTo(SOLD_OUT);
        now.set(t0 + 400_000_000L + TTL);
        assertThat(c.check(A)).isEqualTo(PROBE);
    }

    @Test
    void forgetClearsTheEntry() {
        SoldOutCache c = cache(TTL, 10);
        c.markSoldOut(A);
        c.markSoldOut(B);

        c.forget(A);

        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
        assertThat(c.check(B)).isEqualTo(SOLD_OUT);
        assertThat(c.size()).isEqualTo(1);

        c.forget(A); // forgetting twice, or an unknown key, is harmless
        c.forget(C);
        assertThat(c.size()).isEqualTo(1);
        assertThat(c.isSoldOut(B)).isTrue();
    }

    @Test
    void zeroTtlNeverRemembers() {
        SoldOutCache c = cache(0, 10);

        c.markSoldOut(A);

        assertThat(c.size()).isZero();
        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
    }

    @Test
    void oneNanosecondTtlRemembersForExactlyOneNanosecond_andProbesForOneMore() {
        SoldOutCache c = cache(1, 10);
        long t0 = now.get();

        c.markSoldOut(A);

        assertThat(c.check(A)).isEqualTo(SOLD_OUT);
        now.set(t0 + 1);
        assertThat(c.check(A)).isEqualTo(PROBE);
        assertThat(c.check(A)).isEqualTo(SOLD_OUT);
        now.set(t0 + 2);
        assertThat(c.check(A)).isEqualTo(ASK_SHARD);
    }

    @Test
    void whenFullExpiredEntriesAreDroppedToMakeRoom() {
        SoldOutCache c = cache(TTL, 2);
        long t0 = now.get();
        c.markSoldOut(A);               // expires at t0 + TTL
        now.set(t0 + 10);
        c.markSoldOut(B);               // expires at t0 + 10 + TTL
        assertThat(c.size()).isEqualTo(2);

        now.set(t0 + TTL + 5);          // A expired, B not
        c.markSoldOut(C);

        assertThat(c.size()).isEqualTo(2);
        assertThat(c.isSoldOut(C)).isTrue();
        assertThat(c.isSoldOut(B)).isTrue();
        assertThat(c.isSoldOut(A)).isFalse();
        assertThat(c.size()).isEqualTo(2);
    }

    @Test
    void whenFullAllExpiredEntriesAreDropped() {
        SoldOutCache c = cache(TTL, 3);
        c.markSoldOut(A);
        c.markSoldOut(B);
        c.markSoldOut(C);

        now.addAndGet(TTL);
        c.markSoldOut(D);

        assertThat(c.size()).isEqualTo(1);
        assertThat(c.isSoldOut(D)).isTrue();
    }

    @Test
    void whenFullAndNothingExpiredANewKeyIsNotRemembered() {
        SoldOutCache c = cache(TTL, 2);
        c.markSoldOut(A);
        c.markSoldOut(B);

        now.addAndGet(TTL - 1);
        c.markSoldOut(C);

        assertThat(c.size()).isEqualTo(2);
        assertThat(c.isSoldOut(C)).isFalse();
        assertThat(c.isSoldOut(A)).isTrue();
        assertThat(c.isSoldOut(B)).isTrue();
        assertThat(c.size()).isEqualTo(2);
    }

    @Test
    void whenFullAKeyAlreadyThereIsStillRenewed() {
        SoldOutCache c = cache(TTL, 2);
        long t0 = now.get();
        c.markSoldOut(A);
        c.markSoldOut(B);

        now.set(t0 + TTL / 2);
        c.markSoldOut(A); // full, nothing expired: A is renewed all the same

        now.set(t0 + TTL + TTL / 4);
        assertThat(c.check(A)).as("renewed at t0 + TTL/2").isEqualTo(SOLD_OUT);
        assertThat(c.check(B)).isEqualTo(PROBE);
        assertThat(c.size()).isEqualTo(2);
    }

    @Test
    void roomFreedByForgetIsReused() {
        SoldOutCache c = cache(TTL, 1);
        c.markSoldOut(A);
        c.markSoldOut(B);
        assertThat(c.isSoldOut(B)).isFalse();

        c.forget(A);
        c.markSoldOut(B);

        assertThat(c.size()).isEqualTo(1);
        assertThat(c.isSoldOut(B)).isTrue();
        assertThat(c.isSoldOut(A)).isFalse();
    }

    @Test
    void keysDifferPerTenantItemAndRegion() {
        ItemKey base = SoldOutCache.key("t1", "sku", "eu");
        assertThat(base).isEqualTo(new ItemKey("t1", "sku", "eu"));
        assertThat(SoldOutCache.key("t1", "sku", "eu")).isEqualTo(base);
        assertThat(SoldOutCache.key("t2", "sku", "eu")).isNotEqualTo(base);
        assertThat(SoldOutCache.key("t1", "sku2", "eu")).isNotEqualTo(base);
        assertThat(SoldOutCache.key("t1", "sku", "us")).isNotEqualTo(base);
        assertThat(SoldOutCache.key("t1", "sku", "")).isNotEqualTo(base);
        // the parts stay apart
        assertThat(SoldOutCache.key("ab", "c", "d")).isNotEqualTo(SoldOutCache.key("a", "bc", "d"));
        assertThat(SoldOutCache.key("a", "bc", "d")).isNotEqualTo(SoldOutCache.key("a", "b", "cd"));

        SoldOutCache c = cache(TTL, 10);
        c.markSoldOut(base);

        assertThat(c.isSoldOut(SoldOutCache.key("t1", "sku", "eu"))).isTrue();
        assertThat(c.isSoldOut(SoldOutCache.key("t2", "sku", "eu"))).isFalse();
        assertThat(c.isSoldOut(SoldOutCache.key("t1", "sku2", "eu"))).isFalse();
        assertThat(c.isSoldOut(SoldOutCache.key("t1", "sku", "us"))).isFalse();
        assertThat(c.size()).isEqualTo(1);
    }

    @Test
    void expiryIsCorrectAcrossNanoClockOverflow() {
        SoldOutCache c = cache(TTL, 2);
        long t0 = Long.MAX_VALUE - 10;
        now.set(t0);

        c.markSoldOut(A); // expiry wraps to a negative long while the clock is still positive
        assertThat(c.isSoldOut(A)).isTrue();
        now.set(Long.MAX_VALUE);
        assertThat(c.isSoldOut(A)).isTrue();

        now.set(t0 + TTL - 1); // wraps too
        assertThat(now.get()).isNegative();
        assertThat(c.isSoldOut(A)).isTrue();
        c.markSoldOut(B);
        c.markSoldOut(C); // full, nothing expired across the wrap: not remembered
        assertThat(c.isSoldOut(C)).isFalse();
        now.set(t0 + TTL);
        assertThat(c.isSoldOut(A)).isFalse();
        assertThat(c.isSoldOut(B)).isTrue();
    }

    @Test
    void constructorRefusesBadSettings() {
        assertThatThrownBy(() -> new SoldOutCache(-1, 10, now::get)).isExactlyInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SoldOutCache(TTL, 0, now::get)).isExactlyInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SoldOutCache(TTL, -5, now::get)).isExactlyInstanceOf(IllegalArgumentException.class);
        assertThat(new SoldOutCache(0, 1, now::get).size()).isZero();
    }
}
