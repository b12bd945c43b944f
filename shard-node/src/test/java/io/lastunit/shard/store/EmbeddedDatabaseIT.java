package io.lastunit.shard.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded PostgreSQL, started for real: durable unless asked otherwise, and gone when closed. */
class EmbeddedDatabaseIT {

    @TempDir
    Path state;

    @Test
    void start_isDurableByDefault_fsyncFullPageWritesAndSynchronousCommitOn() throws Exception {
        List<String> reported = new ArrayList<>();
        try (EmbeddedDatabase db = EmbeddedDatabase.start(EmbeddedDatabase.Durability.FSYNC, state, reported::add)) {
            assertThat(show(db, "fsync")).isEqualTo("on");
            assertThat(show(db, "full_page_writes")).isEqualTo("on");
            assertThat(show(db, "synchronous_commit")).isEqualTo("on");
            assertThat(show(db, "listen_addresses")).isEqualTo("127.0.0.1");
        }
        assertThat(reported).as("nothing was left over to stop").isEmpty();
    }

    @Test
    void start_unsafeNoFsync_turnsOnlyFsyncOff() throws Exception {
        try (EmbeddedDatabase db = EmbeddedDatabase.start(EmbeddedDatabase.Durability.UNSAFE_NO_FSYNC, state, l -> { })) {
            assertThat(show(db, "fsync")).isEqualTo("off");
            assertThat(show(db, "full_page_writes")).isEqualTo("on");
            assertThat(show(db, "synchronous_commit")).isEqualTo("on");
        }
    }

    @Test
    void close_stopsTheServerAndDeletesItsDirectory() throws Exception {
        EmbeddedDatabase db = EmbeddedDatabase.start(EmbeddedDatabase.Durability.FSYNC, state, l -> { });
        Path dir = db.directory();
        assertThat(dir.getParent()).isEqualTo(state);
        assertThat(dir.resolve("data/postmaster.pid")).exists();
        long postmaster = Long.parseLong(Files.readAllLines(dir.resolve("data/postmaster.pid")).get(0).trim());

        db.close();

        assertThat(dir).doesNotExist();
        awaitGone(postmaster);
    }

    /** Waits (bounded) until the process has exited: pg_ctl returns once the pid file is gone, a moment before. */
    static void awaitGone(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
        while (ProcessHandle.of(pid).filter(OwnedTempDirectory::isAlive).isPresent()) {
            assertThat(System.nanoTime() - deadline).as("process " + pid + " still runs").isNegative();
            Thread.sleep(20);
        }
    }

    private static String show(EmbeddedDatabase db, String setting) throws Exception {
        EmbeddedDatabase.Target t = db.createDatabase("postgres");
        try (Connection c = DriverManager.getConnection(t.url(), t.user(), t.password());
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW " + setting)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
