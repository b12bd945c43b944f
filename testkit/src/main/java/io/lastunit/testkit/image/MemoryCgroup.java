package io.lastunit.testkit.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A child of this process's memory cgroup with a memory limit, as a container runtime gives a
 * container: a process moved into it before the JVM starts sees that limit as its machine's
 * memory. Works on cgroup v1 (the memory hierarchy, {@code memory.limit_in_bytes}) and v2
 * ({@code memory.max}, where the parent delegates the memory controller).
 *
 * <p>Needs root. Not thread-safe. Hazard: a cgroup is removed only when empty; {@link #close}
 * removes it after the test's processes ended, and a JVM killed in between leaves an empty
 * {@code lastunit-image-*} cgroup behind (harmless; {@code rmdir} removes it).
 */
public final class MemoryCgroup implements AutoCloseable {
    private static final Path ROOT = Path.of("/sys/fs/cgroup");
    private static final AtomicInteger NEXT = new AtomicInteger();

    private final Path dir;

    private MemoryCgroup(Path dir) {
        this.dir = dir;
    }

    /** Creates the cgroup with a limit of {@code limitBytes}; throws with the reason where it cannot. */
    public static MemoryCgroup create(long limitBytes) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8);
        String name = "lastunit-image-" + ProcessHandle.current().pid() + "-" + NEXT.incrementAndGet();
        for (String line : lines) {             // v1: "4:memory:/path"
            String[] f = line.split(":", 3);
            if (f.length == 3 && List.of(f[1].split(",")).contains("memory") && Files.isDirectory(ROOT.resolve("memory"))) {
                Path dir = ROOT.resolve("memory").resolve(f[2].substring(1)).resolve(name);
                return created(dir, "memory.limit_in_bytes", limitBytes);
            }
        }
        for (String line : lines) {             // v2: "0::/path"
            if (line.startsWith("0::") && Files.exists(ROOT.resolve("cgroup.controllers"))) {
                Path dir = ROOT.resolve(line.substring(4)).resolve(name);
                return created(dir, "memory.max", limitBytes);
            }
        }
        throw new IOException("no memory cgroup for this process in /proc/self/cgroup: " + lines);
    }

    private static MemoryCgroup created(Path dir, String limitFile, long limitBytes) throws IOException {
        try {
            Files.createDirectory(dir);
            Files.writeString(dir.resolve(limitFile), Long.toString(limitBytes));
        } catch (IOException e) {
            try {
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // the limit was not set: the directory is all there is to remove, and it is empty
            }
            throw new IOException("cannot make a memory cgroup " + dir + " limited to " + limitBytes + " bytes: " + e, e);
        }
        return new MemoryCgroup(dir);
    }

    /** The file a process writes its pid to, to move itself in. */
    Path procs() {
        return dir.resolve("cgroup.procs");
    }

    @Override
    public void close() throws IOException {
        Files.deleteIfExists(dir);
    }

    @Override
    public String toString() {
        return dir.toString();
    }
}
