package io.lastunit.shard.store.local;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A base backup by a local {@code pg_basebackup} (the bundle has none; an installed one of the
 * server's major version or newer can back up a 14 server): {@code -X stream} streams the WAL the
 * copy needs beside it, {@code -S <slot> -C} creates the standby's slot first, {@code -R} writes
 * {@code standby.signal} and a {@code primary_conninfo}, which {@link PostgresServer#standbyOf}
 * then overrides with its own. A checkpoint is forced ({@code -c fast}) rather than waited for.
 *
 * <p>Immutable, thread-safe. Hazard: the server skips the socket in the data directory with a
 * warning but copies its {@code .lock} file; the standby deletes the copy.
 */
final class PgBasebackupCopy implements BaseBackup {
    private final Path program;

    PgBasebackupCopy(Path program) {
        this.program = program;
    }

    @Override
    public void copy(PostgresServer primary, Path target, String slot, Path commandLog) throws IOException {
        List<String> command = new ArrayList<>(List.of(program.toString(),
                "-D", target.toString(),
                "-d", "host=" + PostgresServer.HOST + " port=" + primary.port() + " user=" + PostgresServer.SUPERUSER
                        + " application_name=" + slot + "_basebackup",
                "-X", "stream", "-S", slot, "-C", "-R", "-c", "fast", "--no-password"));
        if (!primary.settings().fsync()) {
            command.add("--no-sync");
        }
        BoundedProcess.Result result = BoundedProcess.run(command, commandLog, primary.settings().operationWait());
        if (!result.succeeded()) {
            throw primary.failure("pg_basebackup into " + target + " failed: " + result.describe(), null);
        }
    }

    @Override
    public String toString() {
        return "pg_basebackup (" + program + ")";
    }
}
