package io.lastunit.shard.store.local;

import java.util.Locale;

/**
 * How {@link PostgresServer#standbyOf} copies the running primary. Both end in the same standby:
 * a data directory, a physical replication slot on the primary holding the WAL it needs, and
 * {@code standby.signal} with {@code primary_conninfo} and {@code primary_slot_name}.
 */
public enum BaseBackupMethod {
    /**
     * {@link #PG_BASEBACKUP} when {@link PostgresBinaries#pgBasebackup()} found one, else
     * {@link #SQL_API}; the system property {@value #PROPERTY} decides instead when it is set.
     */
    AUTO,
    /** A local {@code pg_basebackup -X stream -S <slot> -C -R}: the bundle has none, an installed one is needed. */
    PG_BASEBACKUP,
    /** From Java: {@code pg_start_backup}, a copy of the data directory's files, {@code pg_stop_backup}. */
    SQL_API;

    /** {@code sql} forces {@link #SQL_API}, {@code pg_basebackup} requires {@link #PG_BASEBACKUP}, {@code auto} or unset: as found. */
    public static final String PROPERTY = "lastunit.postgres.baseBackup";

    /** The copy this method stands for here. */
    BaseBackup resolve(PostgresBinaries binaries) {
        BaseBackupMethod method = this == AUTO ? fromProperty() : this;
        return switch (method) {
            case AUTO -> binaries.pgBasebackup().<BaseBackup>map(PgBasebackupCopy::new).orElseGet(SqlApiCopy::new);
            case PG_BASEBACKUP -> new PgBasebackupCopy(binaries.pgBasebackup().orElseThrow(() -> new IllegalStateException(
                    "base backup by pg_basebackup asked, but none of major version " + binaries.majorVersion()
                            + " or newer is installed (looked in " + PostgresBinaries.DEBIAN_POSTGRESQL_ROOT + "/*/bin and PATH)")));
            case SQL_API -> new SqlApiCopy();
        };
    }

    static BaseBackupMethod fromProperty() {
        String value = System.getProperty(PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
        return switch (value) {
            case "", "auto" -> AUTO;
            case "pg_basebackup" -> PG_BASEBACKUP;
            case "sql" -> SQL_API;
            default -> throw new IllegalStateException("system property " + PROPERTY + "='" + value
                    + "' must be auto, pg_basebackup or sql");
        };
    }
}
