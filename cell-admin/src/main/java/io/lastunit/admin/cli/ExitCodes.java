package io.lastunit.admin.cli;

/** The exit codes every {@code lastunit} command uses; scripts may rely on them. */
public final class ExitCodes {
    /** Done; nothing wrong found. */
    public static final int OK = 0;
    /** The command ran and found something wrong: a drift, an inexact sale, a failed call. */
    public static final int FAILED = 1;
    /** Bad options, or the request was refused (an unknown cell, a tenant that has items, ...). */
    public static final int USAGE = 2;
    /** ZooKeeper or a shard could not be reached, so the answer is incomplete. */
    public static final int UNREACHABLE = 3;

    private ExitCodes() {
    }
}
