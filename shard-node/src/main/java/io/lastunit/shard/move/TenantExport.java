package io.lastunit.shard.move;

import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.api.shard.v1.TenantRows;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.shard.store.ItemStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A tenant's rows on this shard, read in one REPEATABLE READ READ ONLY snapshot and handed out in
 * chunks: every row, or (with a previous export's snapshot) only the rows written by transactions
 * that snapshot did not see. Nothing in the shard deletes a row of a served item while a move names
 * its tenant (retention leaves such a tenant alone: its batches take the tenant's lock, which this
 * export takes for its cut, and ask {@link MoveActivity}, which the export's caller noted first), so
 * those rows are every insert and every update since: applied in order, the exports rebuild the
 * tenant's rows as of the last one's snapshot. The snapshot is read first ({@code pg_current_snapshot()}), so it is
 * the one every table is read in; the export takes no transaction id of its own.
 *
 * <p>Each export also returns its <b>cut</b> ({@link ChangedRows#cut}): a time by this database's
 * clock before which every transaction that commits after its snapshot started. A delta given the
 * earlier export's cut reads the holds, usage and transfers through indexes — live holds, rows
 * ended at or after the cut, their buyers' usage — instead of every row of the tenant, so its time
 * follows what is live and recent, not the tenant's history ({@link ChangedRows}).
 *
 * <p>Bounded in memory: rows are fetched in batches of at most {@link #FETCH_ROWS} and a chunk
 * holds at most {@code chunkRows} rows and about {@link #CHUNK_BYTES_MAX} bytes, so that one chunk
 * fits in one ImportTenant call (a shard takes requests of at most 1 MiB). Stateless; each call
 * uses the caller's connection, which must not be inside a transaction yet, and restores it.
 * Hazard: the snapshot is held for as long as the caller takes its chunks, which keeps VACUUM from
 * removing row versions the export might still read: the caller bounds how long it waits.
 */
public final class TenantExport {
    /** Rows per chunk when the request names none. */
    public static final int CHUNK_ROWS_DEFAULT = 1_000;
    /** Most rows per chunk a request may ask for. */
    public static final int CHUNK_ROWS_MAX = 10_000;
    /** About the most bytes of rows (JSON and item ids) one chunk carries. */
    public static final int CHUNK_BYTES_MAX = 768 * 1024;
    /** Rows the driver fetches per round trip. */
    static final int FETCH_ROWS = 1_000;
    /** What a protobuf repeated row costs beyond its two strings, roughly. */
    private static final int ROW_OVERHEAD_BYTES = 8;

    /** Where the chunks go. */
    @FunctionalInterface
    public interface Sink {
        /**
         * Sends one chunk, waiting (bounded) until the receiver can take it. False when the
         * receiver is gone or took nothing for too long (or the waiting thread was interrupted: the
         * sink keeps the interrupt): the export stops and its snapshot ends.
         */
        boolean send(TenantChunk chunk);
    }

    /**
     * What an export came to: the snapshot it read, its cut, its rows by kind, and whether every
     * chunk was sent (false: the receiver went away, and the last chunk was not sent).
     */
    public record Exported(String snapshot, long cutMicros, MoveCounts counts, boolean complete) {
    }

    private final String shardId;
    private final ItemStore items = new ItemStore();

    public TenantExport(String shardId) {
        this.shardId = shardId;
    }

    /**
     * Exports the tenant's rows: all of them when {@code sinceSnapshot} is empty, else those written
     * since that snapshot (a previous export's), found by index when {@code sinceCutMicros} (that
     * export's cut) is above 0. The last chunk sent has {@code last}, the snapshot, the cut and the
     * counts.
     *
     * @param chunkRows rows per chunk, 1..{@link #CHUNK_ROWS_MAX}
     */
    public Exported export(Connection c, String tenant, String sinceSnapshot, long sinceCutMicros, int chunkRows,
                           Sink sink) throws SQLException {
        if (chunkRows < 1 || chunkRows > CHUNK_ROWS_MAX) {
            throw new IllegalArgumentException("chunkRows=" + chunkRows + " is outside [1, " + CHUNK_ROWS_MAX + "]");
        }
        if (sinceCutMicros < 0 || (sinceCutMicros > 0 && sinceSnapshot.isEmpty())) {
            throw new IllegalArgumentException("sinceCutMicros=" + sinceCutMicros + " needs a since snapshot and >= 0");
        }
        // Before the snapshot, in a transaction of its own: every writer that commits after the
        // snapshot is running now or starts later (ChangedRows#cut). The tenant's lock first, so a
        // retention batch of the tenant that began before the move was noted has committed.
        items.lockTenant(c, tenant, false);
        long cut = ChangedRows.cut(c);
        c.commit();
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        c.setReadOnly(true);
        try {
            String snapshot = currentSnapshot(c);
            Delta delta = sinceSnapshot.isEmpty() ? null : delta(c, snapshot, sinceSnapshot);
            Chunks chunks = new Chunks(sink, chunkRows);
            for (TenantTable t : TenantTable.values()) {
                if (!exportTable(c, t, tenant, snapshot, sinceSnapshot, sinceCutMicros, delta, chunks)) {
                    return new Exported(snapshot, cut, chunks.counts.build(), false);
                }
            }
            c.commit();
            boolean sent = chunks.flush(true, snapshot, cut);
            return new Exported(snapshot, cut, chunks.counts.build(), sent);
        } finally {
            c.rollback();
            c.setReadOnly(false);
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
    }

    /** The first statement of the transaction: its snapshot, which every later read uses. */
    private static String currentSnapshot(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_current_snapshot()::text");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }

    /**
     * What a delta export of this transaction asks of each row, computed once: a row was written
     * since the earlier snapshot P when its writer's id is at or past P's xmax, or was running at P.
     * {@code age(xmin)} (a C function, no text conversions per row) counts back from this
     * transaction's stable latest id, so "at or past P's xmax" is {@code age(xmin) BETWEEN 0 AND
     * maxAge}, with {@code maxAge} = latest − P's xmax; the ids running at P are {@code runningAtP}
     * (32-bit). Null when that form does not apply (P older than 2^31 ids, or this snapshot's xmax
     * a special id at the wrap-around): the export then uses {@code lastunit_xid8} row by row.
     */
    record Delta(long maxAge, String runningAtP) {
    }

    private static Delta delta(Connection c, String snapshot, String since) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT pg_snapshot_xmax(s)::text::bigint AS sx, pg_snapshot_xmax(p)::text::bigint AS px,
                       CASE WHEN pg_snapshot_xmax(s)::text::bigint % 4294967296 >= 3
                            THEN age((pg_snapshot_xmax(s)::text::bigint % 4294967296)::text::xid) END AS lag,
                       coalesce((SELECT array_agg((x::text::bigint % 4294967296)::text::xid)::text
                                   FROM pg_snapshot_xip(p) x), '{}') AS running
                  FROM (SELECT ?::pg_snapshot AS s, ?::pg_snapshot AS p) q""")) {
            ps.setString(1, snapshot);
            ps.setString(2, since);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long sx = rs.getLong(1);
                long px = rs.getLong(2);
                long lag = rs.getLong(3);
                boolean lagKnown = !rs.wasNull();
                long maxAge = sx + lag - px;
                if (!lagKnown || lag < 0 || px > sx || maxAge > Integer.MAX_VALUE) {
                    return null;
                }
                return new Delta(maxAge, rs.getString(4));
            }
        }
    }

    /** One table's rows into the chunks; false when the sink refused a chunk. */
    private boolean exportTable(Connection c, TenantTable t, String tenant, String snapshot, String since,
                                long sinceCut, Delta delta, Chunks chunks) throws SQLException {
        ChangedRows.Query q = new ChangedRows.Query();
        // The rows whose writer the earlier snapshot did not see (see Delta), as a condition on alias a.
        ChangedRows.RowFilter written = since.isEmpty() ? ChangedRows.RowFilter.NONE
                : delta != null ? (a, into) -> into.sql(" AND (age(" + a + ".xmin) BETWEEN 0 AND ? OR " + a
                + ".xmin = ANY(?::xid[]))").param(delta.maxAge()).param(delta.runningAtP())
                : (a, into) -> into.sql(" AND NOT pg_visible_in_snapshot(lastunit_xid8(" + a
                + ".xmin, ?::pg_snapshot), ?::pg_snapshot)").param(snapshot).param(since);
        if (sinceCut > 0 && t.retired()) {
            return true; // settled: unchanged since the move began (TenantTable#retired)
        }
        if (sinceCut > 0 && ChangedRows.indexed(t)) {
            ChangedRows.rowsOf(t, tenant, sinceCut, written, q);
        } else {
            q.sql("SELECT t.item_id, row_to_json(t)::text FROM " + t.table + " t WHERE t.tenant_id = ?").param(tenant);
            written.append("t", q);
        }
        try (PreparedStatement ps = q.prepare(c)) {
            ps.setFetchSize(Math.min(FETCH_ROWS, chunks.rowsMax));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (!chunks.add(t, rs.getString(1), rs.getString(2))) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    /** The chunk being filled, and what was exported so far. Confined to the exporting thread. */
    private final class Chunks {
        final Sink sink;
        final int rowsMax;
        final MoveCounts.Builder counts = MoveCounts.newBuilder();
        TenantChunk.Builder chunk = TenantChunk.newBuilder();
        TenantRows.Builder rows;
        TenantTable rowsOf;
        int rowsInChunk;
        long bytesInChunk;

        Chunks(Sink sink, int rowsMax) {
            this.sink = sink;
            this.rowsMax = rowsMax;
        }

        /** Adds a row; sends the chunk once it is full. False when the sink refused it. */
        boolean add(TenantTable t, String itemId, String json) {
            if (rowsOf != t) {
                closeRows();
                rows = TenantRows.newBuilder().setTable(t.table);
                rowsOf = t;
            }
            rows.addRows(TenantRow.newBuilder().setItemId(itemId).setJson(json));
            t.count(counts, 1);
            rowsInChunk++;
            bytesInChunk += itemId.length() + json.length() + ROW_OVERHEAD_BYTES;
            if (rowsInChunk >= rowsMax || bytesInChunk >= CHUNK_BYTES_MAX) {
                return flush(false, "", 0);
            }
            return true;
        }

        private void closeRows() {
            if (rows != null && rows.getRowsCount() > 0) {
                chunk.addTables(rows);
            }
            rows = null;
            rowsOf = null;
        }

        /** Sends what is gathered (the last chunk: even if empty, with the snapshot, the cut and the counts). */
        boolean flush(boolean last, String snapshot, long cut) {
            closeRows();
            chunk.setShardId(shardId);
            if (last) {
                chunk.setLast(true).setSnapshot(snapshot).setCutMicros(cut).setCounts(counts);
            }
            boolean sent = sink.send(chunk.build());
            chunk = TenantChunk.newBuilder();
            rowsInChunk = 0;
            bytesInChunk = 0;
            return sent;
        }
    }
}
