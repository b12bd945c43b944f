package io.lastunit.testkit.faults;

/**
 * A signal could not be sent to a process, or the process did not reach the state the signal
 * should have put it in. Carries the pid, the command run and what it answered, so the failure
 * says whether the process was gone, not ours, or just slow.
 */
public final class ProcessSignalException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Exit code reported when the command never ran to completion (it timed out or could not start). */
    public static final int NO_EXIT_CODE = -1;

    private final long pid;
    private final String command;
    private final int exitCode;
    private final String stderr;

    ProcessSignalException(String message, long pid, String command, int exitCode, String stderr, Throwable cause) {
        super(message + ": pid=" + pid + ", command='" + command + "', exitCode=" + exitCode + ", stderr='"
                + stderr.strip() + "'", cause);
        this.pid = pid;
        this.command = command;
        this.exitCode = exitCode;
        this.stderr = stderr;
    }

    public long pid() {
        return pid;
    }

    public String command() {
        return command;
    }

    /** The command's exit code, or {@link #NO_EXIT_CODE}. */
    public int exitCode() {
        return exitCode;
    }

    public String stderr() {
        return stderr;
    }
}
