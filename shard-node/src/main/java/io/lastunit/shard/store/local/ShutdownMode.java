package io.lastunit.shard.store.local;

import java.util.Locale;

/** How {@link PostgresServer#stop} shuts a server down: pg_ctl's {@code -m} modes. */
public enum ShutdownMode {
    /** Waits for every client to disconnect, then checkpoints: a pooled client holds it up to the stop bound. */
    SMART,
    /** Disconnects clients (rolling back what they had open), checkpoints and exits: a clean shutdown. */
    FAST,
    /**
     * Kills the server's processes without a checkpoint: the next start runs crash recovery from the
     * WAL, as after a crash of PostgreSQL (not of the machine).
     */
    IMMEDIATE;

    /** The name pg_ctl takes after {@code -m}. */
    String pgCtlName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
