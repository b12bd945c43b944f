package io.lastunit.bench.jmh;

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.infra.IterationParams;

/**
 * How long one small durable commit takes, alone: one connection updates one row and commits, in
 * a loop (run it with {@code -t 1}). On {@code database=pair-sync} beside {@code pair-local}
 * ({@link BenchServer}) the difference is the round trip to the standby's flush that every
 * commit on a synchronous pair pays; on {@code pair-local} alone it is the primary's own WAL flush
 * (fdatasync) and the statement. Nothing else in this JVM runs.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar 'CommitBench' -p database=pair-sync,pair-local -t 1 -wi 1 -w 3s -i 2 -r 5s -f 1
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class CommitBench {

    /** Where the trial's database is: "server", "pair-sync" or "pair-local" ({@link BenchServer}). */
    @Param({BenchServer.SERVER})
    public String database;

    private BenchServer server;
    private BenchDatabase db;
    private Connection connection;
    private PreparedStatement update;

    @Setup(Level.Trial)
    public void setUp() throws IOException, SQLException {
        try {
            server = BenchServer.start(database);
            db = server.create("commit");
            connection = DriverManager.getConnection(db.url(), db.user(), db.password());
            try (Statement st = connection.createStatement()) {
                st.execute("CREATE TABLE commit_probe (id int PRIMARY KEY, n bigint NOT NULL)");
                st.execute("INSERT INTO commit_probe VALUES (1, 0)");
            }
            connection.setAutoCommit(false);
            update = connection.prepareStatement("UPDATE commit_probe SET n = n + 1 WHERE id = 1");
        } catch (IOException | SQLException | RuntimeException | Error e) {
            tearDown();
            throw e;
        }
    }

    /** One transaction: one row updated, committed (a WAL flush, and on pair-sync the standby's). */
    @Benchmark
    public int commit() throws SQLException {
        int n = update.executeUpdate();
        connection.commit();
        return n;
    }

    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        server.printReplication(iteration.getType().name().toLowerCase(Locale.ROOT));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException, SQLException {
        try {
            if (connection != null) {
                connection.close();
                connection = null;
            }
        } finally {
            BenchDatabase d = db;
            BenchServer s = server;
            db = null;
            server = null;
            BenchServer.close(d, s);
        }
    }
}
