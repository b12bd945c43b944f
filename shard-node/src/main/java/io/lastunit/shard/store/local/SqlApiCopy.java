package io.lastunit.shard.store.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;

/**
 * A base backup from Java with PostgreSQL 14's low-level API, for when no {@code pg_basebackup} is
 * installed: create the standby's physical slot reserving WAL now
 * ({@code pg_create_physical_replication_slot(slot, true)}), {@code pg_start_backup(label, true, false)}
 * (a fast checkpoint, non-exclusive) on a connection kept open throughout, copy the data
 * directory's files, {@code pg_stop_backup(false, true)}, and write the label file it returns as
 * {@code backup_label} (and its tablespace map, when there is one). The standby streams the WAL
 * from the backup's start through its slot, which is why none is copied.
 *
 * <p>Left out of the copy, as pg_basebackup leaves them out: {@code postmaster.pid},
 * {@code postmaster.opts}, the contents of {@code pg_wal} (the directory and its
 * {@code archive_status} stay), of {@code pg_replslot} and of the directories PostgreSQL empties at
 * start ({@code pg_dynshmem}, {@code pg_notify}, {@code pg_serial}, {@code pg_snapshots},
 * {@code pg_stat_tmp}, {@code pg_subtrans}), temporary files, sockets and their lock files, signal
 * and label files, {@code pg_internal.init}. The server log is not in the data directory.
 *
 * <p>Stateless, thread-safe. Hazard: files change while they are copied; that is what the backup
 * label and WAL replay from its checkpoint repair, so a file that vanishes mid-copy is skipped,
 * and the copy is only usable with the WAL from the slot. Tablespaces (links in {@code pg_tblspc})
 * are refused: a local server has none.
 */
final class SqlApiCopy implements BaseBackup {
    private static final Set<String> EMPTIED_DIRECTORIES = Set.of(
            "pg_wal", "pg_replslot", "pg_dynshmem", "pg_notify", "pg_serial", "pg_snapshots", "pg_stat_tmp", "pg_subtrans");
    private static final Set<String> SKIPPED_FILES = Set.of(
            "postmaster.pid", "postmaster.opts", "backup_label", "tablespace_map", "backup_manifest",
            "standby.signal", "recovery.signal", "pg_internal.init", "current_logfiles");

    @Override
    public void copy(PostgresServer primary, Path target, String slot, Path commandLog) throws IOException, SQLException {
        try (Connection c = primary.connect("postgres")) {
            execute(c, "SELECT pg_create_physical_replication_slot(?, true)", slot);
            execute(c, "SELECT pg_start_backup(?, true, false)", "lastunit standby " + slot);
            // An error before pg_stop_backup ends the backup with the session: closing c aborts it.
            copyTree(primary.dataDirectory(), target);
            try (PreparedStatement ps = c.prepareStatement("SELECT labelfile, spcmapfile FROM pg_stop_backup(false, true)");
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                Files.writeString(target.resolve("backup_label"), rs.getString(1), StandardCharsets.UTF_8);
                String tablespaceMap = rs.getString(2);
                if (tablespaceMap != null && !tablespaceMap.isBlank()) {
                    Files.writeString(target.resolve("tablespace_map"), tablespaceMap, StandardCharsets.UTF_8);
                }
            }
        }
    }

    private static void execute(Connection c, String sql, String argument) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, argument);
            ps.executeQuery().close();
        }
    }

    static void copyTree(Path source, Path target) throws IOException {
        Files.createDirectory(target, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.walkFileTree(source, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                if (dir.equals(source)) {
                    return FileVisitResult.CONTINUE;
                }
                String name = dir.getFileName().toString();
                if (name.startsWith("pgsql_tmp")) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Path copy = target.resolve(source.relativize(dir).toString());
                try {
                    Files.copy(dir, copy, StandardCopyOption.COPY_ATTRIBUTES); // an empty directory with dir's mode
                } catch (NoSuchFileException vanished) {
                    return FileVisitResult.SKIP_SUBTREE; // a database dropped while the backup ran
                }
                if (dir.getParent().equals(source) && EMPTIED_DIRECTORIES.contains(name)) {
                    if (name.equals("pg_wal")) {
                        Files.createDirectory(copy.resolve("archive_status"));
                    }
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                String name = file.getFileName().toString();
                if (attrs.isSymbolicLink()) {
                    throw new IOException("cannot copy " + file + ": a link (a tablespace?) is not copied by this base backup");
                }
                if (!attrs.isRegularFile() || SKIPPED_FILES.contains(name) || name.startsWith(".s.PGSQL.")
                        || name.startsWith("pgsql_tmp")) {
                    return FileVisitResult.CONTINUE;
                }
                try {
                    Files.copy(file, target.resolve(source.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                } catch (NoSuchFileException vanished) {
                    // Dropped while the backup ran: WAL replay from the label's checkpoint drops it too.
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e == null || e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }
        });
    }

    @Override
    public String toString() {
        return "the low-level backup API from Java";
    }
}
