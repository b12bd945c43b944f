package io.lastunit.common.local;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * A directory that belongs to this JVM, in this user's state directory
 * ({@code <java.io.tmpdir>/lastunit-<user>/}): the files of an embedded server such as a
 * PostgreSQL data directory or a ZooKeeper's data and configuration. A file {@code owner} inside
 * records the owning JVM (pid and start time), and, for a server that runs as a process of its
 * own, where that process writes its pid. {@link #close()} deletes the directory.
 *
 * <p>A JVM killed with {@code kill -9} closes nothing, and a PostgreSQL it started keeps running.
 * {@link #reapOrphans} finds such directories: for each whose owner is dead it stops the server
 * process, if that still runs, and deletes the directory. Every embedded start calls it first.
 *
 * <p>Thread-safe. Hazard: a pid is signalled only when that process's command line contains the
 * directory's path, so a pid the system has given to another process since is never signalled;
 * and a directory is never deleted under a server that would not stop.
 */
public final class OwnedTempDirectory implements AutoCloseable {
    /** How long a leftover server process gets to stop on SIGTERM, and then again on SIGKILL. */
    public static final Duration SERVER_STOP_WAIT = Duration.ofSeconds(10);
    static final String OWNER_FILE = "owner";
    private static final String STATE_DIRECTORY_PREFIX = "lastunit-";

    private final Path path;
    private boolean closed;

    private OwnedTempDirectory(Path path) {
        this.path = path;
    }

    /** {@code <java.io.tmpdir>/lastunit-<user>}: where this user's embedded servers keep their files. */
    public static Path stateDirectory() {
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        return Path.of(System.getProperty("java.io.tmpdir"), STATE_DIRECTORY_PREFIX + user);
    }

    /**
     * Creates {@code <stateDirectory>/<kind>-<random>} owned by this JVM.
     *
     * @param kind          what it holds, in the name and in reports ({@code postgres}, {@code zookeeper})
     * @param serverPidFile where, relative to the directory, a server process writes its pid (its first
     *                      line), or null for a server that runs inside the owning JVM
     */
    public static OwnedTempDirectory create(Path stateDirectory, String kind, String serverPidFile) throws IOException {
        return create(stateDirectory, kind, serverPidFile, ProcessHandle.current());
    }

    static OwnedTempDirectory create(Path stateDirectory, String kind, String serverPidFile, ProcessHandle owner)
            throws IOException {
        if (!kind.matches("[a-z]{1,32}")) {
            throw new IllegalArgumentException("kind '" + kind + "' must be 1..32 lower-case letters");
        }
        ensureStateDirectory(stateDirectory);
        Path dir = Files.createTempDirectory(stateDirectory, kind + "-");
        Properties p = new Properties();
        p.setProperty("kind", kind);
        p.setProperty("owner.pid", Long.toString(owner.pid()));
        owner.info().startInstant().ifPresent(t -> p.setProperty("owner.start", Long.toString(t.toEpochMilli())));
        if (serverPidFile != null) {
            p.setProperty("server.pid-file", serverPidFile);
        }
        try {
            // Written whole, then moved into place: a reaper never reads half a record.
            Path tmp = dir.resolve(OWNER_FILE + ".tmp");
            try (OutputStream out = Files.newOutputStream(tmp)) {
                p.store(out, "a lastunit embedded server's files; removed when its owner stops or by the next start");
            }
            try {
                Files.move(tmp, dir.resolve(OWNER_FILE), StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, dir.resolve(OWNER_FILE));
            }
        } catch (IOException e) {
            try {
                deleteTree(dir); // without a record no reaper would ever delete it
            } catch (IOException | UncheckedIOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new OwnedTempDirectory(dir);
    }

    /**
     * Creates a state directory readable by this user only ({@code rwx------}) unless it exists;
     * for files kept there beside the owned directories (a cache without an owner record, which
     * {@link #reapOrphans} leaves alone).
     */
    public static void ensureStateDirectory(Path dir) throws IOException {
        try {
            if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } else {
                Files.createDirectories(dir);
            }
        } catch (FileAlreadyExistsException exists) {
            if (!Files.isDirectory(dir)) {
                throw new IOException(dir + " exists and is not a directory");
            }
        }
    }

    public Path path() {
        return path;
    }

    /** Deletes the directory and everything in it. Idempotent. */
    @Override
    public synchronized void close() throws IOException {
        if (!closed) {
            deleteTree(path);
            closed = true;
        }
    }

    /**
     * Stops and deletes what dead JVMs left in {@code stateDirectory}: for each directory whose
     * owner is no longer running, stops the server process it names if that still runs (SIGTERM,
     * then SIGKILL after {@code stopWait}), and deletes the directory. Directories of live owners,
     * and anything without an owner record, are left alone.
     *
     * @return one line per directory dealt with, saying what was done
     */
    public static List<String> reapOrphans(Path stateDirectory, Duration stopWait) {
        List<String> done = new ArrayList<>();
        if (!Files.isDirectory(stateDirectory)) {
            return done;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(stateDirectory)) {
            for (Path dir : dirs) {
                reap(dir, stopWait).ifPresent(done::add);
            }
        } catch (IOException e) {
            done.add("could not look for leftovers in " + stateDirectory + ": " + e.getMessage());
        }
        return done;
    }

    private static Optional<String> reap(Path dir, Duration stopWait) {
        Properties owner = new Properties();
        try (InputStream in = Files.newInputStream(dir.resolve(OWNER_FILE))) {
            owner.load(in);
        } catch (NoSuchFileException notOurs) {
            return Optional.empty(); // not a directory of ours, or one being created right now
        } catch (IOException | IllegalArgumentException e) {
            return Optional.of("could not read " + dir.resolve(OWNER_FILE) + ": " + e.getMessage() + " (left as it is)");
        }
        long ownerPid;
        try {
            ownerPid = Long.parseLong(owner.getProperty("owner.pid", ""));
        } catch (NumberFormatException e) {
            return Optional.of(dir.resolve(OWNER_FILE) + " names no owner pid (left as it is)");
        }
        if (isRunning(ownerPid, owner.getProperty("owner.start"))) {
            return Optional.empty();
        }
        String kind = owner.getProperty("kind", "server");
        String leftBy = dir + ", left by process " + ownerPid + ", which is gone";
        String stopped = "";
        String pidFile = owner.getProperty("server.pid-file");
        if (pidFile != null) {
            Optional<ProcessHandle> server = serverProcess(dir, dir.resolve(pidFile));
            if (server.isPresent()) {
                long pid = server.get().pid();
                if (!stop(server.get(), stopWait)) {
                    return Optional.of("could not stop the embedded " + kind + " (pid " + pid + ") of " + leftBy
                            + "; its files are left as they are");
                }
                stopped = "stopped the embedded " + kind + " (pid " + pid + ") and ";
            }
        }
        try {
            deleteTree(dir);
        } catch (IOException | UncheckedIOException e) {
            return Optional.of(stopped + "could not delete the embedded " + kind + " files " + leftBy + ": "
                    + e.getMessage());
        }
        return Optional.of(stopped + "deleted the embedded " + kind + " files " + leftBy);
    }

    /** Whether the process {@code pid} runs and is the one that started at {@code startMillis} (when known). */
    private static boolean isRunning(long pid, String startMillis) {
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty() || !isAlive(p.get())) {
            return false;
        }
        if (startMillis == null || startMillis.isBlank()) {
            return true;
        }
        Optional<Instant> start = p.get().info().startInstant();
        // A live process that started at another time has the pid of the dead owner.
        return start.isEmpty() || Long.toString(start.get().toEpochMilli()).equals(startMillis.trim());
    }

    /** The live process named by the pid file, if its command line contains {@code dir}. */
    private static Optional<ProcessHandle> serverProcess(Path dir, Path pidFile) {
        long pid;
        try (Stream<String> lines = Files.lines(pidFile, StandardCharsets.US_ASCII)) {
            pid = Long.parseLong(lines.findFirst().orElse("").trim());
        } catch (IOException | UncheckedIOException | NumberFormatException e) {
            return Optional.empty(); // never started, or stopped cleanly (the server removes its pid file)
        }
        return ProcessHandle.of(pid).filter(OwnedTempDirectory::isAlive)
                .filter(p -> commandLine(p).contains(dir.toString()));
    }

    public static String commandLine(ProcessHandle p) {
        Path proc = Path.of("/proc", Long.toString(p.pid()), "cmdline");
        try {
            return new String(Files.readAllBytes(proc), StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException noProcFs) {
            return p.info().commandLine().orElse("");
        }
    }

    /** SIGTERM, then SIGKILL; true once the process is gone. */
    private static boolean stop(ProcessHandle p, Duration wait) {
        p.destroy();
        if (awaitExit(p, wait)) {
            return true;
        }
        p.destroyForcibly();
        return awaitExit(p, wait);
    }

    private static boolean awaitExit(ProcessHandle p, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (isAlive(p)) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return !isAlive(p);
            }
        }
        return true;
    }

    /**
     * Whether {@code p} runs. A process that has exited but whose parent has not yet collected
     * it (a zombie: the postmaster's parent is whatever adopted it) counts as gone.
     */
    public static boolean isAlive(ProcessHandle p) {
        if (!p.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"), StandardCharsets.US_ASCII);
            int afterName = stat.lastIndexOf(')');
            return afterName < 0 || afterName + 2 >= stat.length() || stat.charAt(afterName + 2) != 'Z';
        } catch (IOException noProcFs) {
            return p.isAlive();
        }
    }

    /** Deletes {@code root} and everything under it; a file gone meanwhile is fine (at most 3 walks). */
    private static void deleteTree(Path root) throws IOException {
        for (int walk = 1; walk <= 3 && Files.exists(root); walk++) {
            try (Stream<Path> all = Files.walk(root)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (UncheckedIOException e) {
                if (!(e.getCause() instanceof NoSuchFileException) || walk >= 3) {
                    throw e.getCause();
                }
            }
        }
        if (Files.exists(root)) {
            throw new IOException("could not delete " + root + ": files keep appearing in it");
        }
    }
}
