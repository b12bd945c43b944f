package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** {@code ./lastunit bench --help} and {@code bench flash-sale --help}: usage, exit 0, nothing started. */
class FlashSaleLoadTest {

    @ParameterizedTest
    @CsvSource({"--help,flash-sale", "-h,flash-sale", "flash-sale --help,--target", "flash-sale -h,--jdbc-url"})
    void help_printsUsage_exit0(String args, String expected) {
        CommandLine cl = FlashSaleLoad.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));

        int code = cl.execute(args.split(" "));

        assertThat(code).isZero();
        assertThat(out.toString()).startsWith("Usage: lastunit bench").contains(expected);
        assertThat(err.toString()).isEmpty();
    }
}
