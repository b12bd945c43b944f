package io.lastunit.shard.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.GrpcErrors;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The bounds of docs/durability.md "Bounded waits" on a real shard node and PostgreSQL: each
 * named setting reaches the sessions it is meant for, and a write that waits on a lock another
 * session holds ends as UNAVAILABLE with nothing written, then succeeds by the same key.
 */
class DbTimeoutsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static String show(DataSource ds, String setting) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW " + setting)) {
            rs.next();
            String v = rs.getString(1);
            c.rollback();
            return v;
        }
    }

    @Test
    void theTimeouts_reachTheirSessions_andNoWriteSessionHasAStatementTimeout() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of(
                "lastunit.shard.jdbc-lock-timeout-ms", 1_500,
                "lastunit.shard.jdbc-idle-in-transaction-timeout-ms", 45_000,
                "lastunit.shard.jdbc-read-statement-timeout-ms", 7_000)).start()) {
            DataSource writes = shard.node().dataSource();
            assertThat(show(writes, "lock_timeout")).isEqualTo("1500ms");
            assertThat(show(writes, "idle_in_transaction_session_timeout")).isEqualTo("45s");
            assertThat(show(writes, "statement_timeout")).as("a cancelled commit would look committed").isEqualTo("0");
            assertThat(show(writes, "transaction_read_only")).isEqualTo("off");
            DataSource reads = shard.node().readDataSource();
            assertThat(show(reads, "statement_timeout")).isEqualTo("7s");
            assertThat(show(reads, "lock_timeout")).isEqualTo("1500ms");
            assertThat(show(reads, "transaction_read_only")).isEqualTo("on");
        }
    }

    @Test
    void aWriteBehindALockAnotherSessionHolds_answersUnavailable_writesNothing_andTheSameKeySucceedsAfter()
            throws Exception {
        // Borrows and collapses wait 100 ms; the batch's own bucket update waits lock_timeout.
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of(
                "lastunit.shard.jdbc-lock-timeout-ms", 300)).start()) {
            shard.createItem("acme", "locked", 5);
            ReserveRequest r = ReserveRequest.newBuilder().setTenantId("acme").setItemId("locked").setQuantity(1)
                    .setIdempotencyKey("k-1").setBuyerId("b-1").setRegion("local").build();
            try (Connection other = DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password())) {
                other.setAutoCommit(false);
                try (PreparedStatement lock = other.prepareStatement("SELECT available FROM buckets"
                        + " WHERE tenant_id = 'acme' AND item_id = 'locked' FOR UPDATE")) {
                    lock.executeQuery().close();
                }
                StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> shard.blocking()
                        .withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)
                        .reserve(r));
                assertThat(e).as("the lock wait ends before the deadline, on the server").isNotNull();
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(GrpcErrors.errorInfo(e).map(ErrorInfo::getReason)).hasValue("STORE_UNAVAILABLE");
                other.rollback();
            }
            try (Connection c = DriverManager.getConnection(PG.jdbcUrl(), PG.user(), PG.password());
                 ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM holds WHERE idempotency_key = 'k-1'")) {
                rs.next();
                assertThat(rs.getInt(1)).as("nothing of the refused batch was written").isZero();
            }
            ReserveResponse again = shard.blocking().reserve(r);
            assertThat(again.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(shard.blocking().reserve(r).getHold().getHoldId()).isEqualTo(again.getHold().getHoldId());
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        }
    }
}
