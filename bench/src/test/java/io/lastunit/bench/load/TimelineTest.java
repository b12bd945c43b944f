package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class TimelineTest {
    private static final long MS = 1_000_000L;

    @Test
    void eachWindowKeepsItsOwnPercentiles() {
        Timeline t = new Timeline(0);
        for (int i = 1; i <= 100; i++) {
            t.record(i * 10L); // 10 µs .. 1 ms
        }
        t.cut(1_000 * MS);
        t.record(50_000); // 50 ms: one slow Reserve alone in the second window
        t.cut(2_004 * MS);
        t.close(2_500 * MS); // the last window is half a second, and empty

        List<Timeline.Second> s = t.seconds();
        assertThat(s).hasSize(3);
        assertThat(s.get(0).index()).isZero();
        assertThat(s.get(0).millis()).isEqualTo(1_000);
        assertThat(s.get(0).latency().count()).isEqualTo(100);
        assertThat(s.get(0).latency().p99()).isEqualTo(0.99);
        assertThat(s.get(0).latency().max()).isEqualTo(1.0);
        assertThat(s.get(1).index()).isEqualTo(1);
        assertThat(s.get(1).millis()).isEqualTo(1_004);
        assertThat(s.get(1).latency().count()).isEqualTo(1);
        assertThat(s.get(1).latency().p99()).isCloseTo(50.0, within(0.1)); // HdrHistogram: 3 digits
        assertThat(s.get(2).millis()).isEqualTo(496);
        assertThat(s.get(2).latency().count()).isZero();
        assertThat(t.dropped()).isZero();
    }

    @Test
    void afterCloseATimersLateCutChangesNothing() {
        Timeline t = new Timeline(0);
        t.record(100);
        t.close(300 * MS);
        t.record(200); // a reply after the end is not in any window
        t.cut(1_000 * MS);
        assertThat(t.seconds()).hasSize(1);
        assertThat(t.seconds().get(0).latency().count()).isEqualTo(1);
    }

    @Test
    void slowSecondsAndTheSlowestOnes() {
        List<Timeline.Second> s = List.of(second(0, 100, 2.0), second(1, 100, 12.0), second(2, 0, 0),
                second(3, 100, 40.0), second(4, 100, 12.0), second(5, 100, 10.0));
        assertThat(Timeline.over(s, 10.0)).isEqualTo(3); // 12, 40, 12; 10.0 is not over 10
        assertThat(Timeline.slowest(s, 3)).extracting(Timeline.Second::index).containsExactly(3, 1, 4);
        assertThat(Timeline.slowest(s, 10)).hasSize(5); // the empty window is never listed
        assertThat(Timeline.slowest(List.of(), 5)).isEmpty();
    }

    @Test
    void keepsAnHourOfWindowsAndCountsTheRest() {
        Timeline t = new Timeline(0);
        for (int i = 1; i <= Timeline.SECONDS_MAX + 5; i++) {
            t.record(i);
            t.cut(i * 1_000 * MS);
        }
        assertThat(t.seconds()).hasSize(Timeline.SECONDS_MAX);
        assertThat(t.seconds().get(Timeline.SECONDS_MAX - 1).index()).isEqualTo(Timeline.SECONDS_MAX - 1);
        assertThat(t.dropped()).isEqualTo(5);
    }

    @Test
    void everyRecordLandsInExactlyOneWindowWhileATimerCuts() throws Exception {
        Timeline t = new Timeline(System.nanoTime());
        int threads = 4;
        int perThread = 50_000;
        CountDownLatch go = new CountDownLatch(1);
        // Each writer stops halfway until the cutter has cut once after all of them got there, so a
        // cut falls between records whatever the threads' speeds; the cutter's other cuts land wherever
        // the host schedules them.
        CountDownLatch halfway = new CountDownLatch(threads);
        CountDownLatch cutHalfway = new CountDownLatch(1);
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                    for (int i = 0; i < perThread; i++) {
                        if (i == perThread / 2) {
                            halfway.countDown();
                            cutHalfway.await();
                        }
                        t.record(1 + i % 1_000);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            th.start();
            writers.add(th);
        }
        AtomicBoolean stop = new AtomicBoolean();
        Thread cutter = new Thread(() -> {
            // One window is kept for the cut halfway, so the cuts never pass SECONDS_MAX windows.
            for (int cuts = 0; !stop.get(); ) {
                if (cutHalfway.getCount() > 0 && halfway.getCount() == 0) {
                    t.cut(System.nanoTime());
                    cutHalfway.countDown();
                } else if (cuts < Timeline.SECONDS_MAX - 2) {
                    t.cut(System.nanoTime());
                    cuts++;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
            }
        });
        cutter.start();
        go.countDown();
        for (Thread th : writers) {
            th.join();
        }
        stop.set(true);
        cutter.join();
        t.close(System.nanoTime());
        long total = 0;
        long windowsWithRecords = 0;
        for (Timeline.Second s : t.seconds()) {
            total += s.latency().count();
            windowsWithRecords += s.latency().count() > 0 ? 1 : 0;
        }
        assertThat(t.dropped()).isZero();
        assertThat(windowsWithRecords).as("windows cut while the writers ran").isGreaterThan(1);
        assertThat(total).isEqualTo((long) threads * perThread);
    }

    private static Timeline.Second second(int index, long count, double p99) {
        return new Timeline.Second(index, 1_000, new LatencySummary(count, p99 / 2, p99, p99, p99, p99, p99 / 2));
    }
}
