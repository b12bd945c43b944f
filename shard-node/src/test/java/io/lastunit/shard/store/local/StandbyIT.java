package io.lastunit.shard.store.local;

import static io.lastunit.shard.store.local.LocalServers.DB;
import static io.lastunit.shard.store.local.LocalServers.awaitRows;
import static io.lastunit.shard.store.local.LocalServers.execute;
import static io.lastunit.shard.store.local.LocalServers.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A streaming standby made each way from one running primary: by a local pg_basebackup and by
 * the low-level backup API from Java. Each has the rows committed before its base backup, then
 * receives the ones committed after it, and is a read-only server in recovery.
 */
class StandbyIT {
    @TempDir
    static Path state;
    private static PostgresBinaries binaries;
    private static PostgresServer primary;

    @BeforeAll
    static void startPrimary() throws Exception {
        binaries = PostgresBinaries.find();
        primary = PostgresServer.initPrimary("primary", binaries, LocalServers.settings(state, false));
        primary.start();
        execute(primary, "CREATE TABLE t (id bigint PRIMARY KEY)");
        execute(primary, "INSERT INTO t SELECT g FROM generate_series(1, 1000) g");
    }

    @AfterAll
    static void closePrimary() throws Exception {
        if (primary != null) {
            primary.close();
        }
    }

    @Test
    void standbyOf_byPgBasebackup_streamsAndHasThePrimarysRows() throws Exception {
        assumeTrue(binaries.pgBasebackup().isPresent(), "no local pg_basebackup of major version "
                + binaries.majorVersion() + " or newer (.ci/run installs PostgreSQL)");
        checkStandby("by_pg_basebackup", BaseBackupMethod.PG_BASEBACKUP, 2000, true);
    }

    @Test
    void standbyOf_bySqlApi_streamsAndHasThePrimarysRows() throws Exception {
        checkStandby("by_sql_api", BaseBackupMethod.SQL_API, 3000, false);
    }

    @Test
    void standbyOf_refusesASlotNameInUse_andLeavesTheSlotAlone() throws Exception {
        execute(primary, "SELECT pg_create_physical_replication_slot('taken')");
        try {
            assertThatThrownBy(() -> PostgresServer.standbyOf(primary, "taken", BaseBackupMethod.SQL_API))
                    .isInstanceOf(PostgresServerException.class)
                    .hasMessageContaining("replication slot taken exists already")
                    .hasMessageContaining("port " + primary.port());
            assertThat(slots()).contains("taken");
        } finally {
            primary.dropReplicationSlot("taken");
        }
    }

    /** {@code byTool}: pg_basebackup leaves a backup_manifest in the copy, the SQL API does not. */
    private static void checkStandby(String name, BaseBackupMethod method, long firstLaterId, boolean byTool)
            throws Exception {
        try (PostgresServer standby = PostgresServer.standbyOf(primary, name, method)) {
            assertThat(Files.exists(standby.dataDirectory().resolve("backup_manifest"))).isEqualTo(byTool);
            assertThat(standby.port()).isNotEqualTo(primary.port());
            assertThat(standby.inRecovery()).isTrue();
            assertThat(Files.exists(standby.dataDirectory().resolve("standby.signal"))).isTrue();
            assertThat(primary.replicationState()).anySatisfy(r -> {
                assertThat(r.applicationName()).isEqualTo(name);
                assertThat(r.streaming()).isTrue();
                assertThat(r.synchronous()).as("nothing asked for synchronous replication").isFalse();
            });
            assertThat(ids(standby, "t")).hasSizeGreaterThanOrEqualTo(1000).contains(1L, 1000L);

            List<Long> later = List.of(firstLaterId, firstLaterId + 1);
            for (long id : later) {
                execute(primary, "INSERT INTO t VALUES (" + id + ")");
            }
            awaitRows(standby, "t", later);
            assertThatThrownBy(() -> execute(standby, "INSERT INTO t VALUES (-1)"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("read-only");
        } finally {
            primary.dropReplicationSlot(name);
        }
        assertThat(slots()).doesNotContain(name);
    }

    private static List<String> slots() throws SQLException {
        List<String> slots = new java.util.ArrayList<>();
        try (Connection c = primary.connect(DB); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT slot_name FROM pg_replication_slots")) {
            while (rs.next()) {
                slots.add(rs.getString(1));
            }
        }
        return slots;
    }
}
