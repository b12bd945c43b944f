package io.lastunit.bench.load;

import io.lastunit.admin.cli.ExitCodes;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.shard.ShardNode;
import io.lastunit.shard.lane.LaneEngine;
import io.lastunit.shard.store.local.BaseBackupMethod;
import io.lastunit.shard.store.local.PostgresBinaries;
import io.lastunit.shard.store.local.PostgresServer;
import io.lastunit.shard.store.local.ServerSettings;
import io.lastunit.shard.store.local.StandbyPair;
import io.lastunit.shard.wiring.ShardProperties;
import java.io.PrintWriter;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./lastunit bench failover}: how long a shard node's Reserves stop being acknowledged when
 * its database fails over. Each round starts an embedded primary with a synchronous standby
 * ({@link StandbyPair}, fsync on, on 127.0.0.1), a standalone shard node on it through the pair's
 * multi-host URL (the shard's default JDBC timeouts), and one item; {@code --callers} threads
 * Reserve one unit each, closed loop, in process ({@link LaneEngine#reserve}), each call with a new
 * key. After {@code --before-seconds} the primary's postmaster is killed with SIGKILL and, once
 * every process of it is gone, the standby promoted (what {@link StandbyPair#failover()} does, in
 * its two steps); the callers go on (a failed call is followed by the next after
 * {@value #RETRY_PAUSE_MS} ms) until one call sent after the old primary was gone is
 * acknowledged, or {@code --wait-seconds} pass.
 *
 * <p>Recovery time: from the last RESERVED answer that came before the old primary's last process
 * was gone (a commit there) to the first RESERVED answer of a call sent after that (a commit on the
 * promoted standby). Not from the SIGKILL itself: the postmaster's backends and walsender outlive
 * it by a moment and can still acknowledge commits. Whether every acknowledged hold survived is
 * {@code DatabaseFailoverFaultIT}'s question, not this command's. The last line, for scripts: {@code recovery_ms=<median>}.
 * Exit 0 when every round recovered within the bound, 1 otherwise.
 */
@Command(name = "failover", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Kills the primary under a shard node mid-sale, promotes its synchronous standby, and reports",
                "the time from the last acknowledged Reserve on the old primary to the first on the new.",
                "The last line is 'recovery_ms=<median of the rounds>'."})
public final class FailoverCommand implements Callable<Integer> {
    static final int ROUNDS_MAX = 20;
    static final int CALLERS_MAX = 512;
    static final int SECONDS_MAX = 600;
    /** A caller's pause after a failed call: keeps a dead database from being hammered in a tight loop. */
    static final long RETRY_PAUSE_MS = 10;
    /** The longest one Reserve is waited for. */
    static final long CALL_DEADLINE_SECONDS = 20;
    /** How long the callers get to notice the stop and return, beyond one call's deadline. */
    static final long JOIN_GRACE_SECONDS = 5;
    private static final String TENANT = "bench";
    private static final String ITEM = "failover-item";
    private static final String REGION = "local";
    private static final long UNITS = 1_000_000_000L;
    private static final String DATABASE = "shard";

    @Spec
    CommandSpec spec;

    @Option(names = "--rounds", paramLabel = "N", description = "Failovers, each on a new pair (default ${DEFAULT-VALUE}).")
    int rounds = 3;

    @Option(names = "--callers", paramLabel = "C", description = "Closed-loop callers (default ${DEFAULT-VALUE}).")
    int callers = 64;

    @Option(names = "--before-seconds", paramLabel = "S", description = "Seconds of sale before the kill (default ${DEFAULT-VALUE}).")
    int beforeSeconds = 5;

    @Option(names = "--wait-seconds", paramLabel = "W", description = "Longest wait after the kill for the first acknowledgement (default ${DEFAULT-VALUE}).")
    int waitSeconds = 60;

    /** A time that could not be measured (no ack on that side); printed as "none". */
    static final long NONE = Long.MIN_VALUE;

    /**
     * What one round measured; times in ms, {@link #NONE} where there was nothing to measure
     * (a time from the SIGKILL can be negative: an ack just before it): recovery (last
     * ack on the old primary to first on the new); from the SIGKILL to the last ack on the old one
     * (its backends outlive the postmaster by a moment) and to the first on the new; how long the
     * old primary's processes took to be gone, and the promotion; acks on each side; failed calls.
     */
    record Round(long recoveryMs, long killToLastOldAckMs, long killToFirstNewAckMs, long killMs, long promoteMs,
                 long okOld, long okNew, long failed) {
        boolean recovered() {
            return recoveryMs != NONE;
        }
    }

    @Override
    public Integer call() throws Exception {
        requireBetween("--rounds", rounds, 1, ROUNDS_MAX);
        requireBetween("--callers", callers, 1, CALLERS_MAX);
        requireBetween("--before-seconds", beforeSeconds, 1, SECONDS_MAX);
        requireBetween("--wait-seconds", waitSeconds, 1, SECONDS_MAX);
        PrintWriter out = spec.commandLine().getOut();
        PostgresBinaries binaries = PostgresBinaries.find();
        List<Round> done = new ArrayList<>();
        for (int r = 1; r <= rounds; r++) {
            Round round = round(binaries);
            done.add(round);
            out.printf(Locale.ROOT, "round=%d recovery_ms=%s kill_to_last_old_ack_ms=%s kill_to_first_new_ack_ms=%s"
                            + " kill_ms=%d promote_ms=%d acks_old=%d acks_new=%d failed_calls=%d%n", r, show(round.recoveryMs()),
                    show(round.killToLastOldAckMs()), show(round.killToFirstNewAckMs()), round.killMs(), round.promoteMs(),
                    round.okOld(), round.okNew(), round.failed());
            out.flush();
        }
        long[] recoveries = done.stream().filter(Round::recovered).mapToLong(Round::recoveryMs).sorted().toArray();
        boolean all = recoveries.length == done.size();
        out.printf(Locale.ROOT, "callers=%d rounds=%d recovered=%d recoveries_ms=%s%n", callers, rounds,
                recoveries.length, Arrays.toString(recoveries));
        out.printf(Locale.ROOT, "recovery_ms=%s%n", all ? Long.toString(recoveries[recoveries.length / 2]) : "none");
        out.flush();
        return all ? ExitCodes.OK : ExitCodes.FAILED;
    }

    private Round round(PostgresBinaries binaries) throws Exception {
        try (StandbyPair pair = StandbyPair.start(binaries, ServerSettings.defaults().withFsync(true),
                BaseBackupMethod.SQL_API)) {
            pair.createDatabase(DATABASE);
            ShardProperties p = new ShardProperties();
            p.setId("failover-shard");
            p.setPort(0);
            p.setRegions(List.of(REGION));
            p.setJdbcUrl(pair.multiHostJdbcUrl(DATABASE));
            p.setJdbcUser(PostgresServer.SUPERUSER);
            p.setJdbcPassword("");
            try (ShardNode node = new ShardNode(p.toConfig(), InstantSource.system(), null).start()) {
                LaneEngine engine = node.engine();
                engine.createItem(CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId(ITEM).setTotal(UNITS)
                        .setHomeRegion(REGION).build(), REGION).get(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS);
                return sale(engine, pair);
            }
        }
    }

    private Round sale(LaneEngine engine, StandbyPair pair) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Acks acks = new Acks();
        AtomicLong keys = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < callers; c++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    long sent = System.nanoTime();
                    boolean ok = reserve(engine, keys.incrementAndGet());
                    acks.record(sent, System.nanoTime(), ok);
                    if (!ok) {
                        pause();
                    }
                }
            }, "failover-caller-" + c);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        long kill;
        long gone;
        long promoted;
        try {
            Thread.sleep(TimeUnit.SECONDS.toMillis(beforeSeconds));
            // StandbyPair.failover() in two steps, to know when the old primary's last process was gone.
            kill = System.nanoTime();
            pair.primary().kill9();
            gone = System.nanoTime();
            acks.oldPrimaryGoneAt(gone);
            pair.standby().promote();
            promoted = System.nanoTime();
            long deadline = kill + TimeUnit.SECONDS.toNanos(waitSeconds);
            while (!acks.recovered() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        } finally {
            stop.set(true);
            long joinBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(CALL_DEADLINE_SECONDS + JOIN_GRACE_SECONDS);
            for (Thread t : threads) {
                t.join(Math.max(1, (joinBy - System.nanoTime()) / 1_000_000));
            }
        }
        return acks.round(kill, gone, promoted);
    }

    /**
     * The acknowledgements around one failover, in {@link System#nanoTime()} units. An answer that
     * came before the old primary's last process was gone was committed there; a call sent after
     * that can only have been committed on the new one. (Between the SIGKILL and that moment the
     * old primary's backends still run, and its walsender still streams: commits there can still
     * be acknowledged.) Thread-safe: the callers record at once.
     */
    static final class Acks {
        private final AtomicLong goneAt = new AtomicLong(Long.MAX_VALUE);
        private final AtomicLong lastOld = new AtomicLong(Long.MIN_VALUE);
        private final AtomicLong firstNew = new AtomicLong(Long.MAX_VALUE);
        private final AtomicLong okOld = new AtomicLong();
        private final AtomicLong okNew = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();

        void oldPrimaryGoneAt(long nanos) {
            goneAt.set(nanos);
        }

        /** One call: sent and answered at these times, RESERVED or not. */
        void record(long sent, long answered, boolean ok) {
            long gone = goneAt.get();
            if (!ok) {
                failed.incrementAndGet();
            } else if (answered < gone) {
                okOld.incrementAndGet();
                lastOld.accumulateAndGet(answered, Math::max);
            } else if (sent > gone) {
                okNew.incrementAndGet();
                firstNew.accumulateAndGet(answered, Math::min);
            } // sent before the old primary was gone and answered after: it cannot say where it committed
        }

        /** Whether a call sent after the old primary was gone was acknowledged. */
        boolean recovered() {
            return firstNew.get() != Long.MAX_VALUE;
        }

        /** The round, given when the SIGKILL was sent, the old primary gone and the standby promoted. */
        Round round(long kill, long gone, long promoted) {
            long last = lastOld.get();
            long first = firstNew.get();
            return new Round(last != Long.MIN_VALUE && first != Long.MAX_VALUE ? ms(first - last) : NONE,
                    last == Long.MIN_VALUE ? NONE : ms(last - kill), first == Long.MAX_VALUE ? NONE : ms(first - kill),
                    ms(gone - kill), ms(promoted - gone), okOld.get(), okNew.get(), failed.get());
        }

        private static long ms(long nanos) {
            return Math.floorDiv(nanos, 1_000_000);
        }
    }

    private static String show(long ms) {
        return ms == NONE ? "none" : Long.toString(ms);
    }

    /** One Reserve with a new key; whether it was answered RESERVED within the deadline. */
    private static boolean reserve(LaneEngine engine, long key) {
        try {
            ReserveResponse r = engine.reserve(ReserveRequest.newBuilder().setTenantId(TENANT).setItemId(ITEM)
                    .setQuantity(1).setIdempotencyKey("failover-" + key).setBuyerId("buyer-" + key).setRegion(REGION)
                    .build()).get(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS);
            return r.getOutcome() == ReserveOutcome.RESERVED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception e) {
            return false; // unavailable, unknown outcome, timed out: not an acknowledgement
        }
    }

    private static void pause() {
        try {
            Thread.sleep(RETRY_PAUSE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void requireBetween(String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), option + "=" + value + " must be between " + min + " and " + max);
        }
    }
}
