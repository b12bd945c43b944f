package io.lastunit.testkit.image;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An image's file tree unpacked into a directory and its entrypoint run there the way a container
 * runtime runs it, with no runtime: {@code unshare} gives the process new mount and PID
 * namespaces, the directory as its root, a fresh /proc, and the image's user and group; its
 * environment is the image's only (plus what a test adds). It shares the host's network, so a
 * test binds it to 127.0.0.1. A memory limit only when asked ({@link MemoryCgroup}); no seccomp,
 * no capabilities dropped: what it proves is that the image's own files run its service as its
 * user — the JRE and its libraries, the classpath, the configuration, the writable /tmp.
 *
 * <p>Needs root (to unpack owners as they are and to set the user) and util-linux's unshare and
 * GNU tar on the host. Not thread-safe; one test class owns one. Hazard: the unpacked tree is the
 * size of the image (about 250 MB); {@link #close} deletes it.
 */
public final class ImageContainer implements AutoCloseable {
    private static final Duration POLL = Duration.ofMillis(100);

    private final ImageTarball image;
    private final Path root;
    private final String java;

    private ImageContainer(ImageTarball image, Path root, String java) {
        this.image = image;
        this.root = root;
        this.java = java;
    }

    /** Whether this process may run images here: root, with unshare and tar on the host. */
    public static Optional<String> whyNotRunnable() {
        try {
            long uid = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
            if (uid != 0) {
                return Optional.of("running an image needs root (unshare --root, --setuid), this is uid " + uid);
            }
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.of("cannot tell this process's uid from /proc/self: " + e);
        }
        for (String tool : List.of("unshare", "tar", "sh")) {
            if (tool(tool) == null) {
                return Optional.of("no " + tool + " in /usr/bin or /bin");
            }
        }
        return Optional.empty();
    }

    /** Unpacks every layer of {@code image}, in order, into {@code root} (which must not exist yet). */
    public static ImageContainer unpack(ImageTarball image, Path root) throws IOException, InterruptedException {
        String java = LastunitImage.javaOnPath(image, image.env().getOrDefault("PATH", ""));
        if (java == null) {
            throw new IOException(image + " has no java on its PATH " + image.env().get("PATH"));
        }
        Files.createDirectories(root.getParent());
        Files.createDirectory(root);
        // The image's /: the user must be able to enter it (a directory made here is 0755 or tighter).
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
        ImageContainer container = new ImageContainer(image, root, java);
        try {
            for (InputStream layer : image.layerStreams()) {
                container.untar(layer);
            }
            Files.createDirectories(root.resolve("proc"));
        } catch (IOException | InterruptedException | RuntimeException e) {
            container.close();
            throw e;
        }
        return container;
    }

    private void untar(InputStream layer) throws IOException, InterruptedException {
        Process tar = new ProcessBuilder(tool("tar"), "-x", "-C", root.toString(), "--numeric-owner", "--same-owner",
                "--same-permissions", "-f", "-").redirectErrorStream(true).start();
        try (OutputStream in = tar.getOutputStream()) {
            layer.transferTo(in);
        }
        String out = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!tar.waitFor(60, TimeUnit.SECONDS) || tar.exitValue() != 0) {
            tar.destroyForcibly();
            throw new IOException("tar -x into " + root + " failed: " + out);
        }
    }

    /**
     * The command line a runtime would run: the image's entrypoint with {@code args}, or with the
     * image's Cmd when {@code args} is empty.
     */
    List<String> command(List<String> args) {
        String[] user = image.user().split(":");
        List<String> cmd = new ArrayList<>(List.of(tool("unshare"), "--fork", "--pid", "--mount-proc=/proc",
                "--root=" + root, "--wd=/", "--setgid=" + user[1], "--setuid=" + user[0]));
        List<String> entrypoint = image.entrypoint();
        cmd.add(java);              // the runtime's PATH lookup of entrypoint[0], done in the image
        cmd.addAll(entrypoint.subList(1, entrypoint.size()));
        cmd.addAll(args.isEmpty() ? image.cmd() : args);
        return cmd;
    }

    /** Starts the entrypoint with {@code args} and the image's environment plus {@code env}; output to {@code log}. */
    public Running start(List<String> args, Map<String, String> env, Path log) throws IOException {
        return launch(command(args), env, log);
    }

    /**
     * As {@link #start(List, Map, Path)}, in {@code cgroup}, with the host's cgroup file systems
     * under the image's /sys/fs/cgroup as a runtime mounts them: the JVM finds its memory limit
     * there. The mount is made in a mount namespace of the process's own, so it goes with it.
     */
    public Running start(List<String> args, Map<String, String> env, Path log, MemoryCgroup cgroup) throws IOException {
        Files.createDirectories(root.resolve("sys/fs/cgroup"));
        List<String> cmd = new ArrayList<>(List.of(tool("unshare"), "--mount", "--propagation", "private", tool("sh"),
                "-c", "mount --rbind /sys/fs/cgroup \"$0/sys/fs/cgroup\" && echo $$ > \"$1\" && shift && exec \"$@\"",
                root.toString(), cgroup.procs().toString()));
        cmd.addAll(command(args));
        return launch(cmd, env, log);
    }

    private Running launch(List<String> command, Map<String, String> env, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().clear();
        Map<String, String> all = new LinkedHashMap<>(image.env());
        all.putAll(env);
        pb.environment().putAll(all);
        return new Running(pb.start(), log);
    }

    /** A process started from the image. Closing kills it (SIGKILL) if it still runs. */
    public static final class Running implements AutoCloseable {
        private final Process unshare;
        private final Path log;

        private Running(Process unshare, Path log) {
            this.unshare = unshare;
            this.log = log;
        }

        /** Waits until a line of the output matches {@code pattern}; empty if the process ends or the time runs out first. */
        public Optional<Matcher> awaitLine(Pattern pattern, Duration timeout) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                    Matcher m = pattern.matcher(line);
                    if (m.find()) {
                        return Optional.of(m);
                    }
                }
                if (!unshare.isAlive() || System.nanoTime() > deadline) {
                    return Optional.empty();
                }
                Thread.sleep(POLL.toMillis());
            }
        }

        /** Waits for the process to end by itself; its exit code, or empty when it still runs after {@code timeout}. */
        public Optional<Integer> awaitExit(Duration timeout) throws InterruptedException {
            return unshare.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS) ? Optional.of(unshare.exitValue()) : Optional.empty();
        }

        /**
         * SIGTERM to the entrypoint (PID 1 of its namespace, as a runtime's stop signals it: unshare
         * does not pass signals on), then waits; the exit code, or empty when it still runs.
         */
        public Optional<Integer> stop(Duration timeout) throws InterruptedException {
            unshare.toHandle().children().forEach(ProcessHandle::destroy);
            return awaitExit(timeout);
        }

        public String output() throws IOException {
            return Files.readString(log, StandardCharsets.UTF_8);
        }

        /** The output so far, or a note why it cannot be read (for failure messages). */
        public String outputOrEmpty() {
            try {
                return output();
            } catch (IOException e) {
                return "(cannot read " + log + ": " + e + ")";
            }
        }

        /** The exit code if the process has ended, else null. */
        public Integer exitCodeIfEnded() {
            return unshare.isAlive() ? null : unshare.exitValue();
        }

        /**
         * The real and effective uid and gid of the entrypoint's process, from its /proc status
         * ({@code Uid: 65532 65532 65532 65532}); empty when it no longer runs.
         */
        public Optional<String> ids() throws IOException {
            Optional<ProcessHandle> child = unshare.toHandle().children().findFirst();
            if (child.isEmpty()) {
                return Optional.empty();
            }
            List<String> status = Files.readAllLines(Path.of("/proc", Long.toString(child.get().pid()), "status"));
            String uid = status.stream().filter(l -> l.startsWith("Uid:")).findFirst().orElse("Uid: ?");
            String gid = status.stream().filter(l -> l.startsWith("Gid:")).findFirst().orElse("Gid: ?");
            return Optional.of(uid.replaceAll("\\s+", " ") + ", " + gid.replaceAll("\\s+", " "));
        }

        public Path log() {
            return log;
        }

        /** SIGKILL to the process and everything it started, then a bounded wait for it to go. */
        @Override
        public void close() {
            if (unshare.isAlive()) {
                unshare.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                unshare.destroyForcibly();
                try {
                    unshare.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static String tool(String name) {
        for (String dir : List.of("/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(dir, name))) {
                return dir + "/" + name;
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        if (Files.exists(root)) {
            try (Stream<Path> walk = Files.walk(root)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
