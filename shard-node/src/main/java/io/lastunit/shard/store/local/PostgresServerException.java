package io.lastunit.shard.store.local;

import java.io.IOException;

/**
 * A {@link PostgresServer} operation failed. The message names the server, its port and data
 * directory, what was asked and what was found, and ends with the last lines of the server's log.
 */
public final class PostgresServerException extends IOException {
    private static final long serialVersionUID = 1L;

    PostgresServerException(String message, Throwable cause) {
        super(message, cause);
    }
}
