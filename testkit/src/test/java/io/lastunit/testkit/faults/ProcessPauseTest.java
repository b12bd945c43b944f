package io.lastunit.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ProcessPauseTest {

    @Test
    void pause_stopsTheProcess_andResumeLetsItRun() throws Exception {
        try (SleepingChild child = new SleepingChild()) {
            assertThat(ProcessPause.isPaused(child.pid())).isFalse();

            ProcessPause.Paused paused = ProcessPause.pause(child.pid());

            assertThat(ProcessPause.state(child.pid())).isEqualTo('T');
            assertThat(ProcessPause.isPaused(child.pid())).isTrue();
            assertThat(paused.pid()).isEqualTo(child.pid());

            ProcessPause.resume(child.pid());

            assertThat(ProcessPause.state(child.pid())).isNotEqualTo('T');
            assertThat(ProcessPause.isPaused(child.pid())).isFalse();
        }
    }

    @Test
    void closingThePaused_resumesTheProcess_once() throws Exception {
        try (SleepingChild child = new SleepingChild()) {
            ProcessPause.Paused outer;
            try (ProcessPause.Paused paused = ProcessPause.pause(child.pid())) {
                outer = paused;
                assertThat(ProcessPause.isPaused(child.pid())).isTrue();
            }
            assertThat(ProcessPause.isPaused(child.pid())).isFalse();

            outer.close();
            assertThat(ProcessPause.isPaused(child.pid())).isFalse();
        }
    }

    @Test
    void resume_ofARunningProcess_isHarmless() throws Exception {
        try (SleepingChild child = new SleepingChild()) {
            ProcessPause.resume(child.pid());

            assertThat(ProcessPause.isPaused(child.pid())).isFalse();
        }
    }

    @Test
    void signals_toAPidThatCannotExist_failWithThePidAndTheCommandsAnswer() throws IOException {
        long none = pidMax() + 1;
        assertThat(Path.of("/proc", Long.toString(none))).doesNotExist();

        ProcessSignalException e = catchThrowableOfType(ProcessSignalException.class, () -> ProcessPause.pause(none));

        assertThat(e.pid()).isEqualTo(none);
        assertThat(e.command()).isEqualTo("kill -STOP " + none);
        assertThat(e.exitCode()).isNotZero().isNotEqualTo(ProcessSignalException.NO_EXIT_CODE);
        assertThat(e.getMessage()).contains("pid=" + none, "exitCode=" + e.exitCode());
        assertThatThrownBy(() -> ProcessPause.isPaused(none)).isInstanceOf(ProcessSignalException.class)
                .hasMessageContaining("no such process");
    }

    /** Pids are below this, so pid_max + 1 names no process; read to end of stream, as the size /proc gives is 0. */
    private static long pidMax() throws IOException {
        try (InputStream in = Files.newInputStream(Path.of("/proc/sys/kernel/pid_max"))) {
            long pidMax = Long.parseLong(new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip());
            assertThat(pidMax).as("pid_max").isGreaterThan(300);
            return pidMax;
        }
    }

    @Test
    void pidsThatWouldSignalMoreThanOneOtherProcess_areRefused() {
        for (long pid : new long[] {-1, 0, 1, ProcessHandle.current().pid()}) {
            assertThatThrownBy(() -> ProcessPause.pause(pid)).as("pid %d", pid)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pid " + pid);
        }
    }
}
