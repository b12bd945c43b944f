package io.lastunit.bench.chaos;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.cli.ExitCodes;
import io.lastunit.admin.cli.InvariantSweep;
import io.lastunit.admin.cli.ShardProbe;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.bench.chaos.plan.ChaosSchedule;
import io.lastunit.bench.chaos.plan.FaultKind;
import io.lastunit.bench.chaos.plan.ScheduledFault;
import io.lastunit.common.topology.Topology;
import io.lastunit.testkit.faults.History;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./lastunit bench chaos --minutes N [--seed S]}: a local platform on 127.0.0.1 (a
 * PostgreSQL primary with a synchronous standby, ZooKeeper, shard nodes, a router; a TCP proxy on
 * every link: {@link ChaosPlatform}), a sale of many buyers with idempotency keys
 * ({@link ChaosSale}) and, meanwhile, a schedule of faults drawn from the seed
 * ({@link ChaosSchedule}) carried out one at a time ({@link FaultRunner}). Then every unknown is
 * resolved by its key and the checks run: every acknowledged hold in the database (holds lost must
 * be 0), no item sold beyond its total (oversold must be 0), exactly min(units, buyers) holds per
 * item, and the shards' invariant check ({@code admin check}). The table says for each fault what
 * the clients saw ({@link FaultWindows}).
 *
 * <p>The schedule is printed before anything starts: the same seed (and length, faults and shards)
 * replays the same schedule. Bounded: at most {@link ChaosSchedule#RUN_MAX}, {@link #BUYERS_MAX}
 * buyers, {@link #RATE_MAX} Reserves a second, {@link ChaosSale#IN_FLIGHT_MAX} in flight. Exit 0
 * only when every check passed and every fault was applied and healed; 1 otherwise; 2 bad options.
 */
@Command(name = "chaos", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"A sale on a local platform with standbys while a seeded schedule of faults runs:"
                + " PostgreSQL restarts and a failover, cut/blackholed/slow links, ZooKeeper cut, clock skew.",
                "Prints the schedule, a line per fault as it runs, then a table: what clients saw, recovery time,"
                        + " holds lost and oversold (both must be 0).",
                "The last lines are 'holds_lost=<n>', 'oversold=<n>', 'invariant=OK' and 'result=OK'."})
public final class ChaosCommand implements Callable<Integer> {
    static final int MINUTES_MAX = (int) ChaosSchedule.RUN_MAX.toMinutes();
    static final int BUYERS_MAX = 1_000_000;
    static final int RATE_MAX = 2_000;
    static final int RATE_DEFAULT = 100;
    static final int ITEMS_MAX = 1_000;
    static final int SHARDS_MAX = 4;

    @Spec
    CommandSpec spec;

    @Option(names = "--minutes", paramLabel = "N", description = "Length of the run, 1.." + 60 + " (default 2).")
    Integer minutes;

    @Option(names = "--seconds", paramLabel = "S", description = "Length of the run in seconds instead, 30..3600 (short runs, tests).")
    Integer seconds;

    @Option(names = "--seed", paramLabel = "S", description = "The schedule's seed (default: drawn, and printed).")
    Long seed;

    @Option(names = "--buyers", paramLabel = "N", description = "Buyers, sent evenly over the run (default " + RATE_DEFAULT
            + " a second; at most " + BUYERS_MAX + " and " + RATE_MAX + " a second).")
    Integer buyers;

    @Option(names = "--items", paramLabel = "N", description = "Items the buyers are spread over (default ${DEFAULT-VALUE}).")
    int items = 20;

    @Option(names = "--shards", paramLabel = "N", description = "Shard nodes (default ${DEFAULT-VALUE}, at most " + SHARDS_MAX + ").")
    int shards = 2;

    @Option(names = "--faults", paramLabel = "KIND", split = ",", description = "The kinds to draw from (default all): ${COMPLETION-CANDIDATES}.",
            completionCandidates = Kinds.class)
    List<String> faults;

    /** What the last run came to, for tests. */
    Verdict verdict;

    static final class Kinds extends ArrayList<String> {
        Kinds() {
            super(FaultKind.labels());
        }
    }

    /** The run's result, as printed. */
    record Verdict(ChaosSchedule schedule, List<FaultRunner.Applied> applied, List<FaultWindows.Row> rows,
                   SaleCheck.Result check, boolean invariantOk, int unresolved, boolean ok) {
    }

    /** Where the platform's log goes during a run, unless logback is configured otherwise. */
    static final String LOG_PROPERTY = "lastunit.chaos.log";

    /**
     * Points logback at the chaos configuration (the platform's warnings to a file, see
     * {@code lastunit-chaos-logback.xml}); call before anything logs.
     */
    public static void useChaosLogging() {
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", "lastunit-chaos-logback.xml");
            if (System.getProperty(LOG_PROPERTY) == null) {
                System.setProperty(LOG_PROPERTY, java.nio.file.Path.of(System.getProperty("java.io.tmpdir"),
                        "lastunit-chaos-" + ProcessHandle.current().pid() + ".log").toString());
            }
        }
    }

    @Override
    public Integer call() throws Exception {
        Duration run = runLength();
        List<FaultKind> kinds = kinds();
        validate(run);
        int buyerCount = buyers != null ? buyers : (int) Math.min(BUYERS_MAX, RATE_DEFAULT * run.toSeconds());
        long chosenSeed = seed != null ? seed : System.nanoTime() ^ ProcessHandle.current().pid();
        List<String> shardIds = new ArrayList<>();
        for (int i = 1; i <= shards; i++) {
            shardIds.add(Topology.SHARED_CELL + "-" + ChaosPlatform.REGION + "-" + i);
        }
        ChaosSchedule schedule;
        try {
            schedule = ChaosSchedule.plan(chosenSeed, run, kinds, shardIds);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        printSchedule(out, schedule, buyerCount);
        if (System.getProperty(LOG_PROPERTY) != null) {
            say(out, "the platform's log: " + System.getProperty(LOG_PROPERTY));
        }
        // Ctrl-C: every server and process the run started is stopped (the JVM then exits, 130).
        ChaosPlatform platform = new ChaosPlatform();
        Thread hook = new Thread(() -> {
            say(out, "chaos: stopping the platform ...");
            closeQuietly(platform);
        }, "chaos-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            platform.start(shards, ChaosSchedule.processShard(kinds, shardIds), line -> say(out, line));
            return runOn(platform, out, schedule, buyerCount);
        } finally {
            platform.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs, or ran
            }
        }
    }

    private static void closeQuietly(ChaosPlatform platform) {
        try {
            platform.close();
        } catch (Exception e) {
            System.err.println("chaos: closing the platform failed: " + e);
        }
    }

    private int runOn(ChaosPlatform platform, PrintWriter out, ChaosSchedule schedule, int buyerCount)
            throws Exception {
        Duration run = schedule.run();
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", platform.routerPort()).usePlaintext()
                .disableRetry().intercept(MetadataUtils.newAttachHeadersInterceptor(md)).build();
        try {
            ChaosSale sale = new ChaosSale(InventoryServiceGrpc.newFutureStub(channel), buyerCount, items, run,
                    run.plus(Duration.ofHours(1)));
            sale.createItems();
            say(out, String.format(Locale.ROOT, "sale: %,d buyers at %d/s on %d items of %,d units (tenant %s)",
                    buyerCount, sale.rate(), items, sale.unitsPerItem(), ChaosPlatform.TENANT));
            // The history's times and the schedule's count from the same moment.
            long originNanos = System.nanoTime();
            History history = new History();
            FaultRunner runner = new FaultRunner(schedule.faults(), platform::nemesis, originNanos,
                    line -> say(out, line));
            sale.start(history);
            runner.start();
            awaitEnd(out, originNanos, run, history);
            runner.stop(TimeUnit.MINUTES.toMillis(2));
            boolean drained = sale.stop();
            platform.healAllLinks();
            say(out, String.format(Locale.ROOT, "+%6.1f s  sale over: %s; resolving %d unknown(s) by key ...",
                    (System.nanoTime() - originNanos) / 1e9, history, sale.unresolved().size()));
            int resolvedReserved = sale.resolve();
            Map<String, ChaosSale.Answer> answers = sale.answers();
            SaleCheck.Result check = SaleCheck.check(platform, history.entries(), answers, sale.sentPerItem(),
                    sale.unitsPerItem());
            List<FaultRunner.Applied> applied = runner.applied();
            List<FaultWindows.Row> rows = FaultWindows.rows(history.entries(), applied, check.lostKeys());
            InvariantSweep sweep;
            try (ShardProbe probe = new ShardProbe()) {
                sweep = InvariantSweep.run(probe, platform.shards(), "", "", Duration.ofSeconds(60));
            }
            boolean allApplied = applied.size() == schedule.faults().size() && applied.stream()
                    .allMatch(FaultRunner.Applied::ok);
            int unresolved = sale.unresolved().size();
            boolean ok = check.lost() == 0 && check.oversold() == 0 && check.exact() && sweep.ok() && allApplied
                    && unresolved == 0 && drained && !platform.runningWithoutStandby();
            verdict = new Verdict(schedule, applied, rows, check, sweep.ok(), unresolved, ok);
            report(out, platform, schedule, history, rows, check, sweep, resolvedReserved, unresolved, allApplied,
                    drained, ok);
            return ok ? ExitCodes.OK : ExitCodes.FAILED;
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    private static void awaitEnd(PrintWriter out, long originNanos, Duration run, History history)
            throws InterruptedException {
        long end = originNanos + run.toNanos();
        long nextProgress = originNanos + TimeUnit.SECONDS.toNanos(15);
        long now;
        while ((now = System.nanoTime()) < end) {
            Thread.sleep(Math.min(200, Math.max(1, (end - now) / 1_000_000)));
            if (System.nanoTime() >= nextProgress) {
                Map<History.Outcome, Long> c = history.counts();
                say(out, String.format(Locale.ROOT, "+%6.1f s  sale: %,d ok, %,d refused, %,d unknown, %,d in flight",
                        (System.nanoTime() - originNanos) / 1e9, c.get(History.Outcome.OK),
                        c.get(History.Outcome.FAIL), c.get(History.Outcome.UNKNOWN), c.get(History.Outcome.PENDING)));
                nextProgress += TimeUnit.SECONDS.toNanos(15);
            }
        }
    }

    private void report(PrintWriter out, ChaosPlatform platform, ChaosSchedule schedule, History history,
                        List<FaultWindows.Row> rows, SaleCheck.Result check, InvariantSweep sweep,
                        int resolvedReserved, int unresolved, boolean allApplied, boolean drained, boolean ok) {
        Map<History.Outcome, Long> c = history.counts();
        long unavailable = history.entries().stream().filter(e -> e.outcome() == History.Outcome.UNKNOWN
                && "UNAVAILABLE".equals(e.reason())).count();
        String[] totals = {String.valueOf(c.get(History.Outcome.OK)), String.valueOf(c.get(History.Outcome.FAIL)),
                String.valueOf(unavailable), String.valueOf(c.get(History.Outcome.UNKNOWN) - unavailable),
                "seed " + schedule.seed()};
        out.println();
        out.printf(Locale.ROOT, "chaos run, seed %d, %.0f s, %d fault(s):%n", schedule.seed(),
                schedule.run().toMillis() / 1e3, schedule.faults().size());
        String failoverNote = platform.asynchronousMillis() >= 0 ? String.format(Locale.ROOT,
                "new sync standby after %.1f s alone", platform.asynchronousMillis() / 1e3)
                : "NO synchronous standby since";
        FaultWindows.table(rows, check.lost(), check.oversold(), totals, failoverNote).print(out, "  ");
        out.println();
        out.printf(Locale.ROOT, "unknowns resolved by key: %,d (%,d of them RESERVED), unresolved: %d%n",
                c.get(History.Outcome.UNKNOWN), resolvedReserved, unresolved);
        out.printf(Locale.ROOT, "holds: %,d in the database, %,d expected (min(units, buyers) per item), %,d told"
                        + " RESERVED; told SOLD_OUT but held: %d; not HELD: %d%n", check.holdsInDatabase(),
                check.expected(), check.toldReserved(), check.heldButToldSoldOut(), check.notHeld());
        if (platform.asynchronousMillis() >= 0) {
            out.printf(Locale.ROOT, "durability: after the failover the promoted server committed without a"
                    + " synchronous standby for %.1f s, until %s streamed%n", platform.asynchronousMillis() / 1e3,
                    ChaosPlatform.REBUILT_STANDBY);
        } else if (platform.runningWithoutStandby()) {
            out.println("durability: REDUCED: the promoted server has no synchronous standby (its rebuild failed)");
        }
        out.println("invariant check (admin check):");
        sweep.print(out, "  ");
        for (String p : check.problems()) {
            out.println("problem: " + p);
        }
        if (!allApplied) {
            out.println("problem: not every scheduled fault was applied and healed");
        }
        if (!drained) {
            out.println("problem: calls still in flight after the sale's bound");
        }
        out.printf("holds_lost=%d%n", check.lost());
        out.printf("oversold=%d%n", check.oversold());
        out.printf("invariant=%s%n", sweep.ok() ? "OK" : "DRIFT " + sweep.driftSummary());
        out.printf("result=%s%n", ok ? "OK" : "FAILED");
        out.flush();
    }

    private static void say(PrintWriter out, String line) {
        out.println(line);
        out.flush();
    }

    private static void printSchedule(PrintWriter out, ChaosSchedule s, int buyerCount) {
        out.printf(Locale.ROOT, "chaos schedule: seed %d, run %.0f s (quiet warm-up %.0f s, quiet tail %.0f s), %d"
                        + " fault(s), %.1f s faulted, %,d buyers%n", s.seed(), s.run().toMillis() / 1e3,
                ChaosSchedule.warmUp(s.run()).toMillis() / 1e3, ChaosSchedule.tail(s.run()).toMillis() / 1e3,
                s.faults().size(), s.faulted().toMillis() / 1e3, buyerCount);
        for (ScheduledFault f : s.faults()) {
            out.println("  " + f);
        }
        out.println("  (replay: --seed " + s.seed() + " with the same length, --faults and --shards)");
        out.flush();
    }

    private Duration runLength() {
        if (minutes != null && seconds != null) {
            throw new ParameterException(spec.commandLine(), "give --minutes or --seconds, not both");
        }
        if (seconds != null) {
            return Duration.ofSeconds(seconds);
        }
        int m = minutes == null ? 2 : minutes;
        if (m < 1 || m > MINUTES_MAX) {
            throw new ParameterException(spec.commandLine(), "--minutes " + m + " is outside [1, " + MINUTES_MAX + "]");
        }
        return Duration.ofMinutes(m);
    }

    private List<FaultKind> kinds() {
        if (faults == null || faults.isEmpty()) {
            return Arrays.asList(FaultKind.values());
        }
        List<FaultKind> out = new ArrayList<>();
        for (String f : faults) {
            out.add(FaultKind.byLabel(f).orElseThrow(() -> new ParameterException(spec.commandLine(),
                    "--faults: unknown kind '" + f + "'; known: " + String.join(", ", FaultKind.labels()))));
        }
        return out;
    }

    private void validate(Duration run) {
        List<String> problems = new ArrayList<>();
        if (run.compareTo(ChaosSchedule.RUN_MIN) < 0 || run.compareTo(ChaosSchedule.RUN_MAX) > 0) {
            problems.add("the run of " + run.toSeconds() + " s is outside [" + ChaosSchedule.RUN_MIN.toSeconds() + ", "
                    + ChaosSchedule.RUN_MAX.toSeconds() + "] s");
        }
        if (items < 1 || items > ITEMS_MAX) {
            problems.add("--items " + items + " is outside [1, " + ITEMS_MAX + "]");
        }
        if (shards < 1 || shards > SHARDS_MAX) {
            problems.add("--shards " + shards + " is outside [1, " + SHARDS_MAX + "]");
        }
        if (buyers != null) {
            long rateAsked = Math.round(buyers / (double) run.toSeconds());
            if (buyers < items || buyers > BUYERS_MAX) {
                problems.add("--buyers " + buyers + " is outside [--items (" + items + "), " + BUYERS_MAX + "]");
            } else if (rateAsked > RATE_MAX) {
                problems.add("--buyers " + buyers + " over " + run.toSeconds() + " s is " + rateAsked
                        + " a second, above " + RATE_MAX);
            }
        }
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", problems));
        }
    }
}
