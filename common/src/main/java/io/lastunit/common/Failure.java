package io.lastunit.common;

import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A refused request: a {@link Reason}, a message that says what was asked and what was
 * found, and metadata for {@code ErrorInfo} (for example {@code field}, {@code state}).
 * Thrown or used to complete futures exceptionally; {@link GrpcErrors} turns it into a
 * status. Immutable; no stack trace (these are answers, not bugs).
 */
public final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Reason reason;
    private final Map<String, String> metadata;
    private final Duration retryAfter;

    private Failure(Reason reason, String message, Map<String, String> metadata, Duration retryAfter) {
        super(message, null, false, false);
        this.reason = reason;
        this.metadata = Map.copyOf(metadata);
        this.retryAfter = retryAfter;
    }

    public static Failure of(Reason reason, String message) {
        return new Failure(reason, message, Map.of(), null);
    }

    public static Failure of(Reason reason, String message, Map<String, String> metadata) {
        return new Failure(reason, message, metadata, null);
    }

    /** A refusal that asks the caller to retry after {@code retryAfter}. */
    public static Failure retryable(Reason reason, String message, Duration retryAfter) {
        return new Failure(reason, message, Map.of(), retryAfter);
    }

    /**
     * UNAVAILABLE / STORE_UNAVAILABLE for a failure of PostgreSQL: the client is told {@code what}
     * failed and an error id, never the exception's text; the id, the SQL state and PostgreSQL's
     * message go to the log at ERROR, with the stack, once per exception ({@link ErrorIds}).
     *
     * @param what       what failed, for the client: the operation and what the caller should do,
     *                   e.g. {@code "CreateItem failed"} or {@code "Restock outcome unknown; retry
     *                   with the same restock_id"}. Never the exception's message
     * @param cause      what PostgreSQL (or the driver) threw
     * @param retryAfter the retry hint
     */
    public static Failure storeUnavailable(String what, SQLException cause, Duration retryAfter) {
        return ErrorIds.storeUnavailable(what, cause, retryAfter);
    }

    /**
     * As {@link #storeUnavailable(String, SQLException, Duration)} for one item's operation: the
     * log line carries the tenant and the item as key-value pairs.
     */
    public static Failure storeUnavailable(String what, SQLException cause, Duration retryAfter, String tenant,
                                           String item) {
        return ErrorIds.storeUnavailable(what, cause, retryAfter, tenant, item);
    }

    /**
     * {@code reason} for an unexpected {@code cause} that is not PostgreSQL's (a broken invariant,
     * say): the client is told {@code what} and an error id; the cause's text, which may name other
     * tenants' items, goes only to the log at ERROR under that id, once per exception
     * ({@link ErrorIds}). {@code retryAfter} may be null.
     */
    public static Failure logged(Reason reason, String what, Throwable cause, Duration retryAfter) {
        return ErrorIds.logged(reason, what, cause, retryAfter);
    }

    /** A failure whose detail was logged under {@code errorId} ({@link ErrorIds}). */
    static Failure withErrorId(Reason reason, String message, String errorId, Duration retryAfter) {
        return new Failure(reason, message, Map.of(ErrorIds.METADATA_KEY, errorId), retryAfter);
    }

    /** INVALID_ARGUMENT naming {@code field}. */
    public static Failure invalid(String field, String message) {
        Map<String, String> md = new LinkedHashMap<>();
        md.put("field", field);
        return new Failure(Reason.INVALID_FIELD, field + ": " + message, md, null);
    }

    public Reason reason() {
        return reason;
    }

    public Map<String, String> metadata() {
        return metadata;
    }

    /** The retry hint, or null when the caller should not retry this call as is. */
    public Duration retryAfter() {
        return retryAfter;
    }
}
