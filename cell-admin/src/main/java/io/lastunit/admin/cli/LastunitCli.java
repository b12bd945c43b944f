package io.lastunit.admin.cli;

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
 * The operator's command line, {@code ./lastunit}: {@code up} (a whole platform in this process),
 * {@code demo} (a flash sale through the router) and {@code admin} (cells, tenants, the invariant
 * check). {@code serve}, {@code router}, {@code balancer} and {@code bench} are dispatched by the
 * launcher script to their own jars; the help lists them too.
 *
 * <p>Exit codes: {@link ExitCodes}. Expected errors print one {@code error: ...} line and no stack
 * trace; only a bug prints one.
 */
@Command(name = "lastunit", mixinStandardHelpOptions = true, version = "lastunit 0.1.0-SNAPSHOT",
        subcommands = {UpCommand.class, DemoCommand.class, AdminCommand.class, TopCommand.class},
        description = "lastunit sells the last unit of anything exactly once.",
        footer = {"", "The launcher also runs (each has its own --help):",
                "  serve      a shard node (lastunit.shard.* / LASTUNIT_SHARD_*)",
                "  router     a router (lastunit.router.* / LASTUNIT_ROUTER_*)",
                "  balancer   a bucket-balancer (lastunit.balancer.* / LASTUNIT_BALANCER_*)",
                "  bench      the flash-sale load generator (bench flash-sale --help)",
                "Their settings: docs/operations.md.",
                "", "Exit codes: 0 ok, 1 something wrong found (drift, failed calls), 2 bad options or refused,"
                + " 3 ZooKeeper or a shard unreachable, 130 stopped by Ctrl-C (SIGINT) and 143 by SIGTERM,"
                + " after a clean stop."})
public final class LastunitCli implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** The logging configuration of the CLI (the shard node's and the router's jars carry a logback.xml each). */
    static final String LOGBACK_CONFIG = "lastunit-cli-logback.xml";

    public static void main(String[] args) {
        useCliLogging();
        System.exit(commandLine().execute(args));
    }

    /** The command line with lastunit's error handling; tests swap its out and err writers. */
    public static CommandLine commandLine() {
        return withErrorHandling(new CommandLine(new LastunitCli()));
    }

    /** Quiet logging for command-line use (stderr, WARN), unless configured otherwise. Any lastunit CLI. */
    public static void useCliLogging() {
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", LOGBACK_CONFIG);
        }
    }

    /**
     * lastunit's error handling for any picocli command line: bad options print one
     * {@code error:} line and a hint (exit 2); a {@link CliError} prints its message with its exit
     * code; anything else is a bug and prints its stack trace (exit 1).
     */
    public static CommandLine withErrorHandling(CommandLine cl) {
        cl.setParameterExceptionHandler(LastunitCli::onBadParameters);
        cl.setExecutionExceptionHandler(LastunitCli::onError);
        return cl;
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "a command is required: up, demo or admin");
    }

    /** Prints {@code error: ...} and a hint (not the whole usage), exit code 2. */
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
        err.println("error: unexpected failure of '" + cmd.getCommandSpec().qualifiedName() + "' (a bug; please report it):");
        e.printStackTrace(err);
        err.flush();
        return ExitCodes.FAILED;
    }

    /** For container commands: a subcommand is required. */
    static Integer requireSubcommand(CommandSpec spec) {
        throw new ParameterException(spec.commandLine(), "'" + spec.qualifiedName() + "' needs a command: "
                + String.join(", ", spec.subcommands().keySet().stream().filter(n -> !n.equals("help")).toList()));
    }
}
