package io.lastunit.shard.store.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.testkit.TestTimeouts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bundle on the class path, unpacked into a cache: once, whole, even when two unpack at the same time. */
class PostgresBinariesIT {
    /** How long an unpacking may take, before scaling. */
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path cache;

    @Test
    void find_twoRacingIntoAnEmptyCache_bothGetOneWholeUnpacking() throws Exception {
        CyclicBarrier together = new CyclicBarrier(2);
        List<CompletableFuture<PostgresBinaries>> racers = Stream.generate(() -> CompletableFuture.supplyAsync(() -> {
            try {
                together.await();
                return PostgresBinaries.find(cache);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        })).limit(2).toList();
        long waitMillis = TestTimeouts.scaled(WAIT).toMillis();
        PostgresBinaries first = racers.get(0).get(waitMillis, TimeUnit.MILLISECONDS);
        PostgresBinaries second = racers.get(1).get(waitMillis, TimeUnit.MILLISECONDS);

        assertThat(first.binDirectory()).isEqualTo(second.binDirectory());
        assertThat(first.binDirectory().getParent().getParent()).isEqualTo(cache);
        for (String program : List.of("initdb", "pg_ctl", "postgres")) {
            assertThat(first.binDirectory().resolve(program)).isExecutable();
        }
        assertThat(first.binDirectory().resolveSibling("lib/libpq.so")).as("links are unpacked").exists();
        try (Stream<Path> entries = Files.list(cache)) {
            assertThat(entries.map(p -> p.getFileName().toString()).toList())
                    .as("the loser's unpacking is gone").containsExactly(first.binDirectory().getParent().getFileName().toString());
        }
        assertThat(PostgresBinaries.find(cache).binDirectory()).as("a later find reuses it").isEqualTo(first.binDirectory());
        assertThat(first.majorVersion()).isEqualTo(14);
    }

    @Test
    void find_asRoot_runsTheServerProgramsInAUserNamespace() throws Exception {
        PostgresBinaries binaries = PostgresBinaries.find();
        boolean root = "root".equals(System.getProperty("user.name"));
        assertThat(binaries.runsInUserNamespace()).isEqualTo(root);
        assertThat(binaries.command("initdb", List.of("--version")).get(0)).isEqualTo(root ? "unshare" : binaries.binDirectory()
                .resolve("initdb").toString());
        if (Files.isExecutable(Path.of("/usr/lib/postgresql/15/bin/pg_basebackup"))) {
            assertThat(binaries.pgBasebackup()).isPresent();
        }
    }
}
