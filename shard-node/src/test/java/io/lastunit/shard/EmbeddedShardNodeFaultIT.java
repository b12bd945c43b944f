package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.common.local.OwnedTempDirectory;
import io.lastunit.testkit.TestTimeouts;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shard node's jar run as a process: it refuses to start without a database, and the
 * embedded PostgreSQL of a node killed with {@code kill -9} outlives it until the next embedded
 * start stops it ({@link OwnedTempDirectory#reapOrphans}).
 */
class EmbeddedShardNodeFaultIT {

    @TempDir
    Path tmp;

    @Test
    void serve_withoutAJdbcUrlOrEmbedded_refusesInOneLineNamingBothSettings() throws Exception {
        File out = tmp.resolve("out.log").toFile();
        File err = tmp.resolve("err.log").toFile();
        ProcessBuilder pb = node(List.of("-Dlastunit.shard.port=0")).redirectOutput(out).redirectError(err);
        Process p = pb.start();
        try {
            assertThat(p.waitFor(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the node exits instead of starting").isTrue();
        } finally {
            p.destroy(); // SIGTERM: a node that did start stops its embedded PostgreSQL too
            p.waitFor(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        }

        List<String> errLines = Files.readAllLines(err.toPath()).stream().filter(l -> !l.isBlank()).toList();
        assertThat(p.exitValue()).as(String.join("\n", errLines)).isEqualTo(2);
        assertThat(errLines).singleElement().asString()
                .startsWith("error: invalid shard config: no database")
                .contains("lastunit.shard.jdbc-url", "LASTUNIT_SHARD_JDBC_URL",
                        "lastunit.shard.embedded=true", "LASTUNIT_SHARD_EMBEDDED=true");
        assertThat(Files.readString(out.toPath())).doesNotContain("listening");
    }

    @Test
    void killedEmbeddedNode_leavesItsPostmasterRunning_untilTheNextStartStopsIt() throws Exception {
        Path stateDir = tmp.resolve("lastunit-" + System.getProperty("user.name"));
        Process node = node(List.of("-Djava.io.tmpdir=" + tmp, "-Dlastunit.shard.embedded=true",
                "-Dlastunit.shard.port=0", "-Dlastunit.shard.id=orphan-test"))
                .redirectErrorStream(true).start();
        long postmaster;
        Path dir;
        try {
            awaitLine(node, "listening on");
            try (Stream<Path> dirs = Files.list(stateDir)) {
                dir = dirs.filter(d -> d.getFileName().toString().startsWith("postgres-")).findFirst().orElseThrow();
            }
            postmaster = Long.parseLong(Files.readAllLines(dir.resolve("data/postmaster.pid")).get(0).trim());

            node.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertThat(node.waitFor(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        } finally {
            node.destroyForcibly();
        }
        ProcessHandle server = ProcessHandle.of(postmaster).orElseThrow();
        assertThat(OwnedTempDirectory.isAlive(server)).as("the postmaster outlives the killed node").isTrue();
        assertThat(OwnedTempDirectory.commandLine(server)).contains(dir.toString());

        List<String> lines = OwnedTempDirectory.reapOrphans(stateDir, TestTimeouts.scaled(Duration.ofSeconds(10)));

        assertThat(lines).singleElement().asString()
                .startsWith("stopped the embedded postgres (pid " + postmaster + ") and deleted the embedded postgres files "
                        + dir);
        assertThat(OwnedTempDirectory.isAlive(server)).as("postmaster " + postmaster).isFalse();
        assertThat(dir).doesNotExist();
    }

    /** The node's jar with these JVM options; the binaries of PostgreSQL are shared with other tests. */
    private static ProcessBuilder node(List<String> jvmOptions) {
        Path jar = Path.of(System.getProperty("basedir", ".")).resolve("target/lastunit-shard-node.jar");
        assertThat(jar).as(jar + " is built by `mvn package` before the integration tests").exists();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-Dot.epg.working-dir=" + Path.of(System.getProperty("java.io.tmpdir"), "embedded-pg"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-jar", jar.toString(), "serve"));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("LASTUNIT_SHARD_") || k.startsWith("MICRONAUT_"));
        return pb;
    }

    /** Reads the process's output until a line contains {@code text} (bounded). */
    private static void awaitLine(Process p, String text) throws InterruptedException {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (java.io.IOException closed) {
                // the process is gone
            }
        }, "node-output");
        reader.setDaemon(true);
        reader.start();
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(120)).toNanos();
        List<String> seen = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            String l = lines.poll(100, TimeUnit.MILLISECONDS);
            if (l != null) {
                seen.add(l);
                if (l.contains(text)) {
                    return;
                }
            } else if (!p.isAlive()) {
                break;
            }
        }
        throw new AssertionError("no line with '" + text + "' from the node; it printed:\n" + String.join("\n", seen));
    }
}
