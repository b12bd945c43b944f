package io.lastunit.bench.load;

import io.lastunit.admin.cli.CliError;
import io.lastunit.admin.cli.ExitCodes;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * {@code ./lastunit bench}: load generators against a lastunit platform. The launcher runs it as
 * {@code java -cp bench/target/benchmarks.jar io.lastunit.bench.load.FlashSaleLoad "$@"} (the
 * jar's own main is JMH's). One command so far, {@code flash-sale} ({@link FlashSaleCommand}).
 *
 * <p>Exit codes as every lastunit command ({@link ExitCodes}): 0 ok, 1 something wrong found, 2
 * bad options, 3 something could not be reached. Expected errors print one {@code error: ...} line.
 */
@Command(name = "lastunit bench", mixinStandardHelpOptions = true, version = "lastunit bench 0.1.0-SNAPSHOT",
        subcommands = FlashSaleCommand.class,
        description = "Load generators against a lastunit platform (the JMH suite runs with java -jar bench/target/benchmarks.jar).",
        footer = {"", "Exit codes: 0 ok, 1 something wrong found (drift, failed calls, inexact sale), 2 bad options,"
                + " 3 ZooKeeper or a shard unreachable."})
public final class FlashSaleLoad implements Callable<Integer> {
    /** The CLI's logging configuration (in cell-admin's jar, shaded into benchmarks.jar): stderr, WARN. */
    static final String LOGBACK_CONFIG = "lastunit-cli-logback.xml";

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", LOGBACK_CONFIG);
        }
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new FlashSaleLoad());
        cl.setParameterExceptionHandler(FlashSaleLoad::onBadParameters);
        cl.setExecutionExceptionHandler(FlashSaleLoad::onError);
        return cl;
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "a command is required: flash-sale");
    }

    static int onBadParameters(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println("error: " + e.getMessage());
        if (!UnmatchedArgumentException.printSuggestions(e, err)) {
            err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for the options.");
        }
        err.flush();
        return ExitCodes.USAGE;
    }

    static int onError(Exception e, CommandLine cmd, ParseResult parsed) {
        PrintWriter err = cmd.getErr();
        if (e instanceof CliError ce) {
            err.println("error: " + ce.getMessage());
            err.flush();
            return ce.exitCode();
        }
        err.println("error: unexpected failure of '" + cmd.getCommandSpec().qualifiedName()
                + "' (a bug; please report it):");
        e.printStackTrace(err);
        err.flush();
        return ExitCodes.FAILED;
    }
}
