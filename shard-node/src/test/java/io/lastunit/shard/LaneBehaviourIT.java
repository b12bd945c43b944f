package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.GrpcErrors;
import io.lastunit.testkit.ManualClock;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the lanes promise beyond exact counts: cheap SOLD_OUT, bounded queues, idempotency first, sweep first. */
class LaneBehaviourIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final Duration HOLD_TTL = Duration.ofMinutes(10);

    private static ReserveRequest reserve(String item, String key) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId(item).setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("buyer-" + key).setRegion("local").build();
    }

    private static Stock stock(ShardNodeHarness shard, String item) {
        return shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId(item).build())
                .getStock();
    }

    @Test
    void soldOut_isDecidedInMemory_withNoDatabaseTransaction() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.createItem("acme", "gone", 10);
            for (int i = 0; i < 10; i++) {
                assertThat(shard.blocking().reserve(reserve("gone", "k" + i)).getOutcome())
                        .isEqualTo(ReserveOutcome.RESERVED);
            }
            long transactionsBefore = shard.node().engine().stats().transactions();
            long writeNanosBefore = shard.node().engine().stats().writeNanos();
            List<ListenableFuture<ReserveResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                calls.add(shard.async().reserve(reserve("gone", "late-" + i)));
            }
            for (ListenableFuture<ReserveResponse> c : calls) {
                assertThat(c.get(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS).getOutcome())
                        .isEqualTo(ReserveOutcome.SOLD_OUT);
            }
            assertThat(shard.node().engine().stats().transactions()).isEqualTo(transactionsBefore);
            assertThat(shard.node().engine().stats().writeNanos()).isEqualTo(writeNanosBefore); // no commit, no write time
        }
    }

    @Test
    void retriedKey_afterSellOut_andAfterRestart_returnsItsHold_notSoldOut() throws Exception {
        String holdId;
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.createItem("acme", "last-one", 1);
            ReserveResponse first = shard.blocking().reserve(reserve("last-one", "mine"));
            assertThat(first.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            holdId = first.getHold().getHoldId();
            assertThat(shard.blocking().reserve(reserve("last-one", "theirs")).getOutcome())
                    .isEqualTo(ReserveOutcome.SOLD_OUT);
            ReserveResponse retry = shard.blocking().reserve(reserve("last-one", "mine"));
            assertThat(retry.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(retry.getHold().getHoldId()).isEqualTo(holdId);
        }
        try (ShardNodeHarness restarted = new ShardNodeHarness(PG, Map.of()).start()) {
            ReserveResponse retry = restarted.blocking().reserve(reserve("last-one", "mine"));
            assertThat(retry.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(retry.getHold().getHoldId()).isEqualTo(holdId);
            assertThat(restarted.blocking().reserve(reserve("last-one", "theirs")).getOutcome())
                    .isEqualTo(ReserveOutcome.SOLD_OUT);
            assertThat(stock(restarted, "last-one").getHeld()).isEqualTo(1);
        }
    }

    @Test
    void expiredHolds_areSweptByTheLane_beforeItAnswersSoldOut() throws Exception {
        // The background sweeper is slowed to an hour: only the lane's own sweep can free the units.
        // No real time has to pass, so the host's speed cannot decide the outcome: the holds live ten
        // minutes; the database is made the judge of their expiry by moving expires_at into the past;
        // and the lanes run on the test's clock, which it moves past the earliest expiry the lane
        // cached for the bucket, so that the lane's estimate of the database clock says "due".
        ManualClock clock = new ManualClock();
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of(
                "lastunit.shard.sweep-interval-ms", 3_600_000)).withClock(clock).start()) {
            shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("brief")
                    .setTotal(5).setHomeRegion("local").setHoldTtlMs(HOLD_TTL.toMillis()).build());
            for (int i = 0; i < 5; i++) {
                assertThat(shard.blocking().reserve(reserve("brief", "a" + i)).getOutcome())
                        .isEqualTo(ReserveOutcome.RESERVED);
            }
            assertThat(shard.blocking().reserve(reserve("brief", "b0")).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
            assertThat(expireInTheDatabase(shard, "brief")).as("held holds moved into the past").isEqualTo(5);
            // The lane's estimate moves with this clock only: an hour past the TTL covers however long
            // the reserves above took in real time.
            clock.advance(HOLD_TTL.plus(Duration.ofHours(1)));
            for (int i = 1; i <= 5; i++) {
                assertThat(shard.blocking().reserve(reserve("brief", "b" + i)).getOutcome())
                        .isEqualTo(ReserveOutcome.RESERVED);
            }
            Stock s = stock(shard, "brief");
            assertThat(s.getHeld()).isEqualTo(5);
            assertThat(s.getAvailable()).isZero();
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    /** Every HELD hold of the item expired a second ago by the database clock; returns how many were moved. */
    private static int expireInTheDatabase(ShardNodeHarness shard, String item) throws SQLException {
        try (Connection c = shard.node().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE holds SET expires_at = now() - interval '1 second'"
                     + " WHERE tenant_id = 'acme' AND item_id = ? AND state = 'HELD'")) {
            ps.setString(1, item);
            int moved = ps.executeUpdate();
            c.commit();
            return moved;
        }
    }

    @Test
    void fullQueue_answersResourceExhaustedAtOnce_andLosesNothing() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of(
                "lastunit.shard.lanes", 1,
                "lastunit.shard.queue-capacity", 4,
                "lastunit.shard.batch-max", 2)).start()) {
            shard.createItem("acme", "narrow", 1_000);
            List<ReserveRequest> requests = new ArrayList<>();
            List<ListenableFuture<ReserveResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                ReserveRequest r = reserve("narrow", "n" + i);
                requests.add(r);
                calls.add(shard.async().reserve(r));
            }
            int reserved = 0;
            List<ReserveRequest> refused = new ArrayList<>();
            for (int i = 0; i < calls.size(); i++) {
                try {
                    ReserveResponse r = calls.get(i).get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(),
                            TimeUnit.MILLISECONDS);
                    if (r.getOutcome() == ReserveOutcome.RESERVED) {
                        reserved++;
                    }
                } catch (ExecutionException e) {
                    StatusRuntimeException sre = (StatusRuntimeException) e.getCause();
                    assertThat(sre.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    assertThat(GrpcErrors.errorInfo(sre).orElseThrow().getReason()).isEqualTo("QUEUE_FULL");
                    assertThat(StatusProto.fromThrowable(sre).getDetailsList())
                            .anySatisfy(d -> assertThat(d.is(RetryInfo.class)).isTrue());
                    refused.add(requests.get(i));
                }
            }
            assertThat(refused).as("a queue of 4 refuses some of 2,000 concurrent calls").isNotEmpty();
            assertThat(stock(shard, "narrow").getHeld()).isEqualTo(reserved);

            // Refused calls changed nothing: retried with the same keys, the sale completes exactly.
            for (ReserveRequest r : refused) {
                for (int attempt = 0; ; attempt++) {
                    try {
                        if (shard.blocking().reserve(r).getOutcome() == ReserveOutcome.RESERVED) {
                            reserved++;
                        }
                        break;
                    } catch (StatusRuntimeException e) {
                        assertThat(attempt).isLessThan(100);
                        Thread.sleep(5);
                    }
                }
            }
            assertThat(reserved).isEqualTo(1_000);
            Stock s = stock(shard, "narrow");
            assertThat(s.getHeld()).isEqualTo(1_000);
            assertThat(s.getAvailable()).isZero();
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        }
    }
}
