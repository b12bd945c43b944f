package io.lastunit.shard.store;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether the shard's database can acknowledge a commit now, from what the primary says about its
 * standbys: pure, apart from the query that feeds it ({@link StandbyWatch}).
 *
 * <p>A commit waits for its synchronous standbys when {@code synchronous_standby_names} is set and
 * {@code synchronous_commit} is {@code on}, {@code remote_write} or {@code remote_apply}; it waits
 * for {@code FIRST n} or {@code ANY n} of them (a plain list, or one name, is {@code FIRST 1}). The
 * primary lists the standbys it counts as {@code sync} (FIRST) or {@code quorum} (ANY) in
 * {@code pg_stat_replication.sync_state}; a role without {@code pg_read_all_stats} sees those
 * columns as NULL, and then nothing can be told.
 */
public final class StandbyRule {
    private StandbyRule() {
    }

    /** What the rule concluded. */
    public enum Verdict {
        /** Commits do not wait for a standby (none named, or {@code synchronous_commit} local/off). */
        NOT_REQUIRED,
        /** As many synchronous standbys are connected as a commit waits for. */
        CONNECTED,
        /** Fewer synchronous standbys are connected than a commit waits for: a commit would hang. */
        MISSING,
        /** The role may not see the standbys' state (grant it {@code pg_monitor}): writes go on as they would. */
        CANNOT_TELL
    }

    /** {@code [FIRST|ANY] n ( … )}: the number a commit waits for. */
    private static final Pattern COUNTED = Pattern.compile("^\\s*(?:(first|any)\\s+)?(\\d+)\\s*\\(.*\\)\\s*$",
            Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

    /**
     * How many standbys a commit waits for under {@code synchronous_standby_names}: 0 when it is
     * empty, {@code n} for {@code [FIRST|ANY] n (…)}, 1 for a list or a single name.
     */
    public static int required(String standbyNames) {
        if (standbyNames == null || standbyNames.isBlank()) {
            return 0;
        }
        Matcher m = COUNTED.matcher(standbyNames);
        if (m.matches()) {
            return Integer.parseInt(m.group(2));
        }
        return 1;
    }

    /**
     * @param standbyNames      the primary's {@code synchronous_standby_names}
     * @param synchronousCommit the writing sessions' {@code synchronous_commit}
     * @param synchronous       standbys listed as {@code sync} or {@code quorum}
     * @param hidden            standbys whose {@code sync_state} this role cannot see
     */
    public static Verdict verdict(String standbyNames, String synchronousCommit, int synchronous, int hidden) {
        if (synchronous < 0 || hidden < 0) {
            throw new IllegalArgumentException("negative standby counts: " + synchronous + ", " + hidden);
        }
        int required = required(standbyNames);
        String commit = synchronousCommit == null ? "on" : synchronousCommit.trim().toLowerCase(Locale.ROOT);
        if (required == 0 || commit.equals("local") || commit.equals("off")) {
            return Verdict.NOT_REQUIRED;
        }
        if (synchronous >= required) {
            return Verdict.CONNECTED;
        }
        return hidden > 0 ? Verdict.CANNOT_TELL : Verdict.MISSING;
    }
}
