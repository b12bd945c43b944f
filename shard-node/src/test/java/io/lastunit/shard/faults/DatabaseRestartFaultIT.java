package io.lastunit.shard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.shard.store.DatabaseOwner;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.lastunit.shard.store.local.PostgresServer;
import io.lastunit.shard.store.local.ServerSettings;
import io.lastunit.shard.store.local.ShutdownMode;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.faults.History;
import io.lastunit.testkit.faults.Nemesis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The shard's PostgreSQL restarted in the middle of a sale, by a clean shutdown ({@code FAST}:
 * clients disconnected, open transactions rolled back, a checkpoint) and by an immediate one
 * ({@code IMMEDIATE}: no checkpoint, crash recovery from the WAL at the next start). While it is
 * down every call is UNAVAILABLE (never SOLD_OUT); the node's pools reconnect and its ownership
 * watch takes the database's lock again by itself; every acknowledged hold survives the restart,
 * every unknown resolves by its key, exactly the total is sold.
 */
class DatabaseRestartFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int BUYERS = 3_000;
    private static final long TOTAL = 1_000;
    private static final String DB = "shard";

    @TempDir
    Path state;

    @ParameterizedTest
    @EnumSource(value = ShutdownMode.class, names = {"FAST", "IMMEDIATE"})
    void databaseRestartedMidSale_losesNoAcknowledgedHold(ShutdownMode mode) throws Exception {
        ServerSettings settings = ShardNodeHarness.faultTestServer(state);
        try (PostgresServer server = PostgresServer.initPrimary("restart", PostgresBinaries.find(), settings)) {
            server.start();
            server.createDatabase(DB);
            Map<String, Object> props = Map.of(
                    "lastunit.shard.id", "restart-" + mode.name().toLowerCase(java.util.Locale.ROOT),
                    "lastunit.shard.jdbc-user", PostgresServer.SUPERUSER,
                    "lastunit.shard.jdbc-password", "",
                    "lastunit.shard.jdbc-socket-timeout-ms", 3_000,
                    "lastunit.shard.jdbc-lock-timeout-ms", 1_000,
                    "lastunit.shard.jdbc-connect-timeout-ms", 2_000);
            try (ShardNodeHarness shard = new ShardNodeHarness(PG, server.jdbcUrl(DB), props).start()) {
                shard.createItem("acme", "hot", TOTAL);
                SaleUnderFault sale = new SaleUnderFault(shard::blocking, "acme", "hot");
                Nemesis restart = Nemesis.of("PostgreSQL stopped (" + mode + "), then started", () -> {
                    try {
                        server.stop(mode);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }, () -> {
                    try {
                        server.start();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                SaleUnderFault.Result r = sale.run(BUYERS, 16, 200, 48, restart);
                System.out.printf("restart %s: %s; %d resolved by key; fault %d ms; recovery %d ms (last ack"
                                + " before to first after), %d ms from the restart to the first ack%n", mode, r.history(),
                        r.resolved().size(), (r.nemesisStoppedAt() - r.nemesisStartedAt()) / 1_000_000,
                        r.recoveryMillis(), r.healedToFirstAckMillis());

                assertThat(r.history().count(History.Outcome.UNKNOWN)).as("calls met the database down").isPositive();
                sale.check(r, BUYERS, TOTAL, server.jdbcUrl(DB), PostgresServer.SUPERUSER, "");
                assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
                assertThat(shard.node().owner().state()).as("the node took its database's lock again")
                        .isEqualTo(DatabaseOwner.State.OWNED);
            }
        }
    }
}
