package io.lastunit.router.auth;

import io.lastunit.common.reload.ReloadingFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The router's token grants read from a file, one grant a line ({@code <sha256-hex>:<name>:<tenants>[:admin]};
 * blank lines and lines starting with {@code #} are skipped), and read again every interval
 * ({@link ReloadingFiles}): a grant added or removed takes effect without a restart. A new content
 * is taken only whole and valid — at most {@value #BYTES_MAX} bytes and {@value #GRANTS_MAX}
 * grants, every line a grant (named by line number when not), no repeated digest, at least one
 * grant; otherwise the grants in force stay, the problem is logged once per distinct content and
 * counted ({@link #reloadFailures()}). The first read must succeed. Thread-safe.
 *
 * <p>Hazard: a removed grant stops admitting new calls at the next read; calls already admitted
 * run to their end.
 */
public final class GrantsFile implements AutoCloseable {
    /** A larger file is refused: 10,000 grants of about 100 bytes fit four times over. */
    public static final int BYTES_MAX = 4 << 20;
    public static final int GRANTS_MAX = 10_000;

    /** The grants of one content of the file. */
    private record Grants(Authenticator authenticator, int count) {
    }

    private final ReloadingFiles<Grants> file;

    private GrantsFile(ReloadingFiles<Grants> file) {
        this.file = file;
    }

    /**
     * Reads {@code file} and reads it again every {@code interval}.
     *
     * @throws IllegalArgumentException naming the file and the problem when the first read fails
     */
    public static GrantsFile watch(Path file, Duration interval) {
        return new GrantsFile(ReloadingFiles.watch("token grants", List.of(file), BYTES_MAX, interval,
                bytes -> parse(file, bytes[0]), g -> { }));
    }

    /** The grants in force. */
    public Authenticator current() {
        return file.current().authenticator();
    }

    public int grantCount() {
        return file.current().count();
    }

    /** New grants taken since the first read. */
    public long reloads() {
        return file.reloads();
    }

    /** Distinct contents of the file refused. */
    public long reloadFailures() {
        return file.reloadFailures();
    }

    /** Why the latest read was refused, or empty when it was not. */
    public Optional<String> lastFailure() {
        return file.lastFailure();
    }

    /**
     * Reads the file now and takes its grants when they changed and are valid.
     *
     * @return true when new grants were taken
     */
    public boolean reloadNow() {
        return file.reloadNow();
    }

    /** The grants of the file's lines; every non-blank, non-comment line is one. */
    static Grants parse(Path file, byte[] bytes) {
        List<String> grants = new ArrayList<>();
        String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (grants.size() == GRANTS_MAX) {
                throw new IllegalArgumentException(file + " has more than " + GRANTS_MAX + " grants");
            }
            try {
                Authenticator.fromGrants(List.of(line));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": "
                        + e.getMessage().replace("token grant #0", "the grant"), e);
            }
            grants.add(line);
        }
        if (grants.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no grant: no caller could authenticate");
        }
        try {
            return new Grants(Authenticator.fromGrants(grants), grants.size());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        file.close();
    }
}
