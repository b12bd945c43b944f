package io.lastunit.admin.cli;

/**
 * An expected failure of a command: its message is printed as {@code error: <message>}, without a
 * stack trace, and the command exits with {@link #exitCode()}.
 */
public final class CliError extends RuntimeException {
    private final int exitCode;

    public CliError(int exitCode, String message) {
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    public static CliError usage(String message) {
        return new CliError(ExitCodes.USAGE, message);
    }

    public static CliError unreachable(String message) {
        return new CliError(ExitCodes.UNREACHABLE, message);
    }

    public static CliError failed(String message) {
        return new CliError(ExitCodes.FAILED, message);
    }

    public int exitCode() {
        return exitCode;
    }
}
