package io.lastunit.shard.store.local;

import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One run of an external program (initdb, pg_ctl, pg_basebackup, a probe) to its end within a
 * bound. Its output, stdout and stderr together, is appended to a file, so a server's command
 * log keeps every run; the part this run wrote comes back in the {@link Result}. Standard input is
 * {@code /dev/null}: nothing may prompt.
 *
 * <p>Stateless, thread-safe; two runs appending to one file at once interleave their output.
 * Hazard: a program still running at its bound is killed (SIGKILL through the handle of the process
 * this JVM started, never by name); a process it started and left behind (pg_ctl's postmaster is
 * meant to be one) is not touched.
 */
final class BoundedProcess {
    /** How long a killed program gets to be gone before the failure is reported anyway. */
    static final Duration KILL_WAIT = Duration.ofSeconds(5);

    private BoundedProcess() {
    }

    /** How a run ended. */
    record Result(List<String> command, int exitCode, String output) {
        boolean succeeded() {
            return exitCode == 0;
        }

        /** {@code `cmd` exited with N: output}, for error messages. */
        String describe() {
            String out = output.strip();
            return "`" + String.join(" ", command) + "` exited with " + exitCode + (out.isEmpty() ? "" : ": " + out);
        }
    }

    /**
     * Runs {@code command}, appending its output to {@code outputFile}, and waits at most {@code wait}.
     *
     * @throws IOException when it cannot start, or when it did not end within {@code wait} (then it is killed)
     */
    static Result run(List<String> command, Path outputFile, Duration wait) throws IOException {
        long before = FileTail.size(outputFile);
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(Redirect.appendTo(outputFile.toFile()))
                .redirectInput(Redirect.from(new File("/dev/null")))
                .start();
        try {
            if (!process.waitFor(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                process.destroyForcibly();
                process.waitFor(KILL_WAIT.toNanos(), TimeUnit.NANOSECONDS);
                throw new IOException("`" + String.join(" ", command) + "` did not end within " + wait
                        + " and was killed; its output: " + FileTail.since(outputFile, before).strip());
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for `" + String.join(" ", command) + "`");
        }
        return new Result(command, process.exitValue(), FileTail.since(outputFile, before));
    }
}
