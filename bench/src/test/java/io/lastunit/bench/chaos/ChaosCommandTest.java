package io.lastunit.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.admin.cli.LastunitCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Options {@code bench chaos} refuses before it starts anything. */
class ChaosCommandTest {
    @Test
    void badOptions_areRefused_withExitCode2() {
        for (String[] args : new String[][] {{"--minutes", "61"}, {"--minutes", "0"}, {"--minutes", "2", "--seconds", "40"},
                {"--seconds", "10"}, {"--faults", "pg-meltdown"}, {"--items", "0"}, {"--shards", "9"},
                {"--seconds", "30", "--buyers", "1000000"}}) {
            StringWriter err = new StringWriter();
            CommandLine cl = LastunitCli.withErrorHandling(new CommandLine(new ChaosCommand()));
            cl.setErr(new PrintWriter(err, true));
            assertThat(cl.execute(args)).as("%s", String.join(" ", args)).isEqualTo(2);
            assertThat(err.toString()).as("%s", String.join(" ", args)).startsWith("error: ");
        }
    }
}
