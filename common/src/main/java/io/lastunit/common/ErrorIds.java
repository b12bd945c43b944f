package io.lastunit.common;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Error ids tie what a client is told about an unexpected failure to the one log line that holds
 * its detail. The client gets what failed and an id of {@value #LENGTH} hex digits, in the
 * message ({@code (error_id=3f9a0c1d2b4e5f60)}) and in {@code ErrorInfo.metadata["error_id"]}.
 * The exception's own text (SQL, key values, the stack) goes only to this class's log, at ERROR,
 * under the same id ({@code error_id=3f9a0c1d2b4e5f60 …}), so an operator finds the detail by the
 * id a client reports, and no client ever reads PostgreSQL's text.
 *
 * <p>Two uses, each one call where the failure is caught:
 * <ul>
 *   <li>PostgreSQL failed and the answer is UNAVAILABLE / STORE_UNAVAILABLE (retry with the same
 *       key): {@link Failure#storeUnavailable(String, SQLException, Duration)}, for example
 *       <pre>{@code
 * } catch (SQLException e) {
 *     op.future().completeExceptionally(Failure.storeUnavailable(
 *             "Restock outcome unknown; retry with the same restock_id", e, retryAfter()));
 * }}</pre>
 *       The client reads {@code Restock outcome unknown; retry with the same restock_id
 *       (error_id=…)}; the log line adds the SQL state and PostgreSQL's message.</li>
 *   <li>Anything else unexpected (neither a {@link Failure} nor a gRPC status): nothing to do.
 *       {@link GrpcErrors#toStatus(Throwable)} answers INTERNAL / INTERNAL_ERROR this way.</li>
 * </ul>
 *
 * <p>An exception is logged once. Mapped again (one SQLException failing every operation of a
 * batch, or every entry of a ReserveBatch), it keeps the id it got first and is not logged again:
 * the id rides on it as a suppressed {@link Tag}. An exception that does not record suppressed
 * exceptions gets a new id and a new log line each time.
 *
 * <p>Ids are 64 bits of {@code ThreadLocalRandom}: an id only names a log line and grants
 * nothing, so it needs to be unique, not unguessable. Thread-safe.
 */
public final class ErrorIds {
    private static final Logger log = LoggerFactory.getLogger(ErrorIds.class);

    /** The {@code ErrorInfo.metadata} key of the id. */
    public static final String METADATA_KEY = "error_id";
    /** Hex digits in an id. */
    public static final int LENGTH = 16;
    /** Chained SQLExceptions ({@link SQLException#getNextException()}) whose messages are logged. */
    static final int NEXT_EXCEPTIONS_LOGGED_MAX = 8;

    private ErrorIds() {
    }

    /** A new id: {@value #LENGTH} lower-case hex digits. */
    public static String next() {
        String hex = Long.toHexString(ThreadLocalRandom.current().nextLong());
        return "0".repeat(LENGTH - hex.length()) + hex;
    }

    /** The id {@code t} was given when it was first logged, or null. */
    static String idOf(Throwable t) {
        for (Throwable s : t.getSuppressed()) {
            if (s instanceof Tag tag) {
                return tag.id;
            }
        }
        return null;
    }

    /** An exception's id, and whether it is new (so the caller logs it). */
    private record Id(String value, boolean isNew) {
    }

    /** The id of {@code cause}: the one it got first, or a new one, which it carries from now on. */
    private static Id idFor(Throwable cause) {
        String first = idOf(cause);
        if (first != null) {
            return new Id(first, false);
        }
        String id = next();
        cause.addSuppressed(new Tag(id));
        return new Id(id, true);
    }

    /** See {@link Failure#storeUnavailable(String, SQLException, Duration)}. */
    static Failure storeUnavailable(String what, SQLException cause, Duration retryAfter) {
        return storeUnavailable(what, cause, retryAfter, null, null);
    }

    /**
     * As {@link #storeUnavailable(String, SQLException, Duration)} for a failure of one item's
     * operation: its line carries {@code tenant} and {@code item} as key-value pairs (either may be
     * null: not logged).
     */
    static Failure storeUnavailable(String what, SQLException cause, Duration retryAfter, String tenant, String item) {
        Id id = idFor(cause);
        if (id.isNew()) {
            org.slf4j.spi.LoggingEventBuilder line = log.atError();
            if (tenant != null) {
                line = line.addKeyValue("tenant", tenant);
            }
            if (item != null) {
                line = line.addKeyValue("item", item);
            }
            line.setCause(cause).log("error_id={} {}: SQLState {}: {}{}", id.value(), what, cause.getSQLState(),
                    cause.getMessage(), nextExceptions(cause));
        }
        return Failure.withErrorId(Reason.STORE_UNAVAILABLE, what + " (error_id=" + id.value() + ")", id.value(),
                retryAfter);
    }

    /** See {@link Failure#logged(Reason, String, Throwable, Duration)}. */
    static Failure logged(Reason reason, String what, Throwable cause, Duration retryAfter) {
        Id id = idFor(cause);
        if (id.isNew()) {
            log.error("error_id={} {}: {}", id.value(), what, cause.toString(), cause);
        }
        return Failure.withErrorId(reason, what + " (error_id=" + id.value() + ")", id.value(), retryAfter);
    }

    /** INTERNAL / INTERNAL_ERROR for an unexpected {@code cause}, logged with its stack under its id. */
    static Failure internalError(Throwable cause) {
        Id id = idFor(cause);
        if (id.isNew()) {
            log.error("error_id={} unexpected failure: {}", id.value(), cause.toString(), cause);
        }
        return Failure.withErrorId(Reason.INTERNAL_ERROR, "unexpected server error (error_id=" + id.value()
                + "); its detail is logged under this id", id.value(), null);
    }

    /** The messages of the exceptions chained to a batch's, which its stack trace does not show. */
    private static String nextExceptions(SQLException e) {
        StringBuilder sb = new StringBuilder();
        SQLException next = e.getNextException();
        for (int n = 0; next != null && n < NEXT_EXCEPTIONS_LOGGED_MAX; n++, next = next.getNextException()) {
            sb.append("; next: SQLState ").append(next.getSQLState()).append(": ").append(next.getMessage());
        }
        return sb.toString();
    }

    /** The id an exception was logged under, attached to it as a suppressed exception. */
    static final class Tag extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String id;

        Tag(String id) {
            super(METADATA_KEY + "=" + id, null, false, false);
            this.id = id;
        }
    }
}
