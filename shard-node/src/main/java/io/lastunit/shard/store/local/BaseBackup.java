package io.lastunit.shard.store.local;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.SQLException;

/** One way to copy a running primary's data directory for a new standby: {@link BaseBackupMethod} picks it. */
interface BaseBackup {
    /**
     * Copies the running {@code primary} into {@code target} (which must not exist) and creates the
     * physical replication slot {@code slot} on it, reserved from before the copy began, so the WAL
     * the copy needs stays on the primary until the standby has streamed it. Output of programs it
     * runs is appended to {@code commandLog}.
     */
    void copy(PostgresServer primary, Path target, String slot, Path commandLog) throws IOException, SQLException;
}
