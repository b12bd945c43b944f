package io.lastunit.shard.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;

import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One shard node per shard database, on a real PostgreSQL: the lock a node takes before its
 * migrations, what a second one is told, and the lock's end with its session.
 */
class DatabaseOwnerIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static DatabaseOwner acquire(String url, String name, Duration wait) throws Exception {
        return DatabaseOwner.acquire(url, PG.user(), PG.password(), name, wait);
    }

    @Test
    void aSecondOwner_waitsItsBound_thenIsRefused_namingTheHolder_andTakesItOnceTheFirstLetsGo() throws Exception {
        String url = PG.newDatabase("owned");
        try (DatabaseOwner first = acquire(url, "first-node", Duration.ofMillis(100))) {
            assertThat(first.held()).isTrue();
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> acquire(url, "second-node", Duration.ofMillis(300)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("another shard node owns this database")
                    .hasMessageContaining("application 'first-node'")
                    .hasMessageContaining("waited 300 ms");
            assertThat(System.nanoTime() - t0).as("it waited its bound").isGreaterThanOrEqualTo(300_000_000L);
        }
        try (DatabaseOwner second = acquire(url, "second-node", Duration.ofMillis(100))) {
            assertThat(second.held()).isTrue();
        }
    }

    @Test
    void theLock_endsWithItsSession_soANodeWhoseSessionDiedIsNoLongerTheOwner() throws Exception {
        String url = PG.newDatabase("owned_killed");
        try (DatabaseOwner first = acquire(url, "doomed-node", Duration.ofMillis(100))) {
            // As when the node is killed: PostgreSQL ends its session, and the lock with it.
            try (Connection c = DriverManager.getConnection(url, PG.user(), PG.password());
                 PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                         + " WHERE application_name = 'doomed-node'");
                 ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getBoolean(1)).isTrue();
            }
            // Within the next node's wait, the session is gone and the lock is free.
            try (DatabaseOwner next = acquire(url, "next-node", TestTimeouts.scaled(Duration.ofSeconds(10)))) {
                assertThat(next.held()).isTrue();
                assertThat(first.held()).isFalse();
            }
        }
    }

    @Test
    void aRunningShardNode_ownsItsDatabase_untilItStops() throws Exception {
        String url = PG.newDatabase("node_owned");
        ShardNodeHarness node = new ShardNodeHarness(PG, url, Map.of("lastunit.shard.id", "owner-test")).start();
        try {
            assertThatThrownBy(() -> acquire(url, "intruder", Duration.ofMillis(200)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("application 'lastunit-shard-owner-test-owner-");
        } finally {
            node.close();
        }
        try (DatabaseOwner after = acquire(url, "after", TestTimeouts.scaled(Duration.ofSeconds(10)))) {
            assertThat(after.held()).isTrue();
        }
    }

    /** Ends the sessions named {@code applicationName} (LIKE), as a database restart or a cut does; how many. */
    private static int terminate(String url, String applicationNameLike) throws Exception {
        try (Connection c = DriverManager.getConnection(url, PG.user(), PG.password());
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))"
                     + " FROM pg_stat_activity WHERE application_name LIKE ? AND pid <> pg_backend_pid()")) {
            ps.setString(1, applicationNameLike);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static ReserveRequest reserve(String key) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId("sku").setQuantity(1)
                .setIdempotencyKey(key).setBuyerId("b-" + key).setRegion("local").build();
    }

    @Test
    void aNodeWhoseOwnershipSessionEnded_takesItAgain_andSellsOn() throws Exception {
        String url = PG.newDatabase("owner_regained");
        try (ShardNodeHarness node = new ShardNodeHarness(PG, url, Map.of("lastunit.shard.id", "regain")).start()) {
            node.createItem("acme", "sku", 10);
            assertThat(node.blocking().reserve(reserve("before")).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            DatabaseOwner owner = node.node().owner();
            String first = owner.applicationName();
            assertThat(terminate(url, first)).isEqualTo(1);
            // The watch notices within its interval and takes the free lock again on a new session.
            await().atMost(TestTimeouts.scaled(Duration.ofSeconds(20))).pollInterval(Duration.ofMillis(50))
                    .until(() -> owner.state() == DatabaseOwner.State.OWNED && owner.held()
                            && sessions(url, first) == 1);
            // Its pooled connections pass the fence, old and new alike.
            assertThat(terminate(url, "lastunit-shard-regain")).isPositive();
            ReserveResponse after = reserveRetrying(node, reserve("after"));
            assertThat(after.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            assertThat(node.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    @Test
    void aNodeThatLostTheDatabaseToAnother_opensNoConnectionThatCouldWrite() throws Exception {
        String url = PG.newDatabase("owner_lost");
        try (ShardNodeHarness node = new ShardNodeHarness(PG, url, Map.of("lastunit.shard.id", "loser",
                "lastunit.shard.jdbc-connect-timeout-ms", 1_000)).start()) {
            node.createItem("acme", "sku", 10);
            assertThat(node.blocking().reserve(reserve("before")).getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            DatabaseOwner owner = node.node().owner();
            // Another node takes the lock in the moment between the session's end and the watch's
            // next look; if the watch took it back first, end its session again (bounded).
            DatabaseOwner intruder = null;
            for (int attempt = 0; attempt < 20 && intruder == null; attempt++) {
                terminate(url, owner.applicationName());
                try {
                    intruder = acquire(url, "intruder", Duration.ofMillis(500));
                } catch (IOException watchWasFaster) {
                    // the node's watch took it again: try once more
                }
            }
            assertThat(intruder).as("the intruder took the lock within 20 tries").isNotNull();
            try (DatabaseOwner taken = intruder) {
                await().atMost(TestTimeouts.scaled(Duration.ofSeconds(20))).pollInterval(Duration.ofMillis(50))
                        .until(() -> owner.state() == DatabaseOwner.State.LOST);
                // Its pooled connections end (as after a restart); every new one fails the fence.
                assertThat(terminate(url, "lastunit-shard-loser")).isPositive();
                StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                        () -> node.blocking().withDeadlineAfter(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(),
                                TimeUnit.MILLISECONDS).reserve(reserve("after")));
                assertThat(refused).isNotNull();
                assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(taken.held()).isTrue();
            }
            try (Connection c = DriverManager.getConnection(url, PG.user(), PG.password());
                 PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM holds WHERE idempotency_key = 'after'");
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("nothing written after the loss").isZero();
            }
        }
    }

    private static int sessions(String url, String applicationName) throws Exception {
        try (Connection c = DriverManager.getConnection(url, PG.user(), PG.password());
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
            ps.setString(1, applicationName);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Reserve, retrying UNAVAILABLE (a pool replacing connections the test ended) within a bound. */
    private static ReserveResponse reserveRetrying(ShardNodeHarness node, ReserveRequest r) throws Exception {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
        while (true) {
            try {
                return node.blocking().reserve(r);
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }
}
