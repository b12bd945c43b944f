package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lastunit.admin.move.Mover;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.api.topology.v1.MoveStep;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The move commands' options: bad input is exit 2 with one clear line, before anything connects. */
class MoveCommandsTest {
    /** Nothing listens here: a command that got past its checks would fail to connect (exit 3), not 2. */
    private static final String NO_ZOOKEEPER = "127.0.0.1:1";

    private static void assertUsageError(CliRun r, String... fragments) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("error: ").doesNotContain("Exception").doesNotContain("\tat ");
        for (String f : fragments) {
            assertThat(r.err()).contains(f);
        }
    }

    private static CliRun admin(String... args) {
        String[] all = new String[args.length + 3];
        all[0] = "admin";
        all[1] = "--zookeeper";
        all[2] = NO_ZOOKEEPER;
        System.arraycopy(args, 0, all, 3, args.length);
        return CliRun.of(all);
    }

    @Test
    void tenantsMove_needsTenantAndCell() {
        assertUsageError(admin("tenants", "move", "--to-cell", "big"), "--tenant");
        assertUsageError(admin("tenants", "move", "--tenant", "acme"), "--to-cell");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "--tenant=a/b|--to-cell=big|--max-pause=2s|--tenant 'a/b' is not 1..64",
            "--tenant=acme|--to-cell=b c|--max-pause=2s|--to-cell 'b c' is not 1..64",
            "--tenant=acme|--to-cell=big|--max-pause=2x|--max-pause '2x' is not a duration like 2s",
            "--tenant=acme|--to-cell=big|--max-pause=50ms|--max-pause 50ms is outside [100ms, 60s]",
            "--tenant=acme|--to-cell=big|--max-pause=61s|--max-pause 61s is outside [100ms, 60s]",
            "--tenant=acme|--to-cell=big|--max-pause=-1s|is not a duration"})
    void tenantsMove_badValues_areRefusedBeforeConnecting(String tenant, String cell, String pause, String message) {
        assertUsageError(admin("tenants", "move", tenant, cell, pause), message);
    }

    @Test
    void tenantsMove_everyProblemNamed_inOneLine() {
        CliRun r = admin("tenants", "move", "--tenant", "a/b", "--to-cell", "c/d", "--max-pause", "1h",
                "--move-id", "x y");
        assertUsageError(r, "--tenant 'a/b'", "--to-cell 'c/d'", "--move-id 'x y'", "--max-pause '1h'");
        assertThat(r.err().lines().filter(l -> l.startsWith("error: ")).count()).isEqualTo(1);
    }

    @Test
    void tenantsMove_validOptions_getAsFarAsZooKeeper() {
        CliRun r = admin("tenants", "move", "--tenant", "acme", "--to-cell", "big", "--max-pause", "1.5s", "--wait");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(r.err()).contains("cannot reach ZooKeeper at " + NO_ZOOKEEPER);
    }

    @Test
    void moves_badIds_andReasons_areRefusedBeforeConnecting() {
        assertUsageError(admin("moves", "show", "a/b"), "ID 'a/b' is not 1..64");
        assertUsageError(admin("moves", "abort", "a b"), "ID 'a b'");
        assertUsageError(admin("moves", "resume", ".."), "ID '..'");
        assertUsageError(admin("moves", "abort", "m1", "--reason", "r".repeat(257)), "--reason is longer than 256");
        assertUsageError(admin("moves", "list", "--tenant", "a/b"), "--tenant 'a/b'");
        assertUsageError(admin("moves", "show"), "ID");
    }

    @Test
    void serve_needsAnAdminTokenGrant_andValidBounds() {
        assertUsageError(admin("serve"), "--token-grant is required");
        assertUsageError(admin("serve", "--token-grant", "nope"), "token grant #0 is not <sha256-hex>");
        String grant = "a".repeat(64) + ":ops:*";
        assertUsageError(admin("serve", "--token-grant", grant), "no token grant has the admin role");
        assertUsageError(admin("serve", "--token-grant", grant + ":admin", "--port", "70000", "--moves-max", "0",
                "--resume-interval", "soon"), "--port 70000", "--moves-max 0", "--resume-interval 'soon'");
    }

    @Test
    void help_ofTheMoveCommands_namesTheirOptions() {
        CliRun r = CliRun.of("admin", "tenants", "move", "--help");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("--tenant", "--to-cell", "--max-pause", "--wait", "--move-id", "Exit:");
        for (String c : new String[] {"list", "show", "abort", "resume"}) {
            assertThat(CliRun.of("admin", "moves", c, "--help").exitCode()).as(c).isZero();
        }
        assertThat(CliRun.of("admin", "serve", "--help").out()).contains("--token-grant", "--port", "--metrics-enabled",
                "--metrics-host", "--metrics-port");
    }

    @ParameterizedTest
    @CsvSource({"2s,2000", "500ms,500", "1.5s,1500", "1m,60000", "0s,0", "250MS,250"})
    void durations_parse(String text, long ms) {
        assertThat(MoveCli.parseMillis(text)).isEqualTo(ms);
    }

    @Test
    void durations_refuseAnythingElse() {
        for (String bad : new String[] {"2", "s", "", "1h", "-1s", "NaNs", "1e400s"}) {
            assertThatThrownBy(() -> MoveCli.parseMillis(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void progress_showsTheStepsAsABar_andWhatTheMoveDid() {
        assertThat(MoveCli.bar(MoveStep.PLANNED)).isEqualTo("[#......]");
        assertThat(MoveCli.bar(MoveStep.FENCED)).isEqualTo("[####...]");
        assertThat(MoveCli.bar(MoveStep.CLEANED)).isEqualTo("[#######]");
        assertThat(MoveCli.bar(MoveStep.ABORTED)).isEqualTo("[xxxxxxx]");
        Move m = Move.newBuilder().setStep(MoveStep.CLEANED).setCopied(MoveCounts.newBuilder().setItems(2).setHolds(5))
                .setCatchUpRounds(2).setLastDeltaRows(3).setPauseMs(120).setMaxPauseMs(2000).build();
        assertThat(MoveCli.summary(m)).isEqualTo("7 rows copied, 2 catch-up passes, lag 3 rows, pause 120 ms of 2000");
        Move aborted = Move.newBuilder().setStep(MoveStep.ABORTED).setReason("verification found 1 difference").build();
        assertThat(MoveCli.summary(aborted)).isEqualTo("verification found 1 difference");
    }

    @Test
    void outcomes_haveTheirExitCodes() {
        Move m = Move.getDefaultInstance();
        assertThat(MoveCli.exitCode(new Mover.Outcome(Mover.Result.CLEANED, m, ""))).isEqualTo(ExitCodes.OK);
        assertThat(MoveCli.exitCode(new Mover.Outcome(Mover.Result.ABORTED, m, ""))).isEqualTo(ExitCodes.FAILED);
        assertThat(MoveCli.exitCode(new Mover.Outcome(Mover.Result.HALTED, m, ""))).isEqualTo(ExitCodes.FAILED);
        assertThat(MoveCli.exitCode(new Mover.Outcome(Mover.Result.BUSY, m, ""))).isEqualTo(ExitCodes.USAGE);
        assertThat(MoveCli.exitCode(new Mover.Outcome(Mover.Result.STOPPED, m, ""))).isEqualTo(ExitCodes.UNREACHABLE);
    }
}
