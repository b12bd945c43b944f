package io.lastunit.shard.store.local;

import io.lastunit.common.local.OwnedTempDirectory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The postmaster process of one data directory, as the operating system shows it: found through
 * the pid on the first line of {@code postmaster.pid}, and only when that process's command line
 * names the data directory, so a pid the system has since given to another process is never
 * taken for ours (the same test as {@link OwnedTempDirectory}'s reaper).
 *
 * <p>Stateless apart from the path; thread-safe. Hazard: a killed postmaster stays a zombie until
 * whatever adopted it (it outlives pg_ctl, its parent) reaps it, and until then its pid answers
 * {@code kill -0}: a new postmaster takes the old lock files for a live server's and refuses to
 * start. {@link #deleteLockFiles} is for a postmaster known to be dead and not yet reaped.
 */
final class Postmaster {
    private final Path dataDirectory;

    Postmaster(Path dataDirectory) {
        this.dataDirectory = dataDirectory;
    }

    /** The running postmaster, if {@code postmaster.pid} names a live process started on this data directory. */
    Optional<ProcessHandle> running() {
        long pid;
        try {
            List<String> lines = Files.readAllLines(dataDirectory.resolve("postmaster.pid"), StandardCharsets.US_ASCII);
            pid = Long.parseLong(lines.isEmpty() ? "" : lines.get(0).trim());
        } catch (NoSuchFileException | NumberFormatException e) {
            return Optional.empty(); // never started, stopped cleanly, or the file is being written
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + dataDirectory.resolve("postmaster.pid"), e);
        }
        String data = dataDirectory.toString();
        return ProcessHandle.of(pid).filter(OwnedTempDirectory::isAlive)
                .filter(p -> OwnedTempDirectory.commandLine(p).contains(data));
    }

    /** {@code postmaster} and every process under it now: what must be gone before the data directory is free. */
    static List<ProcessHandle> withChildren(ProcessHandle postmaster) {
        List<ProcessHandle> all = new ArrayList<>(postmaster.descendants().toList());
        all.add(postmaster);
        return all;
    }

    /** Whether none of {@code processes} runs (a zombie counts as gone). */
    static boolean allGone(List<ProcessHandle> processes) {
        return processes.stream().noneMatch(OwnedTempDirectory::isAlive);
    }

    /** Deletes {@code postmaster.pid} and the socket lock files, which name a postmaster that is dead. */
    void deleteLockFiles() throws IOException {
        try (Stream<Path> files = Files.list(dataDirectory)) {
            for (Path lock : files.filter(Postmaster::isLockFile).toList()) {
                Files.deleteIfExists(lock);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Deletes the socket files and their locks (a copy of another server's, after a base backup). */
    void deleteSocketFiles() throws IOException {
        try (Stream<Path> files = Files.list(dataDirectory)) {
            for (Path socket : files.filter(p -> p.getFileName().toString().startsWith(".s.PGSQL.")).toList()) {
                Files.deleteIfExists(socket);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private static boolean isLockFile(Path p) {
        String name = p.getFileName().toString();
        return name.equals("postmaster.pid") || name.matches("\\.s\\.PGSQL\\.\\d+\\.lock");
    }
}
