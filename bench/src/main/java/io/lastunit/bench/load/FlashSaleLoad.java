package io.lastunit.bench.load;

import io.lastunit.admin.cli.LastunitCli;
import io.lastunit.admin.cli.ExitCodes;
import io.lastunit.bench.chaos.ChaosCommand;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./lastunit bench}: load generators against a lastunit platform. The launcher runs it as
 * {@code java -cp bench/target/benchmarks.jar io.lastunit.bench.load.FlashSaleLoad "$@"} (the
 * jar's own main is JMH's). Commands: {@code flash-sale} ({@link FlashSaleCommand}), {@code move}
 * ({@link MoveCommand}), {@code failover} ({@link FailoverCommand}) and {@code chaos} ({@link ChaosCommand}).
 *
 * <p>Exit codes as every lastunit command ({@link ExitCodes}): 0 ok, 1 something wrong found, 2
 * bad options, 3 something could not be reached. Expected errors print one {@code error: ...} line.
 */
@Command(name = "lastunit bench", mixinStandardHelpOptions = true, version = "lastunit bench 0.1.0-SNAPSHOT",
        subcommands = {FlashSaleCommand.class, MoveCommand.class, FailoverCommand.class, ChaosCommand.class},
        description = "Load generators against a lastunit platform (the JMH suite runs with java -jar bench/target/benchmarks.jar).",
        footer = {"", "Exit codes: 0 ok, 1 something wrong found (drift, failed calls, inexact sale), 2 bad options,"
                + " 3 ZooKeeper or a shard unreachable."})
public final class FlashSaleLoad implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("chaos")) {
            ChaosCommand.useChaosLogging();
        }
        LastunitCli.useCliLogging();
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        return LastunitCli.withErrorHandling(new CommandLine(new FlashSaleLoad()));
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "a command is required: flash-sale, move, failover or chaos");
    }
}
