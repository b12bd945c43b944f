package io.lastunit.bench.jmh;

import com.zaxxer.hikari.HikariDataSource;
import io.lastunit.common.HoldId;
import java.io.IOException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * The seat-hold design lastunit is measured against in {@link SeatBench} (issue 26): the textbook
 * {@code SELECT … FOR UPDATE SKIP LOCKED}, one transaction per request in plain JDBC through
 * HikariCP ({@code poolSize} connections, autocommit off, READ COMMITTED — {@link BaselineBench}'s
 * pool), on the same PostgreSQL server ({@code LASTUNIT_BENCH_JDBC_URL}), a fresh database per
 * trial, the same callers ({@link Caller}, JMH threads {@code -t 64} / {@code -t 256}; callers
 * beyond the pool wait for a connection, as in an application) and the same venue and supply as
 * {@link SeatBench}: events of 100,000 seats in 2,000 rows of 50, rank {@code row / 10}, one hot
 * event at a time, the next ones created ahead in the trial's setup ({@code INSERT … SELECT FROM
 * generate_series}, then {@code ANALYZE}; {@link SeatBench.Supply}), never during a measured call.
 *
 * <p><b>Schema</b> (its own, not the shard's):
 * <pre>
 * sl_seats  (event, seat_no, row_no, pos, rank, held_until timestamptz, hold_id uuid, buyer text,
 *            PRIMARY KEY (event, seat_no))
 *           + INDEX sl_seats_free (event, coalesce(held_until, '-infinity'), rank, seat_no)
 * sl_holds  (hold_id uuid PRIMARY KEY, event, buyer, idempotency_key, request_fingerprint, seat_nos int[],
 *            created_at, expires_at, UNIQUE (event, idempotency_key))
 * sl_outbox (id identity PRIMARY KEY, event, kind, hold_id, qty, created_at)
 * </pre>
 * A seat is free when {@code held_until IS NULL OR held_until < now()} — by the database clock, so
 * an expired hold is simply available, nothing sweeps it. The statements spell that predicate
 * {@code coalesce(held_until, '-infinity') < now()} (the same truth table) so that one btree range
 * of {@code sl_seats_free} serves it: free seats never held (or released) first, best rank and map
 * order, then expired ones. (Written with the OR, PostgreSQL can only seq-scan or bitmap-scan it,
 * and the scan from the front passes every held seat: O(seats held) per call.)
 *
 * <p><b>What each request writes</b>, in one transaction, committed durably before the call
 * returns: its seats' rows ({@code held_until = now() + 10 min}, {@code hold_id}, {@code buyer}),
 * one {@code sl_holds} row (a version-7 hold id, the buyer, the idempotency key, the request's
 * SHA-256 fingerprint computed as the engine computes it, the seat numbers, the expiry) and one
 * HELD {@code sl_outbox} row — what lastunit writes per hold (hold row, outbox row, seat rows),
 * less its bucket counter row and its holds table's extra indexes, which favours the baseline.
 *
 * <ul>
 *   <li>{@code any1}: the textbook statement, one round trip and the commit:
 *       {@code UPDATE sl_seats SET held_until = now() + ttl, … WHERE event = ? AND seat_no = (SELECT seat_no
 *       FROM sl_seats WHERE event = ? AND <free> ORDER BY <index order> LIMIT 1 FOR UPDATE SKIP LOCKED)},
 *       with the hold and outbox inserts as data-modifying CTEs of the same statement. No row: SOLD_OUT.</li>
 *   <li>{@code adjacent4} / {@code best2}: one statement per page of free seats ({@link #RUN}):
 *       the first {@code page} free seats in index order; a window-function query cuts them into
 *       runs (consecutive positions of one row) and each run into aligned windows of N seats (the
 *       first at the run's start, as lastunit's ADJACENT takes the first N of the earliest run),
 *       ordered by map order (adjacent4) or by the window's rank sum, then map order (best2 —
 *       without lastunit's rule against leaving an orphan seat, again favouring the baseline);
 *       then it tries the windows in that order, each with {@code SELECT … FOR UPDATE SKIP LOCKED}
 *       of its N seats, and takes the first where it locked all N (a window another request has
 *       locked yields fewer and the next is tried, inside the same statement: PostgreSQL evaluates
 *       the filter row by row under the LIMIT 1, so it stops at the first success); the update,
 *       the hold and the outbox insert are CTEs of that same statement. Locks on a window it could
 *       not complete stay until its commit (other requests skip those seats meanwhile). When no
 *       window of the page could be taken it asks for the next page (keyset after the page, twice
 *       as large, at most {@link #PAGE_MAX}; a full page's last row is left to the next page, so a
 *       run is never cut); when the last page had windows, all locked by requests in flight, it
 *       starts again from the front (their commits will have taken them: "retry"), at most
 *       {@link #STATEMENTS_MAX} statements a request; the last page without any window: SOLD_OUT.
 *       The page query relies on this venue: a row's seats have consecutive seat numbers and one
 *       rank.</li>
 *   <li>{@code soldout}: the {@code any1} statement on an event whose every seat is held (set in
 *       the trial's setup, then {@code VACUUM ANALYZE}): it finds no row; rolled back; SOLD_OUT.</li>
 * </ul>
 * Every call fails the run unless it reserved the seats asked for (SOLD_OUT for {@code soldout}).
 * After each iteration a {@code [seats-baseline]} line: calls, seats, statements per call, restarts
 * from the front, events sold out, supply stalls. At the end of a trial the holds, outbox rows and
 * seats naming a hold, which must agree.
 *
 * <p>What the comparison does not even out: both sides sell events from the first seat to the
 * last, but lastunit goes through several events a trial and the baseline through one or two, so
 * the baseline is measured mostly early in an event, where its searches are shortest (fewer dead
 * index entries of held seats; for {@code adjacent4}, fewer 2-seat leftovers at the row ends to
 * page past) — in the baseline's favour.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'SkipLockedBaseline' -p mode=any1 -wi 1 -w 3s -i 1 -r 5s -f 1 -t 64
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class SkipLockedBaseline {
    /** First page of free seats a run search reads (then doubled per page). */
    static final int PAGE_FIRST = 256;
    static final int PAGE_MAX = 4_096;
    /** Statements one adjacent4 / best2 request may run before it fails the run. */
    static final int STATEMENTS_MAX = 1_000;
    static final String FREE = "coalesce(held_until, '-infinity'::timestamptz) < now()"; // held_until IS NULL OR < now()
    static final String INDEX_ORDER = "coalesce(held_until, '-infinity'::timestamptz), rank, seat_no";

    /** What each call asks for: any1, adjacent4, best2 or soldout (SeatBench's modes). */
    @Param({"any1", "adjacent4", "best2", "soldout"})
    public String mode;

    /** Connections in the application's pool. */
    @Param({"32"})
    public int poolSize;

    /** Seats per second the trial's supply is sized for (0: the mode's default; {@link SeatBench#rateGuess}). */
    @Param({"0"})
    public int rateGuess;

    private static final String SCHEMA = """
            CREATE TABLE sl_seats (
                event      integer NOT NULL,
                seat_no    integer NOT NULL,
                row_no     integer NOT NULL,
                pos        integer NOT NULL,
                rank       integer NOT NULL,
                held_until timestamptz,
                hold_id    uuid,
                buyer      text,
                PRIMARY KEY (event, seat_no)
            );
            CREATE INDEX sl_seats_free ON sl_seats (event, (coalesce(held_until, '-infinity'::timestamptz)), rank, seat_no);
            CREATE TABLE sl_holds (
                hold_id             uuid        PRIMARY KEY,
                event               integer     NOT NULL,
                buyer               text        NOT NULL,
                idempotency_key     text        NOT NULL,
                request_fingerprint text        NOT NULL,
                seat_nos            integer[]   NOT NULL,
                created_at          timestamptz NOT NULL,
                expires_at          timestamptz NOT NULL,
                UNIQUE (event, idempotency_key)
            );
            CREATE TABLE sl_outbox (
                id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                event      integer     NOT NULL,
                kind       text        NOT NULL,
                hold_id    uuid        NOT NULL,
                qty        integer     NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )""";

    /** The hold row and its outbox row, from the seats updated by CTE {@code seat}: shared tail of both statements. */
    private static final String HOLD_AND_OUTBOX = """
            hold AS (
                INSERT INTO sl_holds (hold_id, event, buyer, idempotency_key, request_fingerprint, seat_nos, created_at,
                                      expires_at)
                SELECT ?, ?, ?, ?, ?, array_agg(seat_no ORDER BY seat_no), now(), max(held_until) FROM seat
                HAVING count(*) > 0
                ON CONFLICT (event, idempotency_key) DO NOTHING
                RETURNING hold_id, seat_nos
            ), ob AS (
                INSERT INTO sl_outbox (event, kind, hold_id, qty) SELECT ?, 'HELD', hold_id, cardinality(seat_nos) FROM hold
            )""";

    /** ANY 1, the textbook statement. Parameters: ttl ms, hold id, buyer, event, event; then the hold's. */
    static final String ANY1 = """
            WITH seat AS (
                UPDATE sl_seats SET held_until = now() + ? * interval '1 millisecond', hold_id = ?, buyer = ?
                 WHERE event = ? AND seat_no = (
                       SELECT seat_no FROM sl_seats
                        WHERE event = ? AND %s
                        ORDER BY %s
                        LIMIT 1
                          FOR UPDATE SKIP LOCKED)
                RETURNING seat_no, held_until
            ), %s
            SELECT seat_nos FROM hold""".formatted(FREE, INDEX_ORDER, HOLD_AND_OUTBOX);

    /**
     * N adjacent seats of one row from one page of free seats (see the class comment). Parameters:
     * event, cursor (held_until text, rank, seat_no), page size, page size, event, ttl ms, hold id,
     * buyer, event; then the hold's. Answers one row: the seats taken (or NULL), the windows the
     * page had, the page's rows, and the cursor after the page's kept rows.
     */
    static String run(int n, boolean best) {
        return """
                WITH page AS MATERIALIZED (
                    SELECT seat_no, row_no, pos, rank, coalesce(held_until, '-infinity'::timestamptz) AS c
                      FROM sl_seats
                     WHERE event = ? AND %1$s AND (%2$s) > (?::timestamptz, ?, ?)
                     ORDER BY %2$s
                     LIMIT ?
                ), info AS (
                    SELECT count(*) AS n, (array_agg(row_no ORDER BY c DESC, rank DESC, seat_no DESC))[1] AS last_row
                      FROM page
                ), kept AS MATERIALIZED (
                    SELECT p.* FROM page p, info WHERE info.n < ? OR p.row_no <> info.last_row
                ), runs AS (
                    SELECT seat_no, row_no, pos, rank, c, pos - row_number() OVER (PARTITION BY row_no ORDER BY pos) AS run
                      FROM kept
                ), placed AS (
                    SELECT seat_no, c, rank,
                           row_number() OVER (PARTITION BY row_no, run ORDER BY pos) - 1 AS k,
                           count(*) OVER (PARTITION BY row_no, run) AS len,
                           sum(rank) OVER (PARTITION BY row_no, run ORDER BY pos
                                           ROWS BETWEEN CURRENT ROW AND %3$d FOLLOWING) AS rank_sum
                      FROM runs
                ), windows AS MATERIALIZED (
                    SELECT seat_no AS start FROM placed WHERE k %% %4$d = 0 AND k + %4$d <= len ORDER BY %5$s
                ), pick AS MATERIALIZED (
                    SELECT w.start FROM windows w
                     WHERE (SELECT count(*) FROM (SELECT 1 FROM sl_seats s
                                                   WHERE s.event = ? AND s.seat_no >= w.start AND s.seat_no < w.start + %4$d
                                                     AND coalesce(s.held_until, '-infinity'::timestamptz) < now()
                                                     FOR UPDATE SKIP LOCKED) l) = %4$d
                     LIMIT 1
                ), seat AS (
                    UPDATE sl_seats SET held_until = now() + ? * interval '1 millisecond', hold_id = ?, buyer = ?
                     WHERE event = ? AND seat_no >= (SELECT start FROM pick) AND seat_no < (SELECT start FROM pick) + %4$d
                    RETURNING seat_no, held_until
                ), %6$s
                SELECT (SELECT seat_nos FROM hold), (SELECT count(*) FROM windows), info.n, k.c::text, k.rank, k.seat_no
                  FROM info LEFT JOIN LATERAL (SELECT c, rank, seat_no FROM kept ORDER BY c DESC, rank DESC, seat_no DESC
                                               LIMIT 1) k ON true""".formatted(FREE, INDEX_ORDER, n - 1, n,
                best ? "rank_sum, c, seat_no" : "c, rank, seat_no", HOLD_AND_OUTBOX);
    }

    private SeatBench.Ask ask;
    private String runSql;
    private BenchServer server;
    private BenchDatabase db;
    private HikariDataSource pool;
    private SeatBench.Supply supply;
    /** The soldout event. */
    private static final int SOLD_OUT_EVENT = 0;
    private final LongAdder calls = new LongAdder();
    private final LongAdder statements = new LongAdder();
    private final LongAdder restarts = new LongAdder();

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams trial) throws Exception {
        ask = SeatBench.Ask.of(mode);
        if (ask == SeatBench.Ask.SOLDOUT_COUNTED) {
            throw new IllegalArgumentException("mode=soldout-counted is SeatBench's; the baseline has no counted item");
        }
        runSql = switch (ask) {
            case ADJACENT4 -> run(4, false);
            case BEST2 -> run(2, true);
            default -> null;
        };
        try {
            server = BenchServer.start(BenchServer.SERVER);
            db = server.create("skiplocked_" + mode);
            pool = db.pool("skiplocked", poolSize);
            try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                for (String ddl : SCHEMA.split(";")) {
                    st.execute(ddl);
                }
                c.commit();
            }
            if (ask == SeatBench.Ask.SOLDOUT) {
                createEvents(new int[] {SOLD_OUT_EVENT});
                holdEverySeat(SOLD_OUT_EVENT);
            } else {
                supply = new SeatBench.Supply("SkipLockedBaseline " + mode, ask.perEvent, this::createEvents);
                supply.prepareTrial(trial, rateGuess > 0 ? rateGuess : ask.baselineGuess);
            }
        } catch (Exception | Error e) {
            tearDown();
            throw e;
        }
    }

    /** Events {@code ns}: 100,000 free seats each, the venue of {@link SeatBench#venue()}; then ANALYZE. */
    private void createEvents(int[] ns) throws SQLException {
        try (Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     INSERT INTO sl_seats (event, seat_no, row_no, pos, rank)
                     SELECT ?, g, g / ?, g % ?, (g / ?) / ? FROM generate_series(0, ? - 1) g""")) {
            for (int n : ns) {
                ps.setInt(1, n);
                ps.setInt(2, SeatBench.ROW_SEATS);
                ps.setInt(3, SeatBench.ROW_SEATS);
                ps.setInt(4, SeatBench.ROW_SEATS);
                ps.setInt(5, SeatBench.ROWS_PER_RANK);
                ps.setInt(6, SeatBench.SEATS);
                if (ps.executeUpdate() != SeatBench.SEATS) {
                    throw new IllegalStateException("event " + n + " did not get " + SeatBench.SEATS + " seats");
                }
            }
            c.commit();
        }
        maintenance("ANALYZE sl_seats");
    }

    /** Every seat of the event held for an hour, then VACUUM ANALYZE (the index then holds no dead free entries). */
    private void holdEverySeat(int event) throws SQLException {
        try (Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement("UPDATE sl_seats SET held_until = now() + interval '1 hour',"
                     + " hold_id = gen_random_uuid(), buyer = 'fill' WHERE event = ?")) {
            ps.setInt(1, event);
            ps.executeUpdate();
            c.commit();
        }
        maintenance("VACUUM ANALYZE sl_seats");
    }

    /** A statement that cannot run in a transaction block, on a connection of its own. */
    private void maintenance(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
             Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    @Setup(Level.Iteration)
    public void beginIteration(IterationParams iteration) throws Exception {
        if (supply != null) {
            supply.prepare(iteration);
        }
        calls.reset();
        statements.reset();
        restarts.reset();
    }

    @Benchmark
    public int reserve(Caller caller) throws Exception {
        if (ask == SeatBench.Ask.SOLDOUT) {
            caller.next();
            int[] seats = any1(SOLD_OUT_EVENT, caller);
            if (seats != null) {
                throw new IllegalStateException("expected SOLD_OUT, got seats " + java.util.Arrays.toString(seats));
            }
            calls.increment();
            return 0;
        }
        int event = supply.current();
        for (int hop = 0; ; hop++) {
            caller.next();
            int[] seats = ask == SeatBench.Ask.ANY1 ? any1(event, caller) : run(event, caller);
            if (seats != null) {
                if (seats.length != ask.seats) {
                    throw new IllegalStateException("expected " + ask.seats + " seats, got "
                            + java.util.Arrays.toString(seats));
                }
                supply.taken(seats.length);
                calls.increment();
                return seats[0];
            }
            if (hop >= SeatBench.HOPS_MAX) {
                throw new IllegalStateException("expected RESERVED, got SOLD_OUT from event " + event + " (hop " + hop + ")");
            }
            event = supply.soldOut(event);
        }
    }

    /** One request of ANY 1 in its transaction: the seats taken, or null (SOLD_OUT, rolled back). */
    private int[] any1(int event, Caller caller) throws SQLException {
        String item = SeatBench.eventId(event);
        UUID holdId = HoldId.create(BenchItems.TENANT, item, BenchItems.REGION, 0, System.currentTimeMillis()).uuid();
        String fingerprint = BenchItems.fingerprint(item, 1, caller.buyer(), BenchItems.REGION, 0);
        try (Connection c = pool.getConnection()) {
            try {
                int[] seats;
                try (PreparedStatement ps = c.prepareStatement(ANY1)) {
                    int i = 1;
                    ps.setLong(i++, BenchItems.HOLD_TTL_MS);
                    ps.setObject(i++, holdId);
                    ps.setString(i++, caller.buyer());
                    ps.setInt(i++, event);
                    ps.setInt(i++, event);
                    bindHold(ps, i, holdId, event, caller, fingerprint);
                    seats = seats(ps, caller);
                }
                statements.increment();
                if (seats == null) {
                    c.rollback();
                    return null;
                }
                c.commit();
                return seats;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /** One request of adjacent4 / best2 in its transaction: the seats taken, or null (SOLD_OUT, rolled back). */
    private int[] run(int event, Caller caller) throws SQLException {
        String item = SeatBench.eventId(event);
        UUID holdId = HoldId.create(BenchItems.TENANT, item, BenchItems.REGION, 0, System.currentTimeMillis()).uuid();
        String fingerprint = BenchItems.fingerprint(item, ask.seats, caller.buyer(), BenchItems.REGION, 0);
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(runSql)) {
            try {
                String cursorC = "-infinity";
                int cursorRank = -1;
                int cursorSeat = -1;
                int page = PAGE_FIRST;
                for (int n = 1; ; n++) {
                    if (n > STATEMENTS_MAX) {
                        throw new IllegalStateException("no " + ask + " seats of event " + event + " after "
                                + STATEMENTS_MAX + " statements");
                    }
                    int i = 1;
                    ps.setInt(i++, event);
                    ps.setString(i++, cursorC);
                    ps.setInt(i++, cursorRank);
                    ps.setInt(i++, cursorSeat);
                    ps.setInt(i++, page);
                    ps.setInt(i++, page);
                    ps.setInt(i++, event);
                    ps.setLong(i++, BenchItems.HOLD_TTL_MS);
                    ps.setObject(i++, holdId);
                    ps.setString(i++, caller.buyer());
                    ps.setInt(i++, event);
                    bindHold(ps, i, holdId, event, caller, fingerprint);
                    statements.increment();
                    int[] seats;
                    long windows;
                    long rows;
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        seats = ints(rs.getArray(1));
                        windows = rs.getLong(2);
                        rows = rs.getLong(3);
                        if (seats == null && rows == page) {
                            cursorC = rs.getString(4);
                            cursorRank = rs.getInt(5);
                            cursorSeat = rs.getInt(6);
                            if (cursorC == null) {
                                throw new IllegalStateException("a full page of " + page + " seats in one row");
                            }
                        }
                    }
                    if (seats != null) {
                        c.commit();
                        return seats;
                    }
                    if (rows == page) { // more free seats after this page
                        page = Math.min(page * 2, PAGE_MAX);
                        continue;
                    }
                    if (windows == 0) { // the last page, and no window anywhere
                        c.rollback();
                        return null;
                    }
                    // Windows left, all locked by requests in flight: from the front again, in a new
                    // transaction (no lock of a window it could not complete is kept meanwhile).
                    c.rollback();
                    restarts.increment();
                    cursorC = "-infinity";
                    cursorRank = -1;
                    cursorSeat = -1;
                    page = PAGE_FIRST;
                }
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    private static void bindHold(PreparedStatement ps, int i, UUID holdId, int event, Caller caller, String fingerprint)
            throws SQLException {
        ps.setObject(i++, holdId);
        ps.setInt(i++, event);
        ps.setString(i++, caller.buyer());
        ps.setString(i++, caller.key());
        ps.setString(i++, fingerprint);
        ps.setInt(i, event);
    }

    /** The seats of the hold the statement inserted, null if it placed none. */
    private static int[] seats(PreparedStatement ps, Caller caller) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
                return null;
            }
            int[] seats = ints(rs.getArray(1));
            if (seats == null) {
                throw new SQLException("idempotency key " + caller.key() + " is already used; the benchmark never"
                        + " reuses keys");
            }
            return seats;
        }
    }

    private static int[] ints(Array a) throws SQLException {
        if (a == null) {
            return null;
        }
        Integer[] boxed = (Integer[]) a.getArray();
        int[] out = new int[boxed.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = boxed[i];
        }
        return out;
    }

    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        long n = calls.sum();
        String supplyLine = supply == null ? "" : " " + supply.finish();
        System.out.printf(Locale.ROOT, "%n[seats-baseline] phase=%s mode=%s calls=%d statements_per_call=%.2f"
                        + " restarts=%d%s%n", iteration.getType() == IterationType.WARMUP ? "warmup" : "measurement", mode,
                n, n == 0 ? 0.0 : (double) statements.sum() / n, restarts.sum(), supplyLine);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException, SQLException {
        try {
            if (pool != null) {
                try (Connection c = pool.getConnection();
                     PreparedStatement ps = c.prepareStatement("""
                             SELECT (SELECT count(*) FROM sl_holds), (SELECT count(*) FROM sl_outbox),
                                    (SELECT coalesce(sum(cardinality(seat_nos)), 0) FROM sl_holds),
                                    (SELECT count(*) FROM sl_seats s JOIN sl_holds h ON h.hold_id = s.hold_id),
                                    (SELECT count(DISTINCT event) FROM sl_seats)""");
                     ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    boolean ok = rs.getLong(1) == rs.getLong(2) && rs.getLong(3) == rs.getLong(4);
                    System.out.printf("%n[SkipLockedBaseline mode=%s poolSize=%d] holds=%d outbox=%d seats listed=%d"
                                    + " seats naming a hold=%d events=%d%s%n", mode, poolSize, rs.getLong(1), rs.getLong(2),
                            rs.getLong(3), rs.getLong(4), rs.getLong(5), ok ? "" : " MISMATCH");
                    c.rollback();
                }
            }
        } finally {
            pool = null;
            SeatBench.dropTables(db);
            BenchDatabase d = db;
            BenchServer s = server;
            db = null;
            server = null;
            BenchServer.close(d, s);
        }
    }
}
