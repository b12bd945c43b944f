package io.lastunit.shard.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
                    .hasMessageContaining("application 'lastunit-shard-owner-test-owner'");
        } finally {
            node.close();
        }
        try (DatabaseOwner after = acquire(url, "after", TestTimeouts.scaled(Duration.ofSeconds(10)))) {
            assertThat(after.held()).isTrue();
        }
    }
}
