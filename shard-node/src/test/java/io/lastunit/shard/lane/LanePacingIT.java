package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pacing: a lane that stays busy starts its batches at least {@code batch-interval-micros}
 * apart, so what arrives meanwhile goes into one commit; a lone request after a quiet spell
 * and a batch that is full enough start at once. Real PostgreSQL, a real shard node over gRPC,
 * one lane; the interval is made long (a second) so that the schedule of the test, not the
 * speed of the machine, decides which batch a request joins.
 */
class LanePacingIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "acme";

    private static ReserveRequest reserve(String item, String key) {
        return ReserveRequest.newBuilder().setTenantId(TENANT).setItemId(item).setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("buyer-" + key).setRegion("local").build();
    }

    private static ShardNodeHarness shard(long intervalMicros, int paceBelow) {
        return new ShardNodeHarness(PG, Map.of("lastunit.shard.lanes", 1,
                "lastunit.shard.batch-interval-micros", intervalMicros, "lastunit.shard.pace-below", paceBelow));
    }

    private static void allReserved(List<ListenableFuture<ReserveResponse>> calls) throws Exception {
        for (ListenableFuture<ReserveResponse> c : calls) {
            assertThat(c.get(60, TimeUnit.SECONDS).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
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

    @Test
    void whatArrivesWithinTheInterval_isCommittedAsOneBatch_andALoneRequestIsNotHeld() throws Exception {
        try (ShardNodeHarness shard = shard(1_000_000, 1_000).start()) {
            shard.createItem(TENANT, "paced", 100);
            // The lane has been idle for longer than the interval: this batch starts at once.
            Thread.sleep(1_100);
            LaneEngine.Stats start = shard.node().engine().stats();
            assertThat(shard.blocking().reserve(reserve("paced", "paced-first")).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
            LaneEngine.Stats afterFirst = shard.node().engine().stats();
            assertThat(afterFirst.paced() - start.paced()).isZero();
            assertThat(afterFirst.batches() - start.batches()).isEqualTo(1);

            // Twenty Reserves, 5 ms apart: about 100 ms, well inside the second since "first" started.
            // Unpaced, the lane would commit them in many small batches as they come.
            List<ListenableFuture<ReserveResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                calls.add(shard.async().reserve(reserve("paced", "spaced-" + i)));
                Thread.sleep(5);
            }
            allReserved(calls);
            LaneEngine.Stats after = shard.node().engine().stats();
            assertThat(after.batches() - afterFirst.batches()).isEqualTo(1);
            assertThat(after.opsApplied() - afterFirst.opsApplied()).isEqualTo(20);
            assertThat(after.paced() - afterFirst.paced()).isEqualTo(1);
            assertThat(bucket(shard, "paced")).containsExactly(79, 21);
        }
    }

    @Test
    void aBatchFullEnough_startsWithoutWaiting() throws Exception {
        // pace-below 1: the one operation in hand is already enough, so no batch ever waits,
        // however long the interval.
        try (ShardNodeHarness shard = shard(1_000_000, 1).start()) {
            shard.createItem(TENANT, "full", 1_000);
            LaneEngine.Stats before = shard.node().engine().stats();
            List<ListenableFuture<ReserveResponse>> calls = new ArrayList<>();
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
        // Reserve in hand; nine more end that wait, so all ten are answered long before the
        // second is out (waited out, they would take about 950 ms from the nine being sent).
        try (ShardNodeHarness shard = shard(1_000_000, 10).start()) {
            shard.createItem(TENANT, "flood", 100);
            assertThat(shard.blocking().reserve(reserve("flood", "flood-first")).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
            LaneEngine.Stats before = shard.node().engine().stats();
            List<ListenableFuture<ReserveResponse>> calls = new ArrayList<>();
            // One Reserve alone: the lane takes it and waits, a second not being over since "first".
            calls.add(shard.async().reserve(reserve("flood", "flood-0")));
            Thread.sleep(50);
            long sent = System.nanoTime();
            for (int i = 1; i < 10; i++) {
                calls.add(shard.async().reserve(reserve("flood", "flood-" + i)));
            }
            allReserved(calls);
            long answeredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            LaneEngine.Stats after = shard.node().engine().stats();
            assertThat(after.batches() - before.batches()).isEqualTo(1);
            assertThat(after.opsApplied() - before.opsApplied()).isEqualTo(10);
            assertThat(after.paced() - before.paced()).isEqualTo(1);
            // Not a speed figure: the difference between a wake-up and a wait of the whole second.
            assertThat(answeredMs).isLessThan(600);
            assertThat(bucket(shard, "flood")).containsExactly(89, 11);
        }
    }
}
