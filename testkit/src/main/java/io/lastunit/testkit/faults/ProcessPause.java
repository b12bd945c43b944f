package io.lastunit.testkit.faults;

import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Pauses and resumes another OS process, as a GC pause or a stalled VM would: SIGSTOP and SIGCONT
 * sent with {@code kill -STOP|-CONT <pid>} (Java cannot send those signals itself). Each call waits
 * until {@code /proc/<pid>/stat} shows the state it asked for, so once {@link #pause} returns the
 * process really runs no more; {@link #isPaused} reads that state. Linux only.
 *
 * <p>Owns nothing; thread-safe. {@code Paused p = ProcessPause.pause(pid)} in a try-with-resources
 * resumes the process when the block ends, whatever happens in it.
 *
 * <p>Hazard: a process left stopped stays stopped after the test JVM exits, holding its ports,
 * locks and database sessions; resume in a finally (or close the {@link Paused}). The pid is
 * checked to be a single other process (> 1, not this JVM), because {@code kill -STOP -1} or
 * stopping oneself would freeze far more than the test meant to.
 */
public final class ProcessPause {
    /** How long one {@code kill} command may run, and how long the process may take to change state, before scaling. */
    public static final Duration WAIT = Duration.ofSeconds(5);

    private static final long POLL_MILLIS = 5;

    private ProcessPause() {
    }

    /**
     * Stops process {@code pid} (SIGSTOP) and waits until it is stopped.
     *
     * @return a handle whose {@link Paused#close()} resumes the process
     * @throws ProcessSignalException if the signal cannot be sent or the process does not stop in time
     */
    public static Paused pause(long pid) {
        signal(pid, "-STOP", true);
        return new Paused(pid);
    }

    /**
     * Resumes process {@code pid} (SIGCONT) and waits until it is no longer stopped. Resuming a
     * process that runs is harmless.
     *
     * @throws ProcessSignalException if the signal cannot be sent or the process stays stopped
     */
    public static void resume(long pid) {
        signal(pid, "-CONT", false);
    }

    /**
     * Whether process {@code pid} is stopped by a signal now (state {@code T} in {@code /proc/<pid>/stat}).
     *
     * @throws ProcessSignalException if there is no such process
     */
    public static boolean isPaused(long pid) {
        checkPid(pid);
        return state(pid) == 'T';
    }

    private static void signal(long pid, String signal, boolean paused) {
        checkPid(pid);
        List<String> command = List.of("kill", signal, Long.toString(pid));
        String commandLine = String.join(" ", command);
        Duration wait = TestTimeouts.scaled(WAIT);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new ProcessSignalException("cannot run kill", pid, commandLine, ProcessSignalException.NO_EXIT_CODE,
                    "", e);
        }
        try {
            if (!process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new ProcessSignalException("kill did not finish within " + wait, pid, commandLine,
                        ProcessSignalException.NO_EXIT_CODE, "", null);
            }
            // kill writes a line at most, so its stderr fits in the pipe and reading it after the exit cannot block.
            String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new ProcessSignalException("kill failed", pid, commandLine, process.exitValue(), stderr, null);
            }
            awaitState(pid, paused, wait, commandLine);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ProcessSignalException("interrupted", pid, commandLine, ProcessSignalException.NO_EXIT_CODE, "",
                    e);
        } catch (IOException e) {
            throw new ProcessSignalException("cannot read kill's stderr", pid, commandLine,
                    ProcessSignalException.NO_EXIT_CODE, "", e);
        }
    }

    private static void awaitState(long pid, boolean paused, Duration wait, String commandLine)
            throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        for (char state = state(pid); (state == 'T') != paused; state = state(pid)) {
            if (System.nanoTime() - deadline > 0) {
                throw new ProcessSignalException("process did not become " + (paused ? "stopped" : "running")
                        + " within " + wait + " (state " + state + ")", pid, commandLine, 0, "", null);
            }
            TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
        }
    }

    /**
     * The state letter of {@code /proc/<pid>/stat}: the field after the command name, which is in
     * parentheses and may itself hold spaces and parentheses, hence the last ')'.
     */
    static char state(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        String line;
        // Read to end of stream: /proc files report size 0, and Files.readString trusts the size for some of them.
        try (InputStream in = Files.newInputStream(stat)) {
            line = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            throw new ProcessSignalException("no such process", pid, "read " + stat,
                    ProcessSignalException.NO_EXIT_CODE, "", e);
        } catch (IOException e) {
            throw new ProcessSignalException("cannot read the process state", pid, "read " + stat,
                    ProcessSignalException.NO_EXIT_CODE, "", e);
        }
        int end = line.lastIndexOf(')');
        if (end < 0 || end + 2 >= line.length()) {
            throw new ProcessSignalException("unexpected content '" + line.strip() + "'", pid, "read " + stat,
                    ProcessSignalException.NO_EXIT_CODE, "", null);
        }
        return line.charAt(end + 2);
    }

    private static void checkPid(long pid) {
        if (pid <= 1 || pid == ProcessHandle.current().pid()) {
            throw new IllegalArgumentException("refusing to signal pid " + pid + ": it must be a single other process"
                    + " (> 1, not this JVM, pid " + ProcessHandle.current().pid() + ")");
        }
    }

    /** A process paused by {@link #pause}; closing resumes it (resuming twice is harmless). Thread-safe. */
    public static final class Paused implements AutoCloseable {
        private final long pid;
        private final AtomicBoolean resumed = new AtomicBoolean();

        private Paused(long pid) {
            this.pid = pid;
        }

        public long pid() {
            return pid;
        }

        /** Resumes the process; once that has worked, later calls do nothing. */
        @Override
        public void close() {
            if (!resumed.get()) {
                resume(pid);
                resumed.set(true);
            }
        }

        @Override
        public String toString() {
            return "Paused[pid=" + pid + (resumed.get() ? ", resumed" : "") + "]";
        }
    }
}
