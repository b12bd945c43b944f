package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pacing: a lane that stays busy starts its batches at least {@code batch-interval-micros}
 * apart, so what arrives meanwhile goes into one commit; a lone request after a quiet spell
 * and a batch that is full enough start at once. Real PostgreSQL, a real shard node, one lane.
 *
 * <p>Pacing is measured on the real clock ({@code Lane} reads {@link System#nanoTime()}), and its
 * interval is at most a second. So where a test needs something to happen within an interval, it
 * does not assume the host is fast enough: it measures, on its own side, a bound that proves the
 * lane saw what the test means to check (the operations queued within half an interval of the
 * previous batch's start, or answered before that batch's interval could have ended), asserts the
 * exact counts only in a try where that bound held, and starts over on a fresh item otherwise, at
 * most {@link #TRIES_MAX} times. Operations are offered to the engine directly, so "queued" is
 * when {@code reserve} returns, not when a gRPC frame happens to arrive. A lone request after a
 * quiet spell needs real time to have passed, which a sleep guarantees (it never returns early).
 */
class LanePacingIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "acme";
    /** The lane's batch interval: the longest {@code batch-interval-micros} allows. */
    private static final Duration INTERVAL = Duration.ofSeconds(1);
    /** Longer than {@link #INTERVAL}: after this, the lane is idle and its next batch starts at once. */
    private static final Duration QUIET = INTERVAL.plusMillis(100);
    /** Tries of a timed scenario, each on a fresh item, before the test gives up on the host. */
    private static final int TRIES_MAX = 5;

    private static ReserveRequest reserve(String item, String key) {
        return ReserveRequest.newBuilder().setTenantId(TENANT).setItemId(item).setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("buyer-" + key).setRegion("local").build();
    }

    private static ShardNodeHarness shard(int paceBelow) {
        return new ShardNodeHarness(PG, Map.of("lastunit.shard.lanes", 1,
                "lastunit.shard.batch-interval-micros", INTERVAL.toNanos() / 1_000, "lastunit.shard.pace-below",
                paceBelow));
    }

    private static void allReserved(List<? extends Future<ReserveResponse>> calls) throws Exception {
        for (Future<ReserveResponse> c : calls) {
            assertThat(c.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)
                    .getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        }
    }

    /** {available, held} of the item's bucket 0, read from the database. */
    private static long[] bucket(ShardNodeHarness shard, String item) throws Exception {
        try (Connection c = shard.node().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT available, held FROM buckets WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0")) {
            ps.setString(1, TENANT);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long[] row = {rs.getLong(1), rs.getLong(2)};
                c.rollback();
                return row;
            }
        }
    }

    /** Waits (scaled bound) until the engine's counters satisfy {@code condition}; returns them. */
    private static LaneEngine.Stats awaitStats(LaneEngine engine, Predicate<LaneEngine.Stats> condition, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
        while (true) {
            LaneEngine.Stats s = engine.stats();
            if (condition.test(s)) {
                return s;
            }
            assertThat(System.nanoTime() - deadline).as("waited for %s; counters %s", what, s).isNegative();
            Thread.sleep(1);
        }
    }

    private static String gaveUp(List<String> tries) {
        return "no try of " + TRIES_MAX + " ran fast enough to tell (the interval is at most " + INTERVAL.toMillis()
                + " ms): " + tries;
    }

    @Test
    void whatArrivesWithinTheInterval_isCommittedAsOneBatch_andALoneRequestIsNotHeld() throws Exception {
        try (ShardNodeHarness shard = shard(1_000).start()) {
            LaneEngine engine = shard.node().engine();
            List<String> tries = new ArrayList<>();
            for (int attempt = 1; ; attempt++) {
                assertThat(attempt).as(gaveUp(tries)).isLessThanOrEqualTo(TRIES_MAX);
                String item = "paced-" + attempt;
                shard.createItem(TENANT, item, 100);
                // The lane has been idle for longer than the interval: this batch starts at once.
                Thread.sleep(QUIET.toMillis());
                long beforeFirst = System.nanoTime(); // the lane starts the next batch after this
                LaneEngine.Stats start = engine.stats();
                assertThat(shard.blocking().reserve(reserve(item, item + "-first")).getOutcome())
                        .isEqualTo(ReserveOutcome.RESERVED);
                LaneEngine.Stats afterFirst = engine.stats();
                assertThat(afterFirst.paced() - start.paced()).isZero();
                assertThat(afterFirst.batches() - start.batches()).isEqualTo(1);

                // Twenty Reserves, 5 ms apart: about 100 ms. Unpaced, the lane would commit them in
                // many small batches as they come.
                List<Future<ReserveResponse>> calls = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    calls.add(engine.reserve(reserve(item, item + "-spaced-" + i)));
                    Thread.sleep(5);
                }
                long queuedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - beforeFirst);
                allReserved(calls);
                LaneEngine.Stats after = engine.stats();
                assertThat(after.opsApplied() - afterFirst.opsApplied()).isEqualTo(20);
                assertThat(bucket(shard, item)).containsExactly(79, 21);
                if (queuedMs * 2 > INTERVAL.toMillis()) {
                    // Not all queued within half the interval since the first batch began: the lane's
                    // wait may have ended before the last came, so the batch count tells nothing.
                    tries.add("try " + attempt + ": queued " + queuedMs + " ms after the first was sent");
                    continue;
                }
                assertThat(after.batches() - afterFirst.batches()).as("batches (queued in %d ms)", queuedMs)
                        .isEqualTo(1);
                assertThat(after.paced() - afterFirst.paced()).as("paced batches").isEqualTo(1);
                System.out.printf("LanePacingIT: one batch of 20 on try %d (queued in %d ms); set aside: %s%n",
                        attempt, queuedMs, tries);
                return;
            }
        }
    }

    @Test
    void aBatchFullEnough_startsWithoutWaiting() throws Exception {
        // pace-below 1: the one operation in hand is already enough, so no batch ever waits,
        // however long the interval.
        try (ShardNodeHarness shard = shard(1).start()) {
            shard.createItem(TENANT, "full", 1_000);
            LaneEngine.Stats before = shard.node().engine().stats();
            List<Future<ReserveResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                calls.add(shard.async().reserve(reserve("full", "burst-" + i)));
                if (i % 20 == 0) {
                    Thread.sleep(2);
                }
            }
            allReserved(calls);
            LaneEngine.Stats after = shard.node().engine().stats();
            assertThat(after.opsApplied() - before.opsApplied()).isEqualTo(200);
            assertThat(after.paced() - before.paced()).isZero();
            assertThat(bucket(shard, "full")).containsExactly(800, 200);
        }
    }

    @Test
    void aWaitingLane_startsAsSoonAsPaceBelowOperationsAreQueued() throws Exception {
        // An interval of a second and pace-below 10. Right after "first" the lane waits with one
        // Reserve in hand; nine more end that wait. Waited out, the ten could not be answered before
        // the second since "first" began is over; so ten answered sooner prove the wake-up.
        try (ShardNodeHarness shard = shard(10).start()) {
            LaneEngine engine = shard.node().engine();
            List<String> tries = new ArrayList<>();
            for (int attempt = 1; ; attempt++) {
                assertThat(attempt).as(gaveUp(tries)).isLessThanOrEqualTo(TRIES_MAX);
                String item = "flood-" + attempt;
                shard.createItem(TENANT, item, 100);
                Thread.sleep(QUIET.toMillis()); // idle: "first" starts at once, and its start is what the lane waits from
                long beforeFirst = System.nanoTime();
                assertThat(shard.blocking().reserve(reserve(item, item + "-first")).getOutcome())
                        .isEqualTo(ReserveOutcome.RESERVED);
                LaneEngine.Stats before = engine.stats();
                List<Future<ReserveResponse>> calls = new ArrayList<>();
                // One Reserve alone: the lane takes it and waits, a second not being over since "first".
                calls.add(engine.reserve(reserve(item, item + "-0")));
                LaneEngine.Stats seen = awaitStats(engine, s -> s.paced() > before.paced()
                        || s.batches() > before.batches(), "the lane to take the lone Reserve");
                boolean waiting = seen.paced() > before.paced();
                for (int i = 1; i < 10; i++) {
                    calls.add(engine.reserve(reserve(item, item + "-" + i)));
                }
                allReserved(calls);
                long answeredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - beforeFirst);
                LaneEngine.Stats after = engine.stats();
                assertThat(after.opsApplied() - before.opsApplied()).isEqualTo(10);
                assertThat(bucket(shard, item)).containsExactly(89, 11);
                if (!waiting || answeredMs >= INTERVAL.toMillis()) {
                    // Either the lane came for the lone Reserve only after the interval (so it did not
                    // wait), or the ten were answered no sooner than a wait run out would answer them.
                    tries.add("try " + attempt + ": " + (waiting ? "answered " + answeredMs
                            + " ms after the first was sent" : "the lone Reserve was not held"));
                    continue;
                }
                assertThat(after.batches() - before.batches()).as("batches (answered in %d ms)", answeredMs)
                        .isEqualTo(1);
                assertThat(after.paced() - before.paced()).as("paced batches").isEqualTo(1);
                System.out.printf("LanePacingIT: woken at pace-below on try %d (answered in %d ms); set aside: %s%n",
                        attempt, answeredMs, tries);
                return;
            }
        }
    }
}
