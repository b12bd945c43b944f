package io.lastunit.common.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bookkeeping of embedded servers' files, with real processes standing in for owners and
 * servers. (A real PostgreSQL left by a killed JVM: shard-node's {@code EmbeddedDatabaseOrphanFaultIT}.)
 */
class OwnedTempDirectoryIT {

    @TempDir
    Path state;

    @Test
    void close_deletesTheDirectoryAndItsFiles() throws Exception {
        OwnedTempDirectory d = OwnedTempDirectory.create(state, "zookeeper", null);
        Files.createDirectories(d.path().resolve("data/version-2"));
        Files.writeString(d.path().resolve("zookeeper.configuration1.properties"), "clientPort=1");
        assertThat(d.path().getFileName().toString()).startsWith("zookeeper-");
        assertThat(d.path().getParent()).isEqualTo(state);

        d.close();
        d.close();

        assertThat(d.path()).doesNotExist();
    }

    @Test
    void reapOrphans_leavesTheDirectoriesOfALiveOwner() throws Exception {
        OwnedTempDirectory mine = OwnedTempDirectory.create(state, "postgres", "data/postmaster.pid");

        assertThat(OwnedTempDirectory.reapOrphans(state, Duration.ofSeconds(5))).isEmpty();

        assertThat(mine.path()).isDirectory();
        mine.close();
    }

    @Test
    void reapOrphans_deletesTheDirectoryOfADeadOwner_andSaysSo() throws Exception {
        ProcessHandle dead = deadProcess();
        OwnedTempDirectory orphan = OwnedTempDirectory.create(state, "zookeeper", null, dead);
        Files.createDirectories(orphan.path().resolve("data"));

        var lines = OwnedTempDirectory.reapOrphans(state, Duration.ofSeconds(5));

        assertThat(lines).singleElement().asString()
                .startsWith("deleted the embedded zookeeper files " + orphan.path())
                .contains("left by process " + dead.pid());
        assertThat(orphan.path()).doesNotExist();
    }

    @Test
    void reapOrphans_neverSignalsAProcessWhoseCommandLineDoesNotNameTheDirectory() throws Exception {
        // The pid file names a live process that is not the server (its pid was reused).
        Process unrelated = new ProcessBuilder("sleep", "600").start();
        try {
            OwnedTempDirectory orphan = OwnedTempDirectory.create(state, "postgres", "data/postmaster.pid", deadProcess());
            Files.createDirectories(orphan.path().resolve("data"));
            Files.writeString(orphan.path().resolve("data/postmaster.pid"), unrelated.pid() + "\n/somewhere\n");

            var lines = OwnedTempDirectory.reapOrphans(state, Duration.ofSeconds(5));

            assertThat(unrelated.isAlive()).as("the unrelated process still runs").isTrue();
            assertThat(lines).singleElement().asString().startsWith("deleted the embedded postgres files");
            assertThat(orphan.path()).doesNotExist();
        } finally {
            unrelated.destroyForcibly();
            unrelated.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void reapOrphans_leavesADirectoryWithoutAnOwnerRecord() throws Exception {
        Path foreign = Files.createDirectory(state.resolve("postgres-123"));

        assertThat(OwnedTempDirectory.reapOrphans(state, Duration.ofSeconds(5))).isEmpty();

        assertThat(foreign).isDirectory();
    }

    @Test
    void stateDirectory_isPerUserUnderTheTemporaryDirectory() {
        assertThat(OwnedTempDirectory.stateDirectory())
                .isEqualTo(Path.of(System.getProperty("java.io.tmpdir"), "lastunit-" + System.getProperty("user.name")));
    }

    /** A process that ran and exited: the owner of a JVM killed with kill -9, as the record sees it. */
    private static ProcessHandle deadProcess() throws Exception {
        Process p = new ProcessBuilder("true").start();
        ProcessHandle h = p.toHandle();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return h;
    }
}
