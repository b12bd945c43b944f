package io.lastunit.admin.cli;

import io.lastunit.admin.move.MoveFaults;
import io.lastunit.admin.move.Mover;
import io.lastunit.admin.move.Moves;
import io.lastunit.admin.move.MoverSettings;
import io.lastunit.admin.move.plan.MovePolicy;
import io.lastunit.api.topology.v1.Move;
import io.lastunit.api.topology.v1.MoveCounts;
import io.lastunit.api.topology.v1.MoveStep;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.common.channel.ShardChannels;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * What the move commands share: {@link Moves} on the admin's ZooKeeper session and channels to the
 * shard nodes (closed together), the text of a move for people, a progress line per recorded step,
 * and the exit code of each outcome. Not thread-safe.
 */
final class MoveCli implements AutoCloseable {
    /** The steps forward, for the progress bar. */
    static final List<MoveStep> FORWARD = List.of(MoveStep.PLANNED, MoveStep.COPYING, MoveStep.CATCHING_UP,
            MoveStep.FENCED, MoveStep.VERIFIED, MoveStep.FLIPPED, MoveStep.CLEANED);

    private final ShardChannels channels;
    private final Moves moves;

    MoveCli(ZooKeeperSession zk, io.lastunit.common.tls.ClientTls shardTls) {
        this.channels = new ShardChannels(new ShardChannels.Dial(shardTls, 64 << 20, false, true), Duration.ofSeconds(2));
        this.moves = new Moves(zk.store(), zk.client(), zk.namespace(), channels, MovePolicy.defaults(),
                MoverSettings.defaults(), InstantSource.system(), MoveFaults.NONE, owner(), 1);
    }

    Moves moves() {
        return moves;
    }

    /** This process, for a move's {@code owner}: {@code cli@host:pid}. */
    static String owner() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "localhost";
        }
        return "cli@" + host + ":" + ProcessHandle.current().pid();
    }

    /** A refusal as the command's error: its reason and message; exit 3 when something could not be reached. */
    static CliError refused(Failure f) {
        String text = f.reason() + ": " + f.getMessage();
        if (f.reason() == Reason.TOPOLOGY_UNAVAILABLE || f.reason() == Reason.SHARD_UNAVAILABLE) {
            return CliError.unreachable(text);
        }
        return f.reason() == Reason.INTERNAL_ERROR ? CliError.failed(text) : CliError.usage(text);
    }

    /** The exit code of a run's outcome: 0 moved, 1 rolled back or halted, 2 another mover has it, 3 stopped. */
    static int exitCode(Mover.Outcome o) {
        switch (o.result()) {
            case CLEANED:
                return ExitCodes.OK;
            case BUSY:
                return ExitCodes.USAGE;
            case STOPPED:
                return ExitCodes.UNREACHABLE;
            default:
                return ExitCodes.FAILED;
        }
    }

    /** One line per recorded step: a bar through the forward steps, the step, and what it has done. */
    static Consumer<Move> progress(PrintWriter out) {
        long t0 = System.nanoTime();
        return m -> {
            out.printf("%-9s %s %-11s %s%n", String.format(Locale.ROOT, "%6.1f s", (System.nanoTime() - t0) / 1e9),
                    bar(m.getStep()), m.getStep(), summary(m));
            out.flush();
        };
    }

    static String bar(MoveStep step) {
        int at = FORWARD.indexOf(step);
        if (step == MoveStep.ABORTING || step == MoveStep.ABORTED) {
            return "[" + "x".repeat(FORWARD.size()) + "]";
        }
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < FORWARD.size(); i++) {
            b.append(i <= at ? '#' : '.');
        }
        return b.append(']').toString();
    }

    /** What a move has done so far, in one line. */
    static String summary(Move m) {
        StringBuilder s = new StringBuilder();
        long rows = rows(m.getCopied());
        if (rows > 0) {
            s.append(rows).append(" rows copied");
        }
        if (m.getCatchUpRounds() > 0) {
            s.append(s.length() > 0 ? ", " : "").append(m.getCatchUpRounds()).append(" catch-up pass")
                    .append(m.getCatchUpRounds() == 1 ? "" : "es").append(", lag ").append(m.getLastDeltaRows())
                    .append(" rows");
        }
        if (m.getPauseMs() > 0 || m.getStep() == MoveStep.CLEANED) {
            s.append(s.length() > 0 ? ", " : "").append("pause ").append(m.getPauseMs()).append(" ms of ")
                    .append(m.getMaxPauseMs());
        }
        if (m.getAbortRequested() && m.getStep() != MoveStep.ABORTED && m.getStep() != MoveStep.ABORTING) {
            s.append(s.length() > 0 ? ", " : "").append("abort requested");
        }
        if ((m.getStep() == MoveStep.ABORTING || m.getStep() == MoveStep.ABORTED) && !m.getReason().isEmpty()) {
            s.append(s.length() > 0 ? "; " : "").append(m.getReason());
        }
        return s.toString();
    }

    static long rows(MoveCounts c) {
        return c.getItems() + c.getBuckets() + c.getHolds() + c.getUsage() + c.getTransfers() + c.getRestocks()
                + c.getRetired() + c.getSeats();
    }

    /** Every field of a move, for {@code moves show}. */
    static void show(PrintWriter out, Move m) {
        out.println("move        " + m.getMoveId());
        out.println("tenant      " + m.getTenantId() + "   " + m.getFromCell() + " -> " + m.getToCell());
        out.println("step        " + m.getStep() + "   " + bar(m.getStep()));
        out.println("max pause   " + m.getMaxPauseMs() + " ms");
        out.println("pause       " + (m.getPauseMs() == 0 && m.getStep() != MoveStep.CLEANED ? "-" : m.getPauseMs() + " ms"));
        MoveCounts c = m.getCopied();
        out.printf("copied      %d items, %d buckets, %d holds, %d usage, %d transfers, %d restocks, %d retired totals, %d seats%n",
                c.getItems(), c.getBuckets(), c.getHolds(), c.getUsage(), c.getTransfers(), c.getRestocks(),
                c.getRetired(), c.getSeats());
        out.println("catch-up    " + m.getCatchUpRounds() + " passes, last " + m.getLastDeltaRows() + " rows");
        out.println("epochs      planned " + m.getPlannedEpoch() + (m.getFencedEpoch() == 0 ? ""
                : ", fenced " + m.getFencedEpoch()));
        out.println("created     " + time(m.getCreatedAtMs()));
        out.println("updated     " + time(m.getUpdatedAtMs()));
        if (m.getFencedAtMs() != 0) {
            out.println("fenced at   " + time(m.getFencedAtMs()));
        }
        if (m.getFlippedAtMs() != 0) {
            out.println("flipped at  " + time(m.getFlippedAtMs()));
        }
        if (m.getFinishedAtMs() != 0) {
            out.println("finished    " + time(m.getFinishedAtMs()));
        }
        if (m.getAbortRequested()) {
            out.println("abort       requested");
        }
        if (!m.getReason().isEmpty()) {
            out.println("reason      " + m.getReason());
        }
        out.println("owner       " + m.getOwner());
    }

    static String time(long ms) {
        return ms == 0 ? "-" : Instant.ofEpochMilli(ms).toString();
    }

    /**
     * A duration like {@code 2s}, {@code 500ms}, {@code 1.5s} or {@code 1m}, in milliseconds.
     *
     * @throws IllegalArgumentException for anything else
     */
    static long parseMillis(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        double factor;
        String number;
        if (t.endsWith("ms")) {
            factor = 1;
            number = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            factor = 1_000;
            number = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            factor = 60_000;
            number = t.substring(0, t.length() - 1);
        } else {
            throw new IllegalArgumentException("'" + text + "' is not a duration like 2s, 500ms or 1.5s");
        }
        try {
            double v = Double.parseDouble(number);
            if (!(v >= 0) || Double.isInfinite(v) || number.isBlank()) {
                throw new NumberFormatException();
            }
            return Math.round(v * factor);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not a duration like 2s, 500ms or 1.5s");
        }
    }

    @Override
    public void close() {
        moves.close();
        channels.close();
    }
}
