package io.lastunit.admin.platform;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The in-process ZooKeeper of a local platform: it listens on 127.0.0.1 only, and a start and stop
 * leave none of its files behind (ZooKeeper's embedded server writes a
 * {@code zookeeper.configuration*.properties} file next to its data directory on every start).
 */
class LocalPlatformZooKeeperIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final Path TMP = Path.of(System.getProperty("java.io.tmpdir"));
    /** 127.0.0.1 as /proc/net/tcp writes it, and as /proc/net/tcp6 writes ::ffff:127.0.0.1. */
    private static final List<String> LOOPBACK = List.of("0100007F", "0000000000000000FFFF00000100007F");

    private static LocalPlatform start() throws Exception {
        return LocalPlatform.builder(id -> new ShardConfig.Jdbc(PG.newDatabase(id), PG.user(), PG.password(), 0))
                .cell("shared", List.of("local"), 1).balancers(0).start();
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void zooKeeper_listensOnLoopbackOnly() throws Exception {
        try (LocalPlatform p = start()) {
            int port = p.zookeeperServer().getPort();

            assertThat(listeningAddresses(port)).as("listening sockets of port " + port).isNotEmpty()
                    .allSatisfy(a -> assertThat(LOOPBACK).contains(a));
        }
    }

    @Test
    void startAndStop_leaveNoZooKeeperConfigurationFileInTheTemporaryDirectory() throws Exception {
        int port;
        since = java.nio.file.attribute.FileTime.from(java.time.Instant.now().minusSeconds(1));
        try (LocalPlatform p = start()) {
            port = p.zookeeperServer().getPort();
        }
        // Other processes may write such files meanwhile, so count only the ones naming this server's port.
        assertThat(configurationFiles(TMP, port)).as("zookeeper.configuration*.properties in " + TMP
                + " naming clientPort=" + port + " after the platform stopped").isEmpty();
    }

    @Test
    void zooKeeperFiles_areInOneDirectory_deletedOnStop() throws Exception {
        Path dir;
        since = java.nio.file.attribute.FileTime.from(java.time.Instant.now().minusSeconds(1));
        try (LocalPlatform p = start()) {
            int port = p.zookeeperServer().getPort();
            dir = p.zookeeperDirectory();
            assertThat(dir.getFileName().toString()).startsWith("zookeeper-");
            assertThat(configurationFiles(dir, port)).hasSize(1);
            assertThat(configurationFiles(TMP, port)).isEmpty();
        }
        assertThat(dir).doesNotExist();
    }

    /**
     * Files older than the platform under test cannot be its own: other tests' ZooKeeper servers
     * leave theirs in the temporary directory, some naming a port this one happens to get again.
     */
    private java.nio.file.attribute.FileTime since = java.nio.file.attribute.FileTime.fromMillis(0);

    /** The files ZooKeeper wrote, since {@link #since}, for the server on {@code port}, directly in {@code dir}. */
    private List<Path> configurationFiles(Path dir, int port) throws IOException {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith("zookeeper.configuration")
                    && f.getFileName().toString().endsWith(".properties")).toList()) {
                try {
                    if (Files.getLastModifiedTime(f).compareTo(since) >= 0
                            && Files.readAllLines(f).contains("clientPort=" + port)) {
                        found.add(f);
                    }
                } catch (IOException goneOrNotOurs) {
                    // another process's file, deleted or unreadable meanwhile
                }
            }
        }
        return found;
    }

    /** Local addresses (hex, as the kernel writes them) of the sockets listening on {@code port}. */
    private static List<String> listeningAddresses(int port) throws IOException {
        List<String> addresses = new ArrayList<>();
        String hexPort = String.format(Locale.ROOT, "%04X", port);
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path t = Path.of(table);
            if (!Files.exists(t)) {
                continue;
            }
            List<String> lines = Files.readAllLines(t);
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                String[] local = f[1].split(":");
                if (local[1].equals(hexPort) && f[3].equals("0A")) {
                    addresses.add(local[0]);
                }
            }
        }
        return addresses;
    }
}
