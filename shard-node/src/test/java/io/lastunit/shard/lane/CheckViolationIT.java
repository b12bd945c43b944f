package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.common.GrpcErrors;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A CHECK violation (SQL state 23514) in a lane's batch is a bug, not a stale view: the batch
 * fails at once with INTERNAL / INVARIANT_BROKEN, is counted ({@code checkViolations}), and is
 * never decided again. Provoked by corrupting a buyer's usage row behind the lane: the release of
 * the buyer's hold then subtracts more usage than the row has, and {@code buyer_usage}'s
 * {@code qty >= 0} refuses it (the bucket update cannot reach its CHECK: its WHERE refuses a
 * counter below zero first).
 */
class CheckViolationIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static long usage(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT qty FROM buyer_usage WHERE tenant_id = 'acme' AND item_id = 'cap' AND buyer_id = 'b1'");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            long qty = rs.getLong(1);
            c.commit();
            return qty;
        }
    }

    @Test
    void aCheckViolation_failsTheBatchAsInternal_once_andIsCounted() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("cap")
                    .setTotal(10).setHomeRegion("local").setBucketCount(1).setPerBuyerLimit(5).build());
            var reserved = shard.blocking().reserve(ReserveRequest.newBuilder().setTenantId("acme").setItemId("cap")
                    .setQuantity(2).setIdempotencyKey("k1").setBuyerId("b1").setRegion("local").build());
            assertThat(reserved.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            Hold hold = reserved.getHold();
            LaneEngine engine = shard.node().engine();
            try (Connection c = shard.node().dataSource().getConnection()) {
                assertThat(usage(c)).isEqualTo(2);
                // Behind the lane: the buyer's usage loses a unit (a bug, or a hand in the database).
                try (PreparedStatement ps = c.prepareStatement("UPDATE buyer_usage SET qty = 1"
                        + " WHERE tenant_id = 'acme' AND item_id = 'cap' AND buyer_id = 'b1'")) {
                    assertThat(ps.executeUpdate()).isEqualTo(1);
                }
                c.commit();
                LaneEngine.Stats before = engine.stats();

                StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> shard.blocking()
                        .release(ReleaseRequest.newBuilder().setHoldId(hold.getHoldId()).build()));

                assertThat(e).isNotNull();
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
                assertThat(GrpcErrors.errorInfo(e).orElseThrow().getReason()).isEqualTo("INVARIANT_BROKEN");
                LaneEngine.Stats after = engine.stats();
                assertThat(after.checkViolations() - before.checkViolations()).isEqualTo(1);
                assertThat(after.redos()).as("never decided again").isEqualTo(before.redos());
                // Nothing of the batch committed: the hold is still HELD, the usage as corrupted.
                assertThat(usage(c)).isEqualTo(1);
            }
            assertThat(shard.blocking().getHold(io.lastunit.api.inventory.v1.GetHoldRequest.newBuilder()
                    .setHoldId(hold.getHoldId()).build()).getHold().getState()).isEqualTo(HoldState.HELD);
        }
    }
}
