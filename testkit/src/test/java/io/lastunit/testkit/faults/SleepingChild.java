package io.lastunit.testkit.faults;

import io.lastunit.testkit.TestTimeouts;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A real child process ({@code sleep 60}) for the pause tests; closing destroys it and waits for it to go. */
final class SleepingChild implements AutoCloseable {
    private final Process process;

    SleepingChild() throws IOException {
        process = new ProcessBuilder("sleep", "60").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        // SIGKILL ends a stopped process too, so a failed test never leaves it behind.
        process.destroyForcibly();
        try {
            process.waitFor(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
