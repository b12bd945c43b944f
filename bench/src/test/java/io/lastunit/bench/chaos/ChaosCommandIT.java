package io.lastunit.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.lastunit.admin.cli.LastunitCli;
import io.lastunit.bench.chaos.plan.FaultKind;
import io.lastunit.testkit.TestTimeouts;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * A short chaos run end to end (45 s, a fixed seed): a failover with its standby rebuilt, an
 * immediate restart of the promoted server, a blackholed shard↔PostgreSQL link, during a sale of
 * 4,500 buyers. Every scheduled fault must be applied and healed, no acknowledged hold lost,
 * nothing oversold, the totals exact, the invariants clean.
 */
class ChaosCommandIT {
    private static final String FAULTS = "pg-failover,pg-restart-immediate,shard-pg-blackhole,router-shard-cut,"
            + "zookeeper-cut";
    /** With {@link #FAULTS} and 45 s: pg-failover at +5 s, pg-restart-immediate, shard-pg-blackhole. */
    private static final String SEED = "61";

    @Test
    void aShortChaosRun_losesNothing_oversellsNothing_andHealsEveryFault() {
        ChaosCommand command = new ChaosCommand();
        StringWriter out = new StringWriter();
        CommandLine cl = LastunitCli.withErrorHandling(new CommandLine(command));
        cl.setOut(new PrintWriter(out, true));
        int exit = assertTimeoutPreemptively(TestTimeouts.scaled(Duration.ofSeconds(150)),
                () -> cl.execute("--seconds", "45", "--seed", SEED, "--faults", FAULTS));
        System.out.println(out);

        ChaosCommand.Verdict v = command.verdict;
        assertThat(v).as("the run came to a verdict:%n%s", out).isNotNull();
        assertThat(v.schedule().faults()).extracting(f -> f.kind()).as("the seed's schedule")
                .contains(FaultKind.PG_FAILOVER, FaultKind.PG_RESTART_IMMEDIATE, FaultKind.SHARD_PG_BLACKHOLE);
        assertThat(v.applied()).as("every scheduled fault ran").hasSameSizeAs(v.schedule().faults());
        assertThat(v.applied()).as("every fault applied and healed").allMatch(FaultRunner.Applied::ok);
        assertThat(v.check().lost()).as("acknowledged holds lost").isZero();
        assertThat(v.check().oversold()).as("units oversold").isZero();
        assertThat(v.check().problems()).as("the sale is exact").isEmpty();
        assertThat(v.check().holdsInDatabase()).isEqualTo(v.check().expected()).isPositive();
        assertThat(v.unresolved()).as("unknowns left unresolved").isZero();
        assertThat(v.invariantOk()).as("the shards' invariant check").isTrue();
        assertThat(v.ok()).isTrue();
        assertThat(exit).isZero();
        assertThat(out.toString()).contains("holds_lost=0", "oversold=0", "invariant=OK", "result=OK");
    }
}
