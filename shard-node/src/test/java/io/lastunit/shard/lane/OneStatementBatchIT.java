package io.lastunit.shard.lane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A batch of new holds alone is written as one statement that commits itself: the holds, their
 * outbox rows and the conditional bucket update, or nothing. When the database refuses it (a key
 * already used for the item, counters the lane had wrong), nothing of it may stay, and the lane
 * must reach the same answer the separate statements reach. Real PostgreSQL, a real shard node
 * over gRPC; the lane's view is made wrong by writing to the database behind its back.
 */
class OneStatementBatchIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "acme";

    private static ReserveRequest reserve(String item, String key, int quantity) {
        return ReserveRequest.newBuilder().setTenantId(TENANT).setItemId(item).setQuantity(quantity)
                .setIdempotencyKey(key).setBuyerId("buyer-" + key).setRegion("local").build();
    }

    private static LaneEngine.Stats stats(ShardNodeHarness shard) {
        return shard.node().engine().stats();
    }

    /** {allotment, available, held, sold} of the item's bucket 0. */
    private static long[] bucket(DataSource ds, String item) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT allotment, available, held, sold FROM buckets"
                     + " WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0")) {
            ps.setString(1, TENANT);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long[] row = {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4)};
                c.rollback();
                return row;
            }
        }
    }

    private static long count(DataSource ds, String sql, String... args) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setString(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long n = rs.getLong(1);
                c.rollback();
                return n;
            }
        }
    }

    private static long holdsWithKey(DataSource ds, String key) throws SQLException {
        return count(ds, "SELECT count(*) FROM holds WHERE tenant_id = ? AND idempotency_key = ?", TENANT, key);
    }

    private static long outboxRows(DataSource ds, String item) throws SQLException {
        return count(ds, "SELECT count(*) FROM outbox WHERE tenant_id = ? AND item_id = ? AND kind = 'HELD'", TENANT, item);
    }

    @Test
    void newHoldsAlone_commitInOneStatement_andTheCountsAreExact() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.createItem(TENANT, "hot", 100);
            // The first Reserve loads the bucket (a read), so its batch writes statement by statement.
            assertThat(shard.blocking().reserve(reserve("hot", "first", 1)).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
            LaneEngine.Stats before = stats(shard);
            for (int i = 0; i < 9; i++) { // one at a time: one batch each, every one a single statement
                assertThat(shard.blocking().reserve(reserve("hot", "one-" + i, 1)).getOutcome())
                        .isEqualTo(ReserveOutcome.RESERVED);
            }
            LaneEngine.Stats after = stats(shard);
            assertThat(after.transactions() - before.transactions()).isEqualTo(9);
            assertThat(after.oneStatementBatches() - before.oneStatementBatches()).isEqualTo(9);
            // each of the nine waited for its commit (a round trip and a WAL flush): time is counted for each
            assertThat(after.writeNanos() - before.writeNanos()).isGreaterThanOrEqualTo(9 * 1_000L);

            List<ListenableFuture<ReserveResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                calls.add(shard.async().reserve(reserve("hot", "many-" + i, 1)));
            }
            int reserved = 0;
            int soldOut = 0;
            for (ListenableFuture<ReserveResponse> c : calls) {
                ReserveOutcome o = c.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)
                        .getOutcome();
                if (o == ReserveOutcome.RESERVED) {
                    reserved++;
                } else if (o == ReserveOutcome.SOLD_OUT) {
                    soldOut++;
                }
            }
            assertThat(reserved).isEqualTo(90);
            assertThat(soldOut).isEqualTo(1_910);
            DataSource ds = shard.node().dataSource();
            assertThat(bucket(ds, "hot")).containsExactly(100, 0, 100, 0);
            assertThat(count(ds, "SELECT count(*) FROM holds WHERE tenant_id = ? AND item_id = ? AND state = 'HELD'",
                    TENANT, "hot")).isEqualTo(100);
            assertThat(outboxRows(ds, "hot")).isEqualTo(100);
            assertThat(stats(shard).oneStatementBatches()).isGreaterThan(after.oneStatementBatches());
            assertThat(stats(shard).oneStatementRefusals()).isZero();
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    @Test
    void aKeyWrittenBehindTheLane_isRefused_nothingIsWritten_andTheAnswerIsKeyReused() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.createItem(TENANT, "socks", 10);
            assertThat(shard.blocking().reserve(reserve("socks", "warm-socks", 1)).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED); // the bucket is loaded and cached
            DataSource ds = shard.node().dataSource();
            // Another writer uses the key for the item behind the lane's back (a released hold, so
            // that the bucket's counters stay what they are).
            try (Connection c = ds.getConnection();
                 PreparedStatement ps = c.prepareStatement("INSERT INTO holds (hold_id, tenant_id, item_id,"
                         + " bucket_no, region, qty, buyer_id, idempotency_key, request_fingerprint, state,"
                         + " created_at, expires_at, ended_at) VALUES (gen_random_uuid(), ?, 'socks', 0, 'local', 1,"
                         + " 'someone', 'shared', 'another-request', 'RELEASED', now(), now(), now())")) {
                ps.setString(1, TENANT);
                assertThat(ps.executeUpdate()).isEqualTo(1);
                c.commit();
            }
            long[] socksBefore = bucket(ds, "socks");
            long outboxBefore = outboxRows(ds, "socks");
            LaneEngine.Stats before = stats(shard);

            // The socks bucket has never seen the key: the lane places it, and the database says no.
            StatusRuntimeException e = catchThrowableOfType(
                    () -> shard.blocking().reserve(reserve("socks", "shared", 1)), StatusRuntimeException.class);
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
            assertThat(GrpcErrors.errorInfo(e).orElseThrow().getReason()).isEqualTo(Reason.IDEMPOTENCY_KEY_REUSED.name());

            LaneEngine.Stats after = stats(shard);
            assertThat(after.oneStatementRefusals() - before.oneStatementRefusals()).isEqualTo(1);
            assertThat(bucket(ds, "socks")).containsExactly(socksBefore);
            assertThat(outboxRows(ds, "socks")).isEqualTo(outboxBefore);
            assertThat(holdsWithKey(ds, "shared")).isEqualTo(1);
            // and the lane goes on in one statement afterwards
            assertThat(shard.blocking().reserve(reserve("socks", "after", 1)).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
            assertThat(stats(shard).oneStatementBatches() - after.oneStatementBatches()).isEqualTo(1);
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    @Test
    void countersChangedBehindTheLane_areRefused_nothingIsWritten_andTheLaneReloads() throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of()).start()) {
            shard.createItem(TENANT, "last", 10);
            assertThat(shard.blocking().reserve(reserve("last", "warm", 1)).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
            DataSource ds = shard.node().dataSource();
            assertThat(bucket(ds, "last")).containsExactly(10, 9, 1, 0);
            // Another writer takes 5 of the 9 units the lane has cached (kept balanced for the CHECK).
            try (Connection c = ds.getConnection();
                 PreparedStatement ps = c.prepareStatement("UPDATE buckets SET available = available - 5,"
                         + " sold = sold + 5 WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0")) {
                ps.setString(1, TENANT);
                ps.setString(2, "last");
                assertThat(ps.executeUpdate()).isEqualTo(1);
                c.commit();
            }
            long outboxBefore = outboxRows(ds, "last");
            LaneEngine.Stats before = stats(shard);

            // The lane still counts 9: it accepts 6 units, and the bucket's condition refuses them.
            assertThat(shard.blocking().reserve(reserve("last", "too-many", 6)).getOutcome())
                    .isEqualTo(ReserveOutcome.SOLD_OUT);
            LaneEngine.Stats after = stats(shard);
            assertThat(after.oneStatementRefusals() - before.oneStatementRefusals()).isEqualTo(1);
            assertThat(after.redos() - before.redos()).as("the statement-by-statement attempt finds the stale bucket")
                    .isEqualTo(1);
            assertThat(bucket(ds, "last")).containsExactly(10, 4, 1, 5);
            assertThat(holdsWithKey(ds, "too-many")).isZero();
            assertThat(outboxRows(ds, "last")).isEqualTo(outboxBefore);

            // Reloaded: the 4 that are there sell, in one statement, and not one more.
            assertThat(shard.blocking().reserve(reserve("last", "four", 4)).getOutcome())
                    .isEqualTo(ReserveOutcome.RESERVED);
            assertThat(shard.blocking().reserve(reserve("last", "one-more", 1)).getOutcome())
                    .isEqualTo(ReserveOutcome.SOLD_OUT);
            assertThat(bucket(ds, "last")).containsExactly(10, 0, 5, 5);
            assertThat(stats(shard).oneStatementBatches() - after.oneStatementBatches()).isEqualTo(1);
        }
    }
}
