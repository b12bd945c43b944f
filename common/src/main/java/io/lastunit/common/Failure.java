package io.lastunit.common;

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
