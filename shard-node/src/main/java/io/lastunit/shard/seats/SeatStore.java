package io.lastunit.shard.seats;

import io.lastunit.shard.seats.plan.SeatSpec;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import io.lastunit.shard.store.CommitWarnings;

/**
 * The SQL of seated items (schema V12): their seats, the seated holds, and the statements a lane's
 * seat batch writes, each one statement over arrays ({@code unnest}), each conditional, so that a
 * cache that was stale shows as fewer rows than decided. Stateless; every method runs on the
 * caller's connection and transaction.
 */
public final class SeatStore {
    /** Epoch microseconds of a timestamptz expression. */
    static String micros(String expr) {
        return "(extract(epoch from " + expr + ") * 1000000)::int8";
    }

    /** One seat as loaded: its place and whether it is on sale and in a hold. */
    public record SeatRow(SeatSpec spec, boolean onSale, UUID holdId) {
    }

    /** A HELD or SOLD seated hold, as loaded. */
    public record LiveRow(UUID holdId, String region, String buyerId, String key, String fingerprint, String state,
                          long createdAtMicros, long expiresAtMicros, boolean extended, String orderRef,
                          int[] seatNos) {
    }

    /** The item's row and bucket 0 as a seat lane needs them. */
    public record ItemRow(String kind, String homeRegion, int perBuyerLimit, long holdTtlMs, long extendByMs,
                          String state, long allotment, long available, long held, long sold, long dbNowMicros,
                          String seatMapDigest) {
    }

    /** The item's kind ({@code COUNTED}, {@code SEATED}), or null if no such item here. */
    public String kind(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT kind FROM items WHERE tenant_id = ? AND item_id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    public ItemRow item(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT i.kind, i.home_region, i.per_buyer_limit, i.hold_ttl_ms, i.extend_by_ms, i.state,
                       b.allotment, b.available, b.held, b.sold, %s, i.seat_map_digest
                  FROM items i JOIN buckets b ON b.tenant_id = i.tenant_id AND b.item_id = i.item_id AND b.bucket_no = 0
                 WHERE i.tenant_id = ? AND i.item_id = ?""".formatted(micros("clock_timestamp()")))) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new ItemRow(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getLong(4), rs.getLong(5),
                        rs.getString(6), rs.getLong(7), rs.getLong(8), rs.getLong(9), rs.getLong(10), rs.getLong(11),
                        rs.getString(12));
            }
        }
    }

    public List<SeatRow> seats(Connection c, String tenant, String item) throws SQLException {
        List<SeatRow> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT seat_no, seat_id, section_id, row_id, position, category, rank, aisle_after, on_sale, hold_id
                  FROM seats WHERE tenant_id = ? AND item_id = ? ORDER BY seat_no""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setFetchSize(10_000);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new SeatRow(new SeatSpec(rs.getInt(1), rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getInt(5), rs.getString(6), rs.getInt(7), rs.getBoolean(8)), rs.getBoolean(9),
                            rs.getObject(10, UUID.class)));
                }
            }
        }
        return out;
    }

    private static final String LIVE_COLUMNS = "hold_id, region, buyer_id, idempotency_key, request_fingerprint, state, "
            + micros("created_at") + ", " + micros("expires_at") + ", extended, order_ref, seat_nos";

    private static LiveRow live(ResultSet rs) throws SQLException {
        Array a = rs.getArray(11);
        Integer[] nos = a == null ? new Integer[0] : (Integer[]) a.getArray();
        int[] seatNos = new int[nos.length];
        for (int i = 0; i < nos.length; i++) {
            seatNos[i] = nos[i];
        }
        return new LiveRow(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getString(4),
                rs.getString(5), rs.getString(6), rs.getLong(7), rs.getLong(8), rs.getBoolean(9), rs.getString(10),
                seatNos);
    }

    /** The item's HELD and SOLD holds. */
    public List<LiveRow> liveHolds(Connection c, String tenant, String item) throws SQLException {
        return holds(c, tenant, item, "state IN ('HELD', 'SOLD') AND seat_nos IS NOT NULL", null);
    }

    /** Holds of the item by idempotency key, in any state (a retry of a key the lane does not know). */
    public List<LiveRow> byKeys(Connection c, String tenant, String item, String[] keys) throws SQLException {
        return holds(c, tenant, item, "idempotency_key = ANY(?::text[])", c.createArrayOf("text", keys));
    }

    /** Holds of the item by id, in any state (a call on a hold that ended before the lane loaded the item). */
    public List<LiveRow> byIds(Connection c, String tenant, String item, UUID[] ids) throws SQLException {
        return holds(c, tenant, item, "hold_id = ANY(?::uuid[])", c.createArrayOf("uuid", ids));
    }

    /** The item's holds that match {@code where} (with one array parameter, or none when {@code param} is null). */
    private static List<LiveRow> holds(Connection c, String tenant, String item, String where, Array param)
            throws SQLException {
        List<LiveRow> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT " + LIVE_COLUMNS
                + " FROM holds WHERE tenant_id = ? AND item_id = ? AND " + where)) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            if (param != null) {
                ps.setArray(3, param);
            }
            ps.setFetchSize(10_000);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(live(rs));
                }
            }
        }
        return out;
    }

    /** Inserts seats (a new item, or a restock); fails on a seat id or position the item already has. */
    public void insertSeats(Connection c, String tenant, String item, List<SeatSpec> seats) throws SQLException {
        int n = seats.size();
        Integer[] no = new Integer[n];
        String[] id = new String[n];
        String[] section = new String[n];
        String[] row = new String[n];
        Integer[] pos = new Integer[n];
        String[] cat = new String[n];
        Integer[] rank = new Integer[n];
        Boolean[] aisle = new Boolean[n];
        for (int i = 0; i < n; i++) {
            SeatSpec s = seats.get(i);
            no[i] = s.seatNo();
            id[i] = s.seatId();
            section[i] = s.sectionId();
            row[i] = s.rowId();
            pos[i] = s.order();
            cat[i] = s.category();
            rank[i] = s.rank();
            aisle[i] = s.aisleAfter();
        }
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO seats (tenant_id, item_id, seat_no, seat_id, section_id, row_id, position, category, rank,
                                   aisle_after)
                SELECT ?, ?, d.* FROM unnest(?::int4[], ?::text[], ?::text[], ?::text[], ?::int4[], ?::text[], ?::int4[],
                                             ?::bool[]) AS d""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setArray(3, c.createArrayOf("int4", no));
            ps.setArray(4, c.createArrayOf("text", id));
            ps.setArray(5, c.createArrayOf("text", section));
            ps.setArray(6, c.createArrayOf("text", row));
            ps.setArray(7, c.createArrayOf("int4", pos));
            ps.setArray(8, c.createArrayOf("text", cat));
            ps.setArray(9, c.createArrayOf("int4", rank));
            ps.setArray(10, c.createArrayOf("bool", aisle));
            int inserted = ps.executeUpdate();
            if (inserted != n) {
                throw new IllegalStateException("inserted " + inserted + " seats of " + n);
            }
        }
    }

    /** The next free seat number of the item. */
    public int nextSeatNo(Connection c, String tenant, String item) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT coalesce(max(seat_no) + 1, 0) FROM seats WHERE tenant_id = ? AND item_id = ?")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    public void setKindSeated(Connection c, String tenant, String item, String digest) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE items SET kind = 'SEATED', seat_map_digest = ? WHERE tenant_id = ? AND item_id = ?")) {
            ps.setString(1, digest);
            ps.setString(2, tenant);
            ps.setString(3, item);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("item " + tenant + "/" + item + " vanished while being created");
            }
        }
    }

    private static final String EXPIRE = """
            WITH upd AS (
                UPDATE holds SET state = 'EXPIRED', ended_at = now()
                 WHERE hold_id = ANY(?::uuid[]) AND tenant_id = ? AND item_id = ? AND state = 'HELD' AND expires_at <= now()
                RETURNING tenant_id, item_id, hold_id, qty
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'EXPIRED', hold_id, qty FROM upd
            )
            SELECT hold_id FROM upd""";

    private static final String CONFIRM = """
            WITH upd AS (
                UPDATE holds h SET state = 'SOLD', order_ref = d.ref, ended_at = now()
                  FROM unnest(?::uuid[], ?::text[]) AS d(id, ref)
                 WHERE h.hold_id = d.id AND h.tenant_id = ? AND h.item_id = ? AND h.state = 'HELD' AND h.expires_at > now()
                RETURNING h.tenant_id, h.item_id, h.hold_id, h.qty
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'SOLD', hold_id, qty FROM upd
            )
            SELECT hold_id FROM upd""";

    private static final String RELEASE = """
            WITH upd AS (
                UPDATE holds SET state = 'RELEASED', ended_at = now()
                 WHERE hold_id = ANY(?::uuid[]) AND tenant_id = ? AND item_id = ? AND state = 'HELD' AND expires_at > now()
                RETURNING tenant_id, item_id, hold_id, qty
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'RELEASED', hold_id, qty FROM upd
            )
            SELECT hold_id FROM upd""";

    private static final String EXTEND = """
            WITH upd AS (
                UPDATE holds SET expires_at = expires_at + make_interval(secs => ? / 1000.0), extended = true
                 WHERE hold_id = ANY(?::uuid[]) AND tenant_id = ? AND item_id = ? AND state = 'HELD' AND NOT extended
                   AND expires_at > now()
                RETURNING tenant_id, item_id, hold_id, qty, expires_at
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'EXTENDED', hold_id, qty FROM upd
            )
            SELECT hold_id, %s FROM upd""".formatted(micros("expires_at"));

    /** Expires these due HELD holds; answers those it expired. */
    public List<UUID> expire(Connection c, String tenant, String item, UUID[] ids) throws SQLException {
        return ids(c, EXPIRE, ps -> {
            ps.setArray(1, c.createArrayOf("uuid", ids));
            ps.setString(2, tenant);
            ps.setString(3, item);
        });
    }

    /** HELD and unexpired → SOLD; answers those it confirmed. */
    public List<UUID> confirm(Connection c, String tenant, String item, UUID[] ids, String[] refs) throws SQLException {
        return ids(c, CONFIRM, ps -> {
            ps.setArray(1, c.createArrayOf("uuid", ids));
            ps.setArray(2, c.createArrayOf("text", refs));
            ps.setString(3, tenant);
            ps.setString(4, item);
        });
    }

    /** HELD and unexpired → RELEASED; answers those it released. */
    public List<UUID> release(Connection c, String tenant, String item, UUID[] ids) throws SQLException {
        return ids(c, RELEASE, ps -> {
            ps.setArray(1, c.createArrayOf("uuid", ids));
            ps.setString(2, tenant);
            ps.setString(3, item);
        });
    }

    /** HELD, unexpired, not yet extended: expiry pushed out by {@code byMs}; answers id → new expiry (micros). */
    public Map<UUID, Long> extend(Connection c, String tenant, String item, UUID[] ids, long byMs) throws SQLException {
        Map<UUID, Long> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(EXTEND)) {
            ps.setLong(1, byMs);
            ps.setArray(2, c.createArrayOf("uuid", ids));
            ps.setString(3, tenant);
            ps.setString(4, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getObject(1, UUID.class), rs.getLong(2));
                }
            }
        }
        return out;
    }

    /** Clears the hold of these seats where it is the named hold; answers how many it cleared. */
    public int freeSeats(Connection c, String tenant, String item, int[] seatNos, UUID[] holds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE seats s SET hold_id = NULL FROM unnest(?::int4[], ?::uuid[]) AS d(n, h)
                 WHERE s.tenant_id = ? AND s.item_id = ? AND s.seat_no = ANY(?::int4[]) AND s.seat_no = d.n
                   AND s.hold_id = d.h""")) {
            Array nos = c.createArrayOf("int4", boxed(seatNos));
            ps.setArray(1, nos);
            ps.setArray(2, c.createArrayOf("uuid", holds));
            ps.setString(3, tenant);
            ps.setString(4, item);
            ps.setArray(5, nos);
            return ps.executeUpdate();
        }
    }

    /** Claims these seats for their holds where each is on sale and in no hold; answers how many it claimed. */
    public int claimSeats(Connection c, String tenant, String item, int[] seatNos, UUID[] holds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE seats s SET hold_id = d.h FROM unnest(?::int4[], ?::uuid[]) AS d(n, h)
                 WHERE s.tenant_id = ? AND s.item_id = ? AND s.seat_no = ANY(?::int4[]) AND s.seat_no = d.n
                   AND s.hold_id IS NULL AND s.on_sale""")) {
            Array nos = c.createArrayOf("int4", boxed(seatNos));
            ps.setArray(1, nos);
            ps.setArray(2, c.createArrayOf("uuid", holds));
            ps.setString(3, tenant);
            ps.setString(4, item);
            ps.setArray(5, nos);
            return ps.executeUpdate();
        }
    }

    /** Puts free seats on sale or takes them off; answers how many changed. */
    public int setOnSale(Connection c, String tenant, String item, int[] seatNos, boolean onSale) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                WITH upd AS (
                    UPDATE seats SET on_sale = ?
                     WHERE tenant_id = ? AND item_id = ? AND seat_no = ANY(?::int4[]) AND on_sale = NOT ? AND hold_id IS NULL
                    RETURNING 1
                ), ob AS (
                    INSERT INTO outbox (tenant_id, item_id, kind, qty)
                    SELECT ?, ?, ?, count(*) FROM upd HAVING count(*) > 0
                )
                SELECT count(*) FROM upd""")) {
            ps.setBoolean(1, onSale);
            ps.setString(2, tenant);
            ps.setString(3, item);
            ps.setArray(4, c.createArrayOf("int4", boxed(seatNos)));
            ps.setBoolean(5, onSale);
            ps.setString(6, tenant);
            ps.setString(7, item);
            ps.setString(8, onSale ? "SEATS_ON_SALE" : "SEATS_OFF_SALE");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The item's total follows the seats on sale (the shard's ledger: total = bucket 0's allotment). */
    public void addToTotal(Connection c, String tenant, String item, long delta) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE items SET total = total + ? WHERE tenant_id = ? AND item_id = ?")) {
            ps.setLong(1, delta);
            ps.setString(2, tenant);
            ps.setString(3, item);
            ps.executeUpdate();
        }
    }

    /** A new seated hold, as the lane decided it. */
    public record NewHold(UUID holdId, String region, int qty, String buyerId, String key, String fingerprint,
                          long ttlMs, int[] seatNos) {
    }

    /** What the database gave a hold it inserted: its key and its times (micros). */
    public record Placed(String key, long createdAtMicros, long expiresAtMicros) {
    }

    /**
     * Inserts HELD holds (with their outbox events); a key the item already has inserts nothing.
     * Answers the holds inserted, by key.
     */
    public Map<String, Placed> insertHolds(Connection c, String tenant, String item, List<NewHold> holds)
            throws SQLException {
        Map<String, Placed> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("WITH " + INSERT_HOLDS
                + " SELECT idempotency_key, " + micros("created_at") + ", " + micros("expires_at") + " FROM ins")) {
            bindHolds(c, ps, 1, tenant, item, holds);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), new Placed(rs.getString(1), rs.getLong(2), rs.getLong(3)));
                }
            }
        }
        return out;
    }

    /** The CTEs {@code ins} (the new HELD holds, a key already used skipped) and {@code ob} (their events). */
    private static final String INSERT_HOLDS = """
            ins AS (
                INSERT INTO holds (hold_id, tenant_id, item_id, bucket_no, region, qty, buyer_id, idempotency_key,
                                   request_fingerprint, state, created_at, expires_at, seat_nos)
                SELECT d.id, ?, ?, 0, d.region, d.qty, d.buyer, d.k, d.fp, 'HELD', now(),
                       now() + make_interval(secs => d.ttl / 1000.0), d.seats::int4[]
                  FROM unnest(?::uuid[], ?::text[], ?::int4[], ?::text[], ?::text[], ?::text[], ?::int8[], ?::text[])
                       AS d(id, region, qty, buyer, k, fp, ttl, seats)
                ON CONFLICT (tenant_id, item_id, idempotency_key) DO NOTHING
                RETURNING tenant_id, item_id, hold_id, qty, idempotency_key, created_at, expires_at
            ), ob AS (
                INSERT INTO outbox (tenant_id, item_id, kind, hold_id, qty)
                SELECT tenant_id, item_id, 'HELD', hold_id, qty FROM ins
            )""";

    /** Binds {@link #INSERT_HOLDS}'s ten parameters from {@code at}; returns the next index. */
    private static int bindHolds(Connection c, PreparedStatement ps, int at, String tenant, String item,
                                 List<NewHold> holds) throws SQLException {
        int n = holds.size();
        UUID[] id = new UUID[n];
        String[] region = new String[n];
        Integer[] qty = new Integer[n];
        String[] buyer = new String[n];
        String[] key = new String[n];
        String[] fp = new String[n];
        Long[] ttl = new Long[n];
        String[] seats = new String[n];
        for (int i = 0; i < n; i++) {
            NewHold h = holds.get(i);
            id[i] = h.holdId();
            region[i] = h.region();
            qty[i] = h.qty();
            buyer[i] = h.buyerId();
            key[i] = h.key();
            fp[i] = h.fingerprint();
            ttl[i] = h.ttlMs();
            StringBuilder sb = new StringBuilder("{");
            for (int k = 0; k < h.seatNos().length; k++) {
                sb.append(k == 0 ? "" : ",").append(h.seatNos()[k]);
            }
            seats[i] = sb.append('}').toString();
        }
        ps.setString(at, tenant);
        ps.setString(at + 1, item);
        ps.setArray(at + 2, c.createArrayOf("uuid", id));
        ps.setArray(at + 3, c.createArrayOf("text", region));
        ps.setArray(at + 4, c.createArrayOf("int4", qty));
        ps.setArray(at + 5, c.createArrayOf("text", buyer));
        ps.setArray(at + 6, c.createArrayOf("text", key));
        ps.setArray(at + 7, c.createArrayOf("text", fp));
        ps.setArray(at + 8, c.createArrayOf("int8", ttl));
        ps.setArray(at + 9, c.createArrayOf("text", seats));
        return at + 10;
    }

    /** What a batch written in one statement placed: its holds by key, and the database clock after it. */
    public record PlacedBatch(Map<String, Placed> holds, long dbNowMicros) {
    }

    /**
     * A batch of new holds alone, in ONE statement that is its own transaction (the caller runs it in
     * autocommit): the holds and their events inserted, their seats claimed, bucket 0's counters set
     * where they are still {@code expected}. If a key was already used, a seat was not free or the
     * counters were not as cached, {@code lastunit_require} raises SQL state
     * {@link #REFUSED} and nothing of it is written: the lane decides again, statement by statement,
     * which says what was off.
     *
     * <p>With {@code expected} (and {@code next}) null the counters move by the seats claimed (available down, held
     * up) whatever they are: for batches written side by side ({@code SeatWrites}), which commit in
     * any order. The claims stay the arbiter (a seat in no hold, on sale), and the bucket's CHECK
     * refuses a count below zero (SQL state 23514, nothing written).
     */
    public PlacedBatch placeInOneStatement(Connection c, String tenant, String item, List<NewHold> holds,
                                           int[] seatNos, UUID[] seatHolds, long[] expected, long[] next)
            throws SQLException {
        String sql = "WITH " + INSERT_HOLDS + """
                , cl AS (
                    UPDATE seats s SET hold_id = d.h FROM unnest(?::int4[], ?::uuid[]) AS d(n, h)
                     WHERE s.tenant_id = ? AND s.item_id = ? AND s.seat_no = ANY(?::int4[]) AND s.seat_no = d.n
                       AND s.hold_id IS NULL AND s.on_sale
                    RETURNING 1
                ), b AS (
                    %s
                    RETURNING 1
                )
                SELECT lastunit_require((SELECT count(*) FROM ins) = ? AND (SELECT count(*) FROM cl) = ?
                                        AND (SELECT count(*) FROM b) = 1,
                                        'seat batch refused: a key already used, a seat not free or stale counters'),
                       %s, array_agg(i.idempotency_key), array_agg(%s), array_agg(%s)
                  FROM ins i""".formatted(expected == null ? """
                    UPDATE buckets SET available = available - ?, held = held + ?
                     WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0""" : """
                    UPDATE buckets SET allotment = ?, available = ?, held = ?, sold = ?
                     WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0
                       AND allotment = ? AND available = ? AND held = ? AND sold = ?""",
                micros("clock_timestamp()"), micros("i.created_at"), micros("i.expires_at"));
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int at = bindHolds(c, ps, 1, tenant, item, holds);
            Array nos = c.createArrayOf("int4", boxed(seatNos));
            ps.setArray(at++, nos);
            ps.setArray(at++, c.createArrayOf("uuid", seatHolds));
            ps.setString(at++, tenant);
            ps.setString(at++, item);
            ps.setArray(at++, nos);
            if (expected == null) {
                ps.setLong(at++, seatNos.length);
                ps.setLong(at++, seatNos.length);
                ps.setString(at++, tenant);
                ps.setString(at++, item);
            } else {
                for (int i = 0; i < 4; i++) {
                    ps.setLong(at + i, next[i]);
                }
                at += 4;
                ps.setString(at++, tenant);
                ps.setString(at++, item);
                for (int i = 0; i < 4; i++) {
                    ps.setLong(at + i, expected[i]);
                }
                at += 4;
            }
            ps.setInt(at++, holds.size());
            ps.setInt(at, seatNos.length);
            Map<String, Placed> out = new HashMap<>();
            long dbNow;
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                dbNow = rs.getLong(2);
                String[] keys = (String[]) rs.getArray(3).getArray();
                Long[] created = (Long[]) rs.getArray(4).getArray();
                Long[] expires = (Long[]) rs.getArray(5).getArray();
                for (int i = 0; i < keys.length; i++) {
                    out.put(keys[i], new Placed(keys[i], created[i], expires[i]));
                }
            }
            CommitWarnings.requireReplicated(ps); // the statement's end was its commit
            return new PlacedBatch(out, dbNow);
        }
    }

    /** The SQL state of a one-statement batch the database refused (schema V4's lastunit_require). */
    public static final String REFUSED = "LU002";

    /** Units the buyers hold or bought of the item (limited items). */
    public Map<String, Long> usage(Connection c, String tenant, String item, String[] buyers) throws SQLException {
        Map<String, Long> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT buyer_id, qty FROM buyer_usage"
                + " WHERE tenant_id = ? AND item_id = ? AND buyer_id = ANY(?::text[])")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setArray(3, c.createArrayOf("text", buyers));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return out;
    }

    /**
     * Adds each buyer's delta (negative: units given back) to its usage: an upsert for the units
     * taken, an update for those given back (a row's CHECK is judged on the row an upsert would
     * insert, before its conflict is found, so a negative delta cannot go through one).
     */
    public void addUsage(Connection c, String tenant, String item, Map<String, Long> deltas) throws SQLException {
        List<String> up = new ArrayList<>();
        List<Long> upQty = new ArrayList<>();
        List<String> down = new ArrayList<>();
        List<Long> downQty = new ArrayList<>();
        for (Map.Entry<String, Long> e : deltas.entrySet()) {
            (e.getValue() > 0 ? up : down).add(e.getKey());
            (e.getValue() > 0 ? upQty : downQty).add(e.getValue());
        }
        if (!up.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO buyer_usage AS u (tenant_id, item_id, buyer_id, qty)
                    SELECT ?, ?, d.b, d.q FROM unnest(?::text[], ?::int8[]) AS d(b, q)
                    ON CONFLICT (tenant_id, item_id, buyer_id) DO UPDATE SET qty = u.qty + EXCLUDED.qty""")) {
                ps.setString(1, tenant);
                ps.setString(2, item);
                ps.setArray(3, c.createArrayOf("text", up.toArray()));
                ps.setArray(4, c.createArrayOf("int8", upQty.toArray()));
                ps.executeUpdate();
            }
        }
        if (!down.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement("""
                    UPDATE buyer_usage u SET qty = u.qty + d.q FROM unnest(?::text[], ?::int8[]) AS d(b, q)
                     WHERE u.tenant_id = ? AND u.item_id = ? AND u.buyer_id = d.b""")) {
                ps.setArray(1, c.createArrayOf("text", down.toArray()));
                ps.setArray(2, c.createArrayOf("int8", downQty.toArray()));
                ps.setString(3, tenant);
                ps.setString(4, item);
                int n = ps.executeUpdate();
                if (n != down.size()) {
                    throw new IllegalStateException("usage of " + (down.size() - n) + " buyers of " + tenant + "/"
                            + item + " to give back was not recorded");
                }
            }
        }
    }

    /**
     * Sets bucket 0's counters where they are still {@code expected} (allotment, available, held,
     * sold): the last statement of a seat batch. Answers the database clock (micros) after it, or -1
     * when the row was not as expected (the lane's view was stale).
     */
    public long setCounters(Connection c, String tenant, String item, long[] expected, long[] next) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE buckets SET allotment = ?, available = ?, held = ?, sold = ?
                 WHERE tenant_id = ? AND item_id = ? AND bucket_no = 0
                   AND allotment = ? AND available = ? AND held = ? AND sold = ?
                RETURNING %s""".formatted(micros("clock_timestamp()")))) {
            for (int i = 0; i < 4; i++) {
                ps.setLong(1 + i, next[i]);
                ps.setLong(7 + i, expected[i]);
            }
            ps.setString(5, tenant);
            ps.setString(6, item);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }

    /**
     * Every seat of the item (or of one section) with its state, in map order, as GetSeatMap answers
     * it: full (one SeatView per seat) or compact (one string per row). A seat whose hold is HELD past
     * its expiry by the database clock reads FREE. The caller checked that the item is SEATED.
     */
    public io.lastunit.api.inventory.v1.GetSeatMapResponse.Builder readMap(Connection c, String tenant, String item,
                                                                          String section, boolean compact)
            throws SQLException {
        var out = io.lastunit.api.inventory.v1.GetSeatMapResponse.newBuilder();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT s.seat_id, s.section_id, s.row_id, s.position, s.category, s.rank, s.aisle_after, s.on_sale,
                       CASE WHEN h.state = 'SOLD' THEN 'S'
                            WHEN h.state = 'HELD' AND h.expires_at > now() THEN 'H' ELSE '' END
                  FROM seats s LEFT JOIN holds h ON h.hold_id = s.hold_id
                 WHERE s.tenant_id = ? AND s.item_id = ? AND (?::text IS NULL OR s.section_id = ?::text)
                 ORDER BY min(s.seat_no) OVER (PARTITION BY s.section_id),
                          min(s.seat_no) OVER (PARTITION BY s.section_id, s.row_id), s.position""")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            ps.setString(3, section);
            ps.setString(4, section);
            ps.setFetchSize(10_000);
            try (ResultSet rs = ps.executeQuery()) {
                io.lastunit.api.inventory.v1.RowStates.Builder row = null;
                StringBuilder states = new StringBuilder();
                while (rs.next()) {
                    String seatId = rs.getString(1);
                    String sec = rs.getString(2);
                    String rowId = rs.getString(3);
                    boolean aisle = rs.getBoolean(7);
                    String h = rs.getString(9);
                    io.lastunit.api.inventory.v1.SeatState st = !rs.getBoolean(8)
                            ? io.lastunit.api.inventory.v1.SeatState.KILLED
                            : h.equals("S") ? io.lastunit.api.inventory.v1.SeatState.SEAT_SOLD
                            : h.equals("H") ? io.lastunit.api.inventory.v1.SeatState.SEAT_HELD
                            : io.lastunit.api.inventory.v1.SeatState.FREE;
                    switch (st) {
                        case FREE -> out.setFree(out.getFree() + 1);
                        case SEAT_HELD -> out.setHeld(out.getHeld() + 1);
                        case SEAT_SOLD -> out.setSold(out.getSold() + 1);
                        default -> out.setKilled(out.getKilled() + 1);
                    }
                    if (!compact) {
                        out.addSeats(io.lastunit.api.inventory.v1.SeatView.newBuilder().setSeatId(seatId)
                                .setSectionId(sec).setRowId(rowId).setOrder(rs.getInt(4)).setCategory(rs.getString(5))
                                .setRank(rs.getInt(6)).setAisleAfter(aisle).setState(st));
                        continue;
                    }
                    if (row == null || !row.getSectionId().equals(sec) || !row.getRowId().equals(rowId)) {
                        if (row != null) {
                            out.addRows(row.setStates(states.toString()));
                        }
                        row = io.lastunit.api.inventory.v1.RowStates.newBuilder().setSectionId(sec).setRowId(rowId);
                        states.setLength(0);
                    }
                    row.addSeatIds(seatId);
                    states.append(switch (st) {
                        case FREE -> '.';
                        case SEAT_HELD -> 'h';
                        case SEAT_SOLD -> 's';
                        default -> 'x';
                    });
                    if (aisle) {
                        states.append('|');
                    }
                }
                if (row != null) {
                    out.addRows(row.setStates(states.toString()));
                }
            }
        }
        return out;
    }

    /** The seat ids of a seated hold, in map order; empty for a counted hold. */
    public List<String> seatIdsOf(Connection c, UUID holdId) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT s.seat_id FROM holds h JOIN seats s ON s.tenant_id = h.tenant_id AND s.item_id = h.item_id
                                                       AND s.seat_no = ANY(h.seat_nos)
                 WHERE h.hold_id = ? ORDER BY array_position(h.seat_nos, s.seat_no)""")) {
            ps.setObject(1, holdId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    private static List<UUID> ids(Connection c, String sql, Binder binder) throws SQLException {
        List<UUID> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getObject(1, UUID.class));
                }
            }
        }
        return out;
    }

    private static Integer[] boxed(int[] a) {
        Integer[] out = new Integer[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[i];
        }
        return out;
    }
}
