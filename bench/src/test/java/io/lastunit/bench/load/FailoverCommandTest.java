package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.admin.cli.ExitCodes;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class FailoverCommandTest {
    private static final long MS = 1_000_000;

    @Test
    void recovery_runsFromTheLastAckOnTheOldPrimary_toTheFirstOfACallSentOnceItWasGone() {
        FailoverCommand.Acks acks = new FailoverCommand.Acks();
        acks.record(0, 10 * MS, true);
        acks.record(5 * MS, 40 * MS, true); // after the SIGKILL at 30 ms: its backends still ran
        acks.oldPrimaryGoneAt(50 * MS);
        acks.record(45 * MS, 60 * MS, true); // sent before it was gone, answered after: neither side's
        acks.record(55 * MS, 70 * MS, false);
        acks.record(80 * MS, 900 * MS, true);
        acks.record(90 * MS, 700 * MS, true);

        FailoverCommand.Round r = acks.round(30 * MS, 50 * MS, 600 * MS);
        assertThat(acks.recovered()).isTrue();
        assertThat(r.recoveryMs()).isEqualTo(660);
        assertThat(r.killToLastOldAckMs()).isEqualTo(10);
        assertThat(r.killToFirstNewAckMs()).isEqualTo(670);
        assertThat(r.killMs()).isEqualTo(20);
        assertThat(r.promoteMs()).isEqualTo(550);
        assertThat(r.okOld()).isEqualTo(2);
        assertThat(r.okNew()).isEqualTo(2);
        assertThat(r.failed()).isEqualTo(1);
    }

    @Test
    void anAckJustBeforeTheKill_isANegativeTimeFromIt_notNothing() {
        FailoverCommand.Acks acks = new FailoverCommand.Acks();
        acks.record(0, 29 * MS + MS / 2, true);
        acks.oldPrimaryGoneAt(50 * MS);
        acks.record(60 * MS, 100 * MS, true);

        FailoverCommand.Round r = acks.round(30 * MS, 50 * MS, 90 * MS);
        assertThat(r.killToLastOldAckMs()).isEqualTo(-1);
        assertThat(r.recovered()).isTrue();
    }

    @Test
    void noAckAfterTheKill_isNotARecovery() {
        FailoverCommand.Acks acks = new FailoverCommand.Acks();
        acks.record(0, 10 * MS, true);
        acks.oldPrimaryGoneAt(50 * MS);
        acks.record(60 * MS, 70 * MS, false);

        assertThat(acks.recovered()).isFalse();
        assertThat(acks.round(30 * MS, 50 * MS, 90 * MS).recovered()).isFalse();
        assertThat(acks.round(30 * MS, 50 * MS, 90 * MS).killToFirstNewAckMs()).isEqualTo(FailoverCommand.NONE);
    }

    @Test
    void optionsOutsideTheirBounds_areRefused_beforeAnythingStarts() {
        StringWriter err = new StringWriter();
        CommandLine cmd = FlashSaleLoad.commandLine();
        cmd.setErr(new PrintWriter(err));
        assertThat(cmd.execute("failover", "--rounds", "0")).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("--rounds=0 must be between 1 and 20");
    }
}
