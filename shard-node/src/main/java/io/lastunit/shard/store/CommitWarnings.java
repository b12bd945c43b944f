package io.lastunit.shard.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.Locale;

/**
 * Turns a commit that PostgreSQL answered "committed locally, maybe not replicated" into an
 * unknown outcome. When a commit's wait for the synchronous standby is cancelled (a
 * {@code pg_cancel_backend}, a statement timeout, a terminated session), the server ends the wait
 * with a WARNING — {@code canceling wait for synchronous replication ...; The transaction has
 * already committed locally, but might not have been replicated to the standby} — and the commit
 * returns as if it had succeeded. Acknowledging it would let a failover lose a sale the client was
 * told about, so the commit paths ask here after every commit and fail it as an unknown outcome
 * instead (the client retries with the same key). Stateless.
 *
 * <p>Hazard: the match is on the message text, in English ({@code lc_messages} of the server; a
 * server that speaks another language is not recognised). No statement of ours sets a statement
 * timeout on a write connection or cancels one ({@link ShardPools}), so this fires only on an
 * operator's cancel.
 */
public final class CommitWarnings {
    /** The SQL state the refused commit carries: class 08 (connection exception), outcome unknown. */
    public static final String NOT_REPLICATED = "08LU1";
    private static final String MARK = "synchronous replication";

    private CommitWarnings() {
    }

    /** After {@code c.commit()}: throws if the server warned that the commit may not be replicated. */
    public static void requireReplicated(Connection c) throws SQLException {
        SQLWarning w = c.getWarnings();
        if (w != null) {
            c.clearWarnings();
            refuseIfCancelled(w);
        }
    }

    /** After an autocommit statement: the same for the warnings on the statement. */
    public static void requireReplicated(Statement s) throws SQLException {
        SQLWarning w = s.getWarnings();
        if (w != null) {
            s.clearWarnings();
            refuseIfCancelled(w);
        }
    }

    private static void refuseIfCancelled(SQLWarning first) throws SQLException {
        for (SQLWarning w = first; w != null; w = w.getNextWarning()) {
            String m = w.getMessage();
            if (m != null && m.toLowerCase(Locale.ROOT).contains(MARK)) {
                throw new SQLException("the commit's wait for the synchronous standby was cancelled; it is committed"
                        + " on the primary but may not be on the standby: outcome unknown (" + m + ")", NOT_REPLICATED, w);
            }
        }
    }
}
