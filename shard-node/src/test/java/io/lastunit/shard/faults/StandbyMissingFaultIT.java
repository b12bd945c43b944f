package io.lastunit.shard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.shard.store.local.BaseBackupMethod;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.lastunit.shard.store.local.PostgresServer;
import io.lastunit.shard.store.local.ServerSettings;
import io.lastunit.shard.store.local.ShutdownMode;
import io.lastunit.shard.store.local.StandbyPair;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.faults.History;
import io.lastunit.testkit.faults.Nemesis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The synchronous standby goes away in the middle of a sale (docs/durability.md, "Writes pause
 * without the standby"): the commits in flight wait for it, and from the standby watch's next look
 * every write is refused at once with UNAVAILABLE / STANDBY_MISSING, nothing written — never
 * SOLD_OUT, never a commit acknowledged that only the primary has. When the standby is back the
 * sale goes on; every refused or unknown call is resolved by its key and exactly the total is sold.
 */
class StandbyMissingFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int BUYERS = 3_000;
    private static final long TOTAL = 1_000;
    private static final String DB = "shard";

    @TempDir
    Path state;

    @Test
    void standbyStoppedMidSale_writesRefusedStandbyMissing_nothingWritten_thenTheSaleGoesOn() throws Exception {
        ServerSettings settings = ShardNodeHarness.faultTestServer(state);
        try (StandbyPair pair = StandbyPair.start(PostgresBinaries.find(), settings, BaseBackupMethod.SQL_API)) {
            pair.createDatabase(DB);
            String direct = pair.primary().jdbcUrl(DB);
            Map<String, Object> props = Map.of(
                    "lastunit.shard.id", "standby-missing",
                    "lastunit.shard.jdbc-user", PostgresServer.SUPERUSER,
                    "lastunit.shard.jdbc-password", "",
                    "lastunit.shard.jdbc-socket-timeout-ms", 3_000,
                    "lastunit.shard.jdbc-lock-timeout-ms", 1_000,
                    "lastunit.shard.jdbc-connect-timeout-ms", 2_000,
                    "lastunit.shard.jdbc-standby-check-interval-ms", 200);
            try (ShardNodeHarness shard = new ShardNodeHarness(PG, pair.multiHostJdbcUrl(DB), props).start()) {
                shard.createItem("acme", "hot", TOTAL);
                SaleUnderFault sale = new SaleUnderFault(shard::blocking, "acme", "hot");
                AtomicReference<List<String>> refusedKeys = new AtomicReference<>(List.of());
                AtomicReference<List<String>> writtenAnyway = new AtomicReference<>(List.of());
                Nemesis standbyGone = Nemesis.of("the synchronous standby stopped", () -> {
                    try {
                        pair.standby().stop(ShutdownMode.FAST);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }, () -> {
                    // Before the standby is back: what was refused must not be in the database.
                    try {
                        List<String> refused = keysAnswered(sale.current(), "STANDBY_MISSING");
                        refusedKeys.set(refused);
                        writtenAnyway.set(holdsOf(direct, refused));
                        pair.standby().start();
                        pair.primary().awaitSynchronous(StandbyPair.STANDBY_NAME);
                    } catch (IOException | SQLException e) {
                        throw new RuntimeException(e);
                    }
                });
                SaleUnderFault.Result r = sale.run(BUYERS, 16, 200, 400, standbyGone);
                System.out.printf("standby missing: %s; %d refused STANDBY_MISSING (answer p50 %d ms, max %d ms);"
                                + " %d resolved by key; recovery %d ms%n", r.history(), refusedKeys.get().size(),
                        percentileMillis(r.history(), "STANDBY_MISSING", 0.5),
                        percentileMillis(r.history(), "STANDBY_MISSING", 1.0), r.resolved().size(), r.recoveryMillis());

                assertThat(refusedKeys.get()).as("writes refused while no synchronous standby was connected")
                        .isNotEmpty();
                assertThat(writtenAnyway.get()).as("holds written for Reserves answered STANDBY_MISSING").isEmpty();
                assertThat(shard.node().engine().gate().closedBecause()).as("the gate opened again").isNull();
                sale.check(r, BUYERS, TOTAL, direct, PostgresServer.SUPERUSER, "");
                assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
            }
        }
    }

    /** The keys of calls that ended with {@code reason} (in their status's ErrorInfo). */
    private static List<String> keysAnswered(History history, String reason) {
        List<String> keys = new ArrayList<>();
        for (History.Entry e : history.entries()) {
            if (e.outcome() == History.Outcome.UNKNOWN && e.reason() != null && e.reason().endsWith("/" + reason)) {
                keys.add(e.key());
            }
        }
        return keys;
    }

    private static long percentileMillis(History history, String reason, double q) {
        List<Long> ms = new ArrayList<>();
        for (History.Entry e : history.entries()) {
            if (e.outcome() == History.Outcome.UNKNOWN && e.reason() != null && e.reason().endsWith("/" + reason)) {
                ms.add((e.completeNanos() - e.invokeNanos()) / 1_000_000);
            }
        }
        if (ms.isEmpty()) {
            return -1;
        }
        ms.sort(null);
        return ms.get((int) Math.min(ms.size() - 1, Math.floor(q * (ms.size() - 1))));
    }

    /** The keys among {@code keys} that have a hold in the database (read on the primary: reads do not wait). */
    private static List<String> holdsOf(String url, List<String> keys) throws SQLException {
        List<String> found = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url, PostgresServer.SUPERUSER, "");
             PreparedStatement ps = c.prepareStatement(
                     "SELECT idempotency_key FROM holds WHERE idempotency_key = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
        }
        return found;
    }
}
