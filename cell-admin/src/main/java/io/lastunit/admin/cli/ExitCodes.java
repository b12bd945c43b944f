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
    /**
     * Stopped by Ctrl-C (SIGINT), after the shutdown hook stopped everything the command had
     * started. The JVM sets it (128 + the signal's number); the commands never return it.
     */
    public static final int STOPPED_BY_SIGINT = 130;
    /** Stopped by SIGTERM, after a clean stop, as for {@link #STOPPED_BY_SIGINT}. */
    public static final int STOPPED_BY_SIGTERM = 143;

    private ExitCodes() {
    }
}
