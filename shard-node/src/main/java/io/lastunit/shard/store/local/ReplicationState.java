package io.lastunit.shard.store.local;

/**
 * One row of a primary's {@code pg_stat_replication}: a standby (or a base backup's WAL stream)
 * connected to it, as the primary sees it. A value; thread-safe.
 *
 * @param applicationName the standby's {@code application_name}, the name {@code synchronous_standby_names} matches
 * @param state           {@code startup}, {@code catchup}, {@code streaming}, {@code backup} or {@code stopping}
 * @param syncState       {@code async}, {@code potential}, {@code sync} or {@code quorum}
 * @param flushLsn        the last WAL position the standby has written and flushed to its disk, or null
 */
public record ReplicationState(String applicationName, String state, String syncState, String flushLsn) {

    /** Whether the standby has caught up and receives WAL as it is written. */
    public boolean streaming() {
        return "streaming".equals(state);
    }

    /** Whether commits on the primary wait for this standby now ({@code sync}, or {@code quorum} under ANY). */
    public boolean synchronous() {
        return "sync".equals(syncState) || "quorum".equals(syncState);
    }
}
